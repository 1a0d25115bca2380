"""RefundDesk for standard RL libraries: discrete moves with a mask, numeric observations.

The refund desk speaks text. PPO and its kind want a ``Discrete`` action and a
``Box`` observation. This wrapper gives them both without changing the desk: every
move is the tool call a text agent would send, played by the real
:class:`~.text.RefundDeskEnv` (its episode, desk, log and grader), and the reward is
that environment's (the grader's terminal score). The call goes to the desk's tool
directly, and its result comes back as the tool returned it; ``via_text=True`` sends
it as the JSON text action and reads the text observation instead, the same episode
(a test plays both). The wrapper adds no reward and never sees the case: it knows
only the task text and what the tools answered.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from batchgate_gym.kernel.plain import check_bool, check_int

from ..macro_env import TextMacroEnv, check_whole_observations
from .macro_codec import DESK_MOVES, LINE_MOVES, RefundMacroLayout, RefundMacroTracker
from .text import RefundDeskEnv

MAX_LINES = 20  # the generator's largest order


class RefundMacroEnv(TextMacroEnv):
    """RefundDesk with ``Discrete`` moves over ``lines`` order-line slots.

    **Slots** the ticket order's lines in the order ``lookup_order`` gives them; an
    order with more lines than ``lines`` is an error, unused slots read as zeros.
    ``lines`` is an int from 1 to 20 (default 4, the most any family draws by default).

    **Action space** ``Discrete(4 + 2 * lines)``: ``lookup`` (``lookup_order`` of the
    ticket's order), ``history`` (``refund_history`` of it), ``escalate`` (with a
    fixed reason), ``reply`` (a fixed message; ends the episode); then per line
    ``pay`` (``issue_refund`` of the line's amount on its sku under the key
    ``<order>:<sku>:<amount>``, so the same move twice pays once) and ``repay`` (the
    same payment under a new key, ``...:retry-<n>``: the blind retry that pays
    twice). With ``recovery=True`` each line has a third move, ``void``
    (``void_refund`` of the latest key sent on the line not yet voided): the action
    space is then ``Discrete(4 + 3 * lines)``.
    :class:`~batchgate_gym.envs.refund.macro_codec.RefundMacroLayout` decodes an index.

    **Observation space** ``Box(0, 1, (11 + 9 * lines,), float32)``. First: order
    looked up, history read, history read since the last payment, escalated, any
    payment sent, any payment answered with an error, lines / slots, order total
    above the cap, history rows / slots, a history row in flight, turns used / turn
    limit. Per line: present, amount / (amount + cap), amount above the cap, the
    history shows a row on its sku, that row is in flight, the history shows a
    payment under a key this episode sent, a payment sent, two or more sent, the
    latest answered with an error; with recovery, a tenth: a void was sent on the line
    (the space is then ``(11 + 10 * lines,)``). Which line is owed, and whether to pay,
    escalate or hold, is left to the agent.

    **Reward, termination, truncation** exactly the text environment's: 0 until the
    reply, then the weighted score; at the turn limit the episode is truncated and
    the log is graded as it stands. ``reset`` sends the opening action (look the
    order up), which takes the first of the text environment's turns.

    **Action mask** ``info["action_mask"]`` and :meth:`action_masks`, an ``np.int8``
    array with 1 for an allowed move (the dtype ``Discrete.sample(mask=...)``,
    PettingZoo and sb3-contrib's ``MaskablePPO`` take): see
    :meth:`~batchgate_gym.envs.refund.macro_codec.RefundMacroTracker.mask`. Paying a
    line the history shows paid stays allowed: that is the desk's trap, not a rule.
    A masked move is still legal: it is sent as is (a move on an empty line slot
    sends an empty action, which the text environment refuses) and costs a turn.

    **Info** the text environment's info plus ``action_mask``, ``text_action`` (the text
    action the move stands for, sent as such with ``via_text``) and, on reset, ``turn``.

    **Arguments** ``cases``, ``lines``, ``via_text`` (``False``: calls go to the desk's
    tools; ``True``: as text actions, parsed, their observations read back: the same
    episodes, slower), ``render_mode`` and every other keyword of
    :class:`~batchgate_gym.envs.refund.text.RefundDeskEnv` (``rules``, ``hints``, ``recovery``,
    limits, ``log_key``), with its bounds. The wrapper reads every text observation whole,
    so ``max_observation_chars`` may not go below 65,536, and ``max_turns`` must be
    at least 2 (the opening takes one). One ticket an episode: ``tickets`` is 1, and
    a case holding a queue of tickets is refused at reset.
    """

    tracker: RefundMacroTracker

    def __init__(
        self,
        cases: Any = None,
        *,
        lines: int = 4,
        via_text: bool = False,
        render_mode: str | None = None,
        **text_kwargs: Any,
    ):
        lines = check_int("lines", lines, 1, MAX_LINES)
        self.via_text = check_bool("via_text", via_text)
        check_whole_observations(text_kwargs)
        check_int("tickets", text_kwargs.get("tickets", 1), 1, 1, "1: the moves play one ticket an episode")
        self.text_env = RefundDeskEnv(cases, render_mode=render_mode, **text_kwargs)
        self.check_opening_turn()
        self.render_mode = render_mode
        self.layout = RefundMacroLayout(lines, recovery=bool(text_kwargs.get("recovery", False)))
        self.action_space = gym.spaces.Discrete(self.layout.n_actions)
        self.observation_space = gym.spaces.Box(0.0, 1.0, (self.layout.n_features,), np.float32)
        self.tracker = RefundMacroTracker(self.layout)

    def new_tracker(self, task: str) -> RefundMacroTracker:
        tracker = RefundMacroTracker(self.layout)
        tracker.start(task)
        return tracker

    def describe(self, action: int) -> str:
        """A move in words, e.g. ``line 1: pay`` or ``history``."""
        line, move = self.layout.decode(int(action))
        return move if line < 0 else f"line {line}: {move}"


__all__ = [
    "DESK_MOVES",
    "LINE_MOVES",
    "MAX_LINES",
    "RefundMacroEnv",
    "RefundMacroLayout",
    "RefundMacroTracker",
]
