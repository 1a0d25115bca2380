"""``batchgate verify``: every check :func:`.results.load_results` makes with a trusted key,
on one file, each row's failure named rather than the first one stopping the rest."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from batchgate_gym.desks import registry
from batchgate_gym.kernel.certificate import TrustedKey

from .results import ResultsError, ResultsReader, RunRecord, read_rows


@dataclass
class FileVerdict:
    """What ``batchgate verify`` found in one results file."""

    path: Path
    rows: int = 0
    verified: int = 0
    planned: int | None = None
    missing: int = 0
    problems: list[str] = field(default_factory=list)
    served: bool = False  # episodes a server signed one by one: no run to be complete

    @property
    def ok(self) -> bool:
        """Every row verified, and every rollout the signed manifest planned is there."""
        complete = self.served or (self.planned is not None and not self.missing)
        return not self.problems and self.rows > 0 and complete

    def line(self) -> str:
        verdict = "verified" if self.ok else "NOT verified"
        if self.served:
            planned = "episodes of a server, signed one by one"
        elif self.planned is None:
            planned = "no signed manifest"
        else:
            planned = f"{self.planned - self.missing} of {self.planned} planned rollouts there"
        return f"{self.path}: {verdict}: {self.verified} of {self.rows} rows verify; {planned}"


def verify_file(path: Path, key: TrustedKey) -> FileVerdict:
    """Check ``path`` row by row against ``key`` (see :mod:`batchgate_gym.app.verify`)."""
    verdict = FileVerdict(path)
    notices: list[str] = []
    try:
        rows = read_rows(path, notices)
    except (ResultsError, OSError, UnicodeDecodeError) as exc:
        verdict.problems.append(f"{path}: {exc}")
        return verdict
    verdict.problems += notices
    verdict.rows = len(rows)
    if not rows:
        verdict.problems.append(f"{path}: no rows")
        return verdict
    desk = str(rows[0][1].get("desk"))
    if desk not in registry.names():
        verdict.problems.append(f"{path}:{rows[0][0]}: a row of an unknown desk {desk!r}")
        return verdict
    loader = ResultsReader(desk, key, notices=[])
    run = RunRecord.read(path)
    try:
        loader.check_signed_manifest(run)
        loader.check_selection(run)
    except ResultsError as exc:
        verdict.problems.append(str(exc))
        run = RunRecord(path, None, {})
    for number, row in rows:
        try:
            loader.read_row(row, f"{path}:{number}", run)
        except ResultsError as exc:
            verdict.problems.append(str(exc))
        else:
            verdict.verified += 1
    if run.manifest is not None:
        for model in {str(row.get("model")) for _, row in rows}:
            loader.runs.setdefault(model, []).append(run)
        try:
            found = loader.results("keep")
        except ResultsError as exc:
            verdict.problems.append(str(exc))
        else:
            verdict.planned = (
                sum(m.planned or 0 for m in found.values())
                or len(run.manifest["case_ids"]) * run.manifest["rollouts"]
            )
            verdict.missing = sum(len(m.missing) for m in found.values())
            for results in found.values():
                for case_id, rollout in results.missing[:10]:
                    verdict.problems.append(
                        f"{path}: rollout {rollout} of {case_id!r} is planned but missing"
                    )
    return verdict


__all__ = ["FileVerdict", "verify_file"]
