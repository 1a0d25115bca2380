"""BadBatchGate: gate a nightly warehouse load.

Batches of rows wait in staging; the agent inspects them (read-only SQL, column
profiles), loads or quarantines each with a citation, and reports. The loader
accepts anything, so a bad batch silently becomes a wrong revenue number.

The modules, one reason to change each:

* :mod:`.contract` the data contract (rules, window, defect types);
* :mod:`.cases` case types and the JSONL format, checked field by field;
* :mod:`.sources` where a reset's case comes from (splits, files, procedural);
* :mod:`.world` the episode's SQLite warehouse and the seven tools' behaviour;
* :mod:`.tools` the tools' names, parameters and help; :mod:`.prompt` the task text;
* :mod:`.profile` column profiles; :mod:`.rules_sql` the contract's rules as SQL;
* :mod:`.grader` the score from log and warehouse; :mod:`.replay` live scoring and
  replay from a case and a log;
* :mod:`.generator` the eight case families and the committed splits (``data/``);
* :mod:`.team` the shared warehouse of the multi-agent game;
* :mod:`.testing` hypothesis strategies for fuzzing (public as ``batchgate_gym.testing``).

Three modules read the contract, each for a different reader and on purpose
independently, so that one cannot hide another's mistake: :mod:`.rules_sql` (the
rules as SQL, what a checking agent runs), ``batchgate_gym.policies.gate.rules_from_profile``
(what a profile alone can show) and :mod:`.generator.audit` (the generator's own
check that every planted defect breaks exactly the rules its truth records).
"""

# The Gymnasium ids this desk's environments go by, and their entry points, named
# by string so that registering them loads no environment code.
from batchgate_gym.kernel.episode import EpisodeLimits

TURNS = EpisodeLimits().max_turns  # the gate's turn budget: the kernel's default
ENV_ID = "batchgate_gym/BadBatchGate-v0"
MACRO_ENV_ID = "batchgate_gym/BadBatchGateMacro-v0"
GYMNASIUM_IDS = {
    ENV_ID: "batchgate_gym.envs.gate.text:BatchGateEnv",
    MACRO_ENV_ID: "batchgate_gym.envs.gate.macro:GateMacroEnv",
}
# Steps an episode of each id may take with the default arguments, for Gymnasium's spec and
# TimeLimit: the turn budget (a macro episode's opening calls take its first turn). An
# environment made with other limits reports its own (``TextDeskEnv.spec``).
MAX_EPISODE_STEPS = {ENV_ID: TURNS, MACRO_ENV_ID: TURNS - 1}
