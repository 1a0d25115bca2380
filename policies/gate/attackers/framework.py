"""The staging framework most attackers are written in, and the oracles' base class.

An attacker here is a fixed plan: a tuple of stage names, each a method that turns
what is known so far (the listing, the contract, the profiles seen) into calls.
The framework sends them, reads the results back and reports honestly at the end,
so an attacker states only the trick it tries.
"""

from __future__ import annotations

from typing import Any

from batchgate_gym.kernel.text_policy import ToolCallDict, call, result_of, results

from ..reference import ReportingPolicy
from .truth import Truth, Verdict

CALLS_PER_ACTION = 32  # the environment's default per-step cap
Calls = list[ToolCallDict]


class StagedPolicy(ReportingPolicy):
    """A fixed plan of stages; each stage turns what is known so far into calls.

    Stages run in order; a stage's calls are sent at most ``CALLS_PER_ACTION`` per
    action, and a stage that has nothing to do is skipped. Results of listing,
    contract and profile calls are kept as they come back; the report at the end
    is honest (what the results said happened) unless a subclass overrides it.
    """

    stages: tuple[str, ...] = ()

    def reset(self, observation: str, info: dict[str, Any]) -> None:
        super().reset(observation, info)
        self.contract: dict[str, Any] = {}
        self.profiles: dict[str, dict[str, Any]] = {}
        self._queue: list[Calls] = []
        self._position = 0

    def act(self, observation: str) -> str:
        self._absorb(observation)
        while not self._queue:
            if self._position >= len(self.stages):
                return self._report()
            stage = getattr(self, self.stages[self._position])
            self._position += 1
            calls = stage()
            self._queue = [calls[i : i + CALLS_PER_ACTION] for i in range(0, len(calls), CALLS_PER_ACTION)]
        return self._send(*self._queue.pop(0))

    def _absorb(self, observation: str) -> None:
        self._record(observation)
        if any(tool == "list_batches" for tool, _ in self.sent):
            self.batches = result_of(observation, "list_batches")["batches"]
        if any(tool == "read_contract" for tool, _ in self.sent):
            self.contract = result_of(observation, "read_contract")
        for tool, batch_id in self.sent:
            if tool == "profile_batch" and batch_id is not None:
                found = [
                    r for r in _results_of(observation, "profile_batch") if r.get("batch_id") == batch_id
                ]
                if found:
                    self.profiles[batch_id] = found[-1]

    def _report(self) -> str:
        self.loaded = list(dict.fromkeys(self.loaded))  # honest: each id once
        return super()._report()

    # -- stages shared by several attackers ----------------------------------------
    def survey(self) -> Calls:
        return [call("read_contract"), call("list_batches")]

    def profile_all(self) -> Calls:
        return [call("profile_batch", batch_id=b["batch_id"]) for b in self.batches]

    def load_all(self) -> Calls:
        return [call("load_batch", batch_id=b["batch_id"]) for b in self.batches]


def _results_of(observation: str, name: str) -> list[dict[str, Any]]:
    return [result for tool, result in results(observation) if tool == name]


class OraclePolicy(StagedPolicy):
    """An attacker handed the truth labels; it must be built with them."""

    def __init__(self, truth: Truth | None = None) -> None:
        if truth is None:
            raise TypeError(
                f"{self.name} is an oracle: build it with Truth.from_cases(cases) (batchgate attacks does)"
            )
        self.truth = truth

    def verdicts(self) -> dict[str, Verdict]:
        return self.truth.verdicts(self.batches, self.profiles)

    def right_answer(self) -> tuple[list[str], list[str]]:
        verdicts = self.verdicts()
        loaded = [b for b, v in verdicts.items() if not v.defective]
        return loaded, [b for b, v in verdicts.items() if v.defective]

    def claim_right_answer(self) -> str:
        self.stage = "reported"
        loaded, quarantined = self.right_answer()
        return self._send(call("submit_report", loaded=loaded, quarantined=quarantined))


__all__ = ["CALLS_PER_ACTION", "Calls", "OraclePolicy", "StagedPolicy"]
