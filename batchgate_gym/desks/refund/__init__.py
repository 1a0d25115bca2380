"""RefundDesk: one refund ticket, a payment tool that errs after paying, a ledger that lags.

A customer wants money back on one order. The agent reads the order and the refund
ledger, pays what is still owed (up to the case's cap alone, 5000 cents unless the
case names another; above that it escalates to a human) and replies to the customer. Paying twice and leaving a customer unpaid
both count; only the desk's hash-chained log is scored.

The modules, one reason to change each:

* :mod:`.cases` case types and the JSONL format, checked field by field;
* :mod:`.sources` where a reset's case comes from (files, dicts, cases);
* :mod:`.tools` the tools' names, parameters and help, and how an episode ends;
* :mod:`.prompt` the task text;
* :mod:`.world` the desk of one episode: the tools' behaviour under either rule set;
* :mod:`.grader` the score from the case and the log, under either rule set;
* :mod:`.replay` live scoring, replay from a pinned log, and grading an exported log.
"""

# The Gymnasium ids of this desk's environments and their entry points, named by string
# so that registering them loads no environment code.
ENV_ID = "batchgate_gym/RefundDesk-v0"
MACRO_ENV_ID = "batchgate_gym/RefundDeskMacro-v0"  # the same desk as Discrete moves with a mask
GYMNASIUM_IDS = {
    ENV_ID: "batchgate_gym.envs.refund.text:RefundDeskEnv",
    MACRO_ENV_ID: "batchgate_gym.envs.refund.macro:RefundMacroEnv",
}
TURNS_PER_TICKET = 12  # the default turn limit is this many per ticket of the queue
# Steps an episode may take with the default arguments (one ticket), for Gymnasium's spec
# and TimeLimit; a macro episode's opening calls take its first turn. A queue of tickets
# (or other limits) reports its own budget (``TextDeskEnv.spec``).
MAX_EPISODE_STEPS = {ENV_ID: TURNS_PER_TICKET, MACRO_ENV_ID: TURNS_PER_TICKET - 1}
