"""What every desk's hypothesis tests share: the state machine's loop, the settings
profiles and the tampered logs every verifier must refuse.

A desk's machine (in its ``testing`` module) subclasses :class:`EpisodeMachine`, draws a
case in its own ``@initialize`` rule and hands it to :meth:`EpisodeMachine.begin` with
the strategy its actions are drawn from; it says how its environment is made
(:meth:`~EpisodeMachine.make_env`) and what must hold when an episode ends
(:meth:`~EpisodeMachine.check_episode`). This base sends drawn actions, resets with the
next seed when an episode ends, checks after every step that the reward is in range and
paid only at the end, and closes the environment when the run is over.
:func:`as_strategy` takes a strategy's knob given as a value or as a strategy.
:func:`register_profiles` registers the ``ci`` (bounded, derandomized) and ``long``
(10,000 examples per property) settings profiles. :func:`tampered_logs` draws one
change to an exported log (an entry edited, deleted, duplicated or swapped, the log
cut, an edit or a cut re-chained as a forger without the key would), whatever the
desk that wrote it; :func:`rechained` and :func:`changed_value` are its parts. It
needs hypothesis (the ``test`` extra), as every ``testing`` module does.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from .ledger import rechain


def as_strategy(value: Any) -> st.SearchStrategy[Any]:
    """``value`` drawn as it is, or the strategy it already is (a knob given as either)."""
    return value if isinstance(value, st.SearchStrategy) else st.just(value)


LONG_EXAMPLES = 10_000


def register_profiles() -> None:
    """Register ``ci`` and ``long`` and load ``ci`` (or ``$BATCHGATE_HYPOTHESIS_PROFILE``).

    ``pytest --hypothesis-profile=long`` then overrides the choice, because the
    hypothesis plugin loads its profile after conftest files are imported.
    """
    common: dict[str, Any] = {
        "deadline": None,
        "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large],
    }
    settings.register_profile(
        "ci", max_examples=40, stateful_step_count=25, derandomize=True, database=None, **common
    )
    settings.register_profile("long", max_examples=LONG_EXAMPLES, print_blob=True, **common)
    settings.load_profile(os.environ.get("BATCHGATE_HYPOTHESIS_PROFILE", "ci"))


# -- logs -----------------------------------------------------------------------------------
TAMPER_KINDS = ("edit", "delete", "duplicate", "swap", "truncate", "rechain", "recut")
_CONTENT_FIELDS = ("action", "args", "executed", "note")


def rechained(log: list[dict[str, Any]], key: bytes | None = None) -> list[dict[str, Any]]:
    """Renumber and recompute every link and hash, as a forger without the log key would."""
    return rechain(log, key)


def changed_value(value: Any) -> Any:
    """A different value of the same JSON kind."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    if isinstance(value, str):
        return value + "x"
    if isinstance(value, list):
        return [*value, "x"]
    return {**value, "extra": 1}


def tampered_logs(log: Sequence[dict[str, Any]]) -> st.SearchStrategy[tuple[str, list[dict[str, Any]]]]:
    """One change to an exported log: ``(kind, changed copy)``, never equal to ``log``.

    Kinds: a field of one entry (or of its arguments) edited; an entry deleted,
    duplicated or swapped with the next; the log cut short; an edit re-chained from
    scratch; a cut re-sealed and re-chained. A verifier must refuse every one.
    """
    genuine = json.loads(json.dumps(list(log)))

    @st.composite
    def draw(draw_: st.DrawFn) -> tuple[str, list[dict[str, Any]]]:
        kind = draw_(st.sampled_from(TAMPER_KINDS if len(genuine) > 1 else ("edit", "truncate")))
        out = json.loads(json.dumps(genuine))
        at = draw_(st.integers(0, len(out) - 1))
        if kind in ("edit", "rechain"):
            target = out[at]
            if target["args"] and draw_(st.booleans()):
                target = target["args"]
            # Re-chaining rewrites seq and the hashes, so only a change of content survives it.
            names = sorted(target if kind == "edit" or target is not out[at] else _CONTENT_FIELDS)
            name = draw_(st.sampled_from(names))
            target[name] = changed_value(target[name])
            if kind == "rechain":
                rechained(out)
        elif kind == "delete":
            del out[at]
        elif kind == "duplicate":
            out.insert(at, json.loads(json.dumps(out[at])))
        elif kind == "swap":
            at = min(at, len(out) - 2)
            out[at], out[at + 1] = out[at + 1], out[at]
        elif kind == "truncate":
            out = out[:at]
        else:  # recut: drop one entry before the seal, make the seal count what is left
            del out[min(at, len(out) - 2)]
            out[-1]["args"]["entries"] = len(out) - 1
            rechained(out)
        return kind, out

    return draw()


# -- the state machine ---------------------------------------------------------------------
class EpisodeMachine(RuleBasedStateMachine):
    """Random play against one environment over one drawn case, episode after episode.

    After :meth:`begin`: ``case``, ``env``, ``episodes`` (ended so far; the next reset's
    seed), ``observation``, ``info``, ``reward`` and ``over`` (the episode has ended).
    """

    min_reward = 0.0  # the range every step's reward lies in
    max_reward = 1.0

    def make_env(self, case: Any) -> Any:
        """The environment the machine plays ``case`` on."""
        raise NotImplementedError

    def check_episode(self, terminated: bool) -> None:
        """What must hold when an episode ends (``info`` holds its last step's)."""
        raise NotImplementedError

    def begin(self, case: Any, any_action: st.SearchStrategy[str]) -> None:
        """Start on ``case``, drawing actions from ``any_action`` (the subclass's ``@initialize`` calls it)."""
        self.case = case
        self.any_action = any_action
        self.env = self.make_env(case)
        self.episodes = 0
        self.reset_env()

    def reset_env(self) -> None:
        self.observation, self.info = self.env.reset(seed=self.episodes)
        self.reward, self.over = 0.0, False

    def step_env(self, action: str) -> None:
        self.observation, self.reward, terminated, truncated, self.info = self.env.step(action)
        self.over = terminated or truncated
        if self.over:
            self.check_episode(terminated)

    @precondition(lambda self: not self.over)
    @rule(data=st.data())
    def send_action(self, data: st.DataObject) -> None:
        self.step_env(data.draw(self.any_action))

    @precondition(lambda self: self.over)
    @rule()
    def start_again(self) -> None:
        self.episodes += 1
        self.reset_env()

    @invariant()
    def reward_is_in_range_and_terminal(self) -> None:
        if hasattr(self, "env"):
            assert self.min_reward <= self.reward <= self.max_reward
            assert self.over or self.reward == 0.0

    def teardown(self) -> None:
        if hasattr(self, "env"):
            self.env.close()


__all__ = [
    "LONG_EXAMPLES",
    "TAMPER_KINDS",
    "EpisodeMachine",
    "as_strategy",
    "changed_value",
    "rechained",
    "register_profiles",
    "tampered_logs",
]
