"""The part every desk's hypothesis state machine shares: play, start again, check, close.

A desk's machine (in its ``testing`` module) subclasses :class:`EpisodeMachine`, draws a
case in its own ``@initialize`` rule and hands it to :meth:`EpisodeMachine.begin` with
the strategy its actions are drawn from; it says how its environment is made
(:meth:`~EpisodeMachine.make_env`) and what must hold when an episode ends
(:meth:`~EpisodeMachine.check_episode`). This base sends drawn actions, resets with the
next seed when an episode ends, checks after every step that the reward is in range and
paid only at the end, and closes the environment when the run is over.
:func:`as_strategy` takes a strategy's knob given as a value or as a strategy. It
needs hypothesis (the ``test`` extra), as every ``testing`` module does.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule


def as_strategy(value: Any) -> st.SearchStrategy[Any]:
    """``value`` drawn as it is, or the strategy it already is (a knob given as either)."""
    return value if isinstance(value, st.SearchStrategy) else st.just(value)


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


__all__ = ["EpisodeMachine", "as_strategy"]
