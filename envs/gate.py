"""BadBatchGate as a Gymnasium environment with text actions and observations."""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

import gymnasium as gym

from batchgate_gym.desks.gate.generator.build import KNOB_DEFAULTS, check_knobs
from batchgate_gym.desks.gate.prompt import task_text
from batchgate_gym.desks.gate.replay import score_live
from batchgate_gym.desks.gate.sources import CaseSource, case_source
from batchgate_gym.desks.gate.tools import GATE_ENDING
from batchgate_gym.desks.gate.world import GateWorld
from batchgate_gym.kernel.codec import OBSERVATION_CHARSET, cut
from batchgate_gym.kernel.episode import Episode, EpisodeLimits
from batchgate_gym.kernel.sqlguard import SqlBudget

from .spaces import AsciiText

ACTION_MAX_CHARS = 32_768


class BatchGateEnv(gym.Env[str, str]):
    """Gate a nightly warehouse load: inspect staged batches, load or quarantine, report.

    **Action space** ``Text(max_length=32768)`` over printable ASCII plus tab and
    newline. An action is a string of one or more tool calls, in call syntax
    (``load_batch("B-1")``) or JSON (``{"name": ..., "arguments": {...}}`` or a
    list of those). Any ``str`` is accepted: a malformed action (unknown tool, bad
    arguments, unparsable text, over 65,536 characters) yields an error
    observation that shows the accepted syntax, and is logged as a refused call.

    **Observation space** ``Text(max_length=max_observation_chars)``, same charset
    (other characters arrive escaped). After ``reset`` it is the whole task: the
    brief, the seven tools with signatures, the action syntax and the case prompt.
    After ``step`` it is ``turn t of T`` followed by each call and its JSON result.
    Every observation, the reset one included, holds at most
    ``max_observation_chars`` characters: a longer one keeps its head and ends in
    a marker giving the number of characters dropped.

    **Reward** 0 on every step except the one that submits the report: that step
    terminates the episode and pays the weighted score
    ``0.50 disposition + 0.20 report + 0.15 evidence + 0.15 inspected`` (in [0, 1]),
    recomputed from the warehouse and the environment's hash-chained log.

    **Termination** on ``submit_report``. **Truncation** after ``max_turns`` steps
    without a report, with reward 0 (no report, no credit).

    **Info** a fresh dict each call: ``turn`` and ``calls`` (calls run this step).
    Nothing about the truth or the case family appears before the end; the last
    step adds ``case_id``, ``family``, ``score`` (reward, the four terms,
    ``bad_batches_loaded``, ``revenue_error_usd``), ``log_intact``,
    ``log_entries`` and ``log_head`` (the log's last hash, to pin it on replay).

    **Arguments**
    ``cases``: ``None`` (default: a fresh procedural case per reset, from the eight
    families), a JSONL path, a list of case dicts or :class:`Case` objects, or any
    case source; ``split``: ``"eval"`` (32 cases) or ``"train"`` (320). Scale knobs
    for procedural cases: ``family``, ``variant``, ``rows_per_batch`` (a number or
    a ``(low, high)`` pair; default ``(3, 20)``), ``batches`` (per case, default 2)
    and ``defects_per_batch`` (default 1). ``max_turns`` (30),
    ``max_calls_per_step`` (32), ``max_observation_chars`` (65,536), ``sql_budget``,
    ``log_key`` (bytes: the log is chained with HMAC-SHA256 under this key, so that
    only its holder can produce a log that replays) and ``render_mode`` (``"ansi"``:
    :meth:`render` returns the transcript).

    **Bounds** checked before anything is built (a ``ValueError`` names the
    argument and its bound): ``rows_per_batch`` an int or a ``(low, high)`` pair of
    ints, ``1 <= low <= high <= 100_000``; ``batches`` 2 to 12; ``defects_per_batch``
    1 to 9 (a customers batch carries at most its table's 5); ``family`` ``None`` or
    one of the eight family names; ``variant`` ``None`` or, with ``family`` only, 0
    to ``variants(family) - 1``; ``case_seed`` an int in ``[-2**63, 2**63)``;
    ``max_turns`` 1 to 10,000; ``max_calls_per_step`` 1 to 1,000;
    ``max_observation_chars`` 256 to 1,048,576. Booleans are not accepted as ints.
    The same check applies to the knobs given as reset options.

    ``reset(seed=..., options=...)`` picks a case: for fixed cases
    ``{"case_id": ...}`` or ``{"case_index": ...}``; for procedural ones any scale
    knob above or ``{"case_seed": ...}``. Without options the case is drawn with
    ``self.np_random``, so the same seed gives the same case in any process.
    """

    metadata = {"render_modes": ["ansi"], "render_fps": 1}

    def __init__(
        self,
        cases: str | os.PathLike[str] | Iterable[Any] | CaseSource | None = None,
        *,
        split: str | None = None,
        family: str | None = None,
        variant: int | None = None,
        rows_per_batch: int | tuple[int, int] = (3, 20),
        batches: int = 2,
        defects_per_batch: int = 1,
        max_turns: int = 30,
        max_calls_per_step: int = 32,
        max_observation_chars: int = 65_536,
        sql_budget: SqlBudget | None = None,
        log_key: bytes | None = None,
        render_mode: str | None = None,
    ) -> None:
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']}")
        # Every argument is checked before anything is built or read.
        self.limits = EpisodeLimits(max_turns, max_calls_per_step, max_observation_chars)
        knobs = check_knobs(
            family=family,
            variant=variant,
            rows_per_batch=rows_per_batch,
            batches=batches,
            defects_per_batch=defects_per_batch,
        )
        self.render_mode = render_mode
        if split is not None:
            if cases is not None:
                raise ValueError("give cases= or split=, not both")
            cases = split
        procedural_only = {k: v for k, v in knobs.items() if v != KNOB_DEFAULTS[k]}
        self.source = case_source(cases, **(knobs if cases is None else procedural_only))
        self.world = GateWorld(sql_budget, log_key)
        self.episode: Episode | None = None
        self.action_space = AsciiText(ACTION_MAX_CHARS, min_length=0, charset=OBSERVATION_CHARSET)
        self.observation_space = AsciiText(
            self.limits.max_observation_chars, min_length=0, charset=OBSERVATION_CHARSET
        )
        self._transcript: list[str] = []

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        super().reset(seed=seed)
        case = self.source.pick(self.np_random, options or {})
        self.world.reset(case)
        self.episode = Episode(self.world, self.limits, GATE_ENDING)
        observation = cut(task_text(case, self.limits.max_turns), self.limits.max_observation_chars)
        if self.render_mode == "ansi":
            self._transcript = [observation]
        return observation, {"turn": 0, "calls": 0}

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        if self.episode is None:
            raise RuntimeError("call reset() before step()")
        outcome = self.episode.step(action)
        info: dict[str, Any] = {"turn": self.episode.turn, "calls": outcome.calls}
        reward = 0.0
        if outcome.terminated or outcome.truncated:
            info.update(self.final_info(score_live(self.world)))
            reward = info["score"]["reward"]  # the exact reward, converted once
        if self.render_mode == "ansi":
            shown = action if isinstance(action, str) else repr(action)
            self._transcript.append(f"ACTION:\n{shown}\n{outcome.observation}")
        return outcome.observation, reward, outcome.terminated, outcome.truncated, info

    def final_info(self, score) -> dict[str, Any]:
        case = self.world.case
        return {
            "case_id": case.case_id,
            "family": case.family,
            "batches": len(case.batches),
            "defective_batches": case.n_defective,
            "score": score.as_dict(),
            "log_intact": self.world.ledger.intact(),
            "log_entries": len(self.world.ledger),
            "log_head": self.world.ledger.head,
        }

    def export_log(self) -> list[dict[str, Any]]:
        """The episode's hash-chained log as plain dicts (for replay and audit)."""
        return self.world.ledger.export()

    def render(self) -> str | None:
        if self.render_mode == "ansi":
            return "\n\n".join(self._transcript)
        return None

    def close(self) -> None:
        self.world.conn.close()
        super().close()
