"""Result files of ``batchgate run-model``: read, held to their run, checked and re-graded.

A results file is JSONL, one row per rollout (:data:`.runner.ROW_FIELDS`). Nothing
in a row is taken on trust: :func:`load_results` re-grades every scored row from
its saved log alone, with the desk's ``replay`` and the row's pinned ``head``, on
the case the row names, and refuses (:class:`ResultsError`, naming the file and
line) a row whose log or head was edited, whose score is not what its log replays
to, or that is not a row of this desk. A last line without its newline (a run
killed while writing) is left out and named in a notice, as the next run of
``run-model`` drops it.

Each file is held to its run's manifest (``FILE.meta.json``, :mod:`.certified`): a
row outside it, a (case, rollout) twice, one episode written as two rollouts, a row
played on another source than its digest names, a selection that does not pick the
cases it names, or an infra error without its sealed log is refused; what the
manifest planned and the files lack is counted (:data:`INCOMPLETE` says what to do
with it). Given a trusted public key, every row and manifest must carry its
certificate. :class:`ResultsReader` does all this file by file and row by row.

A model's figures are one experiment's: every scored row of a model must have been
played under the same settings, those its verified log's first entry records (the
desk's rules, hints, recovery), the same system message (the brief, or one
that replaced it) and the same mode; rows of one model under two settings are refused
(:class:`ResultsError`), and a model whose rows were not played under the desk's
defaults says so in every table (``settings``), since a lenient rule set or a hint
in the brief raises a score that its mean alone would not show. The figures
themselves are :mod:`.summary`'s.
"""

from __future__ import annotations

import functools
import importlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from batchgate_gym.desks import registry
from batchgate_gym.desks.registry import DEFAULT_DESK, DeskSpec
from batchgate_gym.kernel.certificate import CertificateError, TrustedKey
from batchgate_gym.kernel.infra import InfraFailure
from batchgate_gym.kernel.ledger import LogIntegrityError

from . import certified
from .chat import DEFAULT_MODE


class ResultsError(ValueError):
    """A results file that cannot be read or a row that does not re-grade; names the file and line."""


def read_rows(path: Path | str, notices: list[str] | None = None) -> list[tuple[int, dict[str, Any]]]:
    """``(line number, row)`` for every complete line; a last line cut short is left out,
    and named in ``notices`` when given."""
    path = Path(path)
    text = path.read_text(encoding="utf-8")
    lines = text.split("\n")
    complete = lines[:-1]  # after the last newline: "" or a line cut short
    if lines[-1].strip() and notices is not None:
        notices.append(
            f"{path}:{len(lines)}: the last line is cut short (a run stopped while writing it?) and is"
            " left out; the same run-model command plays that rollout again"
        )
    rows = []
    for number, line in enumerate(complete, start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ResultsError(f"{path}:{number}: not a JSON row ({exc.msg})") from exc
        if not isinstance(row, dict):
            raise ResultsError(f"{path}:{number}: a row is a JSON object")
        rows.append((number, row))
    return rows


def trim_partial_line(path: Path) -> None:
    """Drop a last line without its newline (what a killed writer leaves), so appending starts clean."""
    if not path.exists():
        return
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        path.write_bytes(data[: data.rfind(b"\n") + 1])


def desk_module(desk: str, name: str) -> Any:
    """``batchgate_gym.desks.<desk>.<name>``: every desk keeps its tools and replay there."""
    return importlib.import_module(f"batchgate_gym.desks.{desk}.{name}")


def desk_tools(desk: str) -> list[dict[str, Any]]:
    """The desk's tools in OpenAI function format."""
    return list(desk_module(desk, "tools").tool_schemas())


@dataclass
class Rollout:
    """One (case, rollout) of a model: its re-graded episode fields, or the infra error it ended with."""

    case_id: str
    family: str
    rollout: int
    episode: dict[str, Any] | None  # desk.scoring.episode_fields of the re-graded score
    error: dict[str, Any] | None
    where: str
    case_index: int = 0
    ended: str = "finished"  # how a scored rollout ended (runner.ENDINGS); "infra" for an error
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float | None = None  # wall clock: reported, never scored
    settings: str = ""  # how the row was played where it differs from the desk's defaults ("": it does not)
    nonce: str | None = None  # its log's nonce: one episode, one row
    source: str = ""  # the split or case file it was played on

    @property
    def perfect(self) -> bool:
        """Scored, with every term 1."""
        return self.episode is not None and all(value == 1.0 for value in self.episode["terms"].values())


@dataclass
class ModelResults:
    model: str
    rollouts: list[Rollout] = field(default_factory=list)
    settings: str = ""  # what its scored rows were played under, where not the desk's defaults
    source: str = ""  # the split or case file its runs played
    source_kind: str = ""  # "split" (shipped with the package) or "file"; "" without a manifest
    source_digest: str = ""
    source_cases: int | None = None  # how many cases the source holds
    selection: str = ""  # how its runs picked their cases
    planned: int | None = None  # rollouts its runs' manifests planned (None: no manifest)
    missing: list[tuple[str, int]] = field(default_factory=list)  # planned (case, rollout) not in the files
    certificate: str = "unsigned"  # or "verified: key ..." (report --trust)
    run_note: str = ""  # what is wrong with the run's record, if anything

    @property
    def scored(self) -> list[Rollout]:
        return [r for r in self.rollouts if r.episode is not None]

    @property
    def infra_errors(self) -> int:
        return sum(1 for r in self.rollouts if r.episode is None)


class _Cases:
    """The desk's cases by source (split name or case file), then by id, loaded once each."""

    def __init__(self, desk: DeskSpec) -> None:
        self.desk = desk
        self._by_source: dict[str, dict[str, Any]] = {}
        self._digests: dict[str, str] = {}

    def _load(self, source: str) -> None:
        if source not in self._by_source:
            try:
                cases = self.desk.fixed_cases(source or None)
            except registry.CaseSourceError as exc:
                raise ResultsError(
                    f"the rows name the source {source!r}, which cannot be read: {exc}"
                ) from None
            self._by_source[source] = {case.case_id: case for case in cases}
            self._digests[source] = certified.source_digest(cases)

    def get(self, source: str, case_id: str) -> Any:
        self._load(source)
        return self._by_source[source].get(case_id)

    def ids(self, source: str) -> list[str]:
        """The ids of ``source``'s cases, in order."""
        self._load(source)
        return list(self._by_source[source])

    def digest(self, source: str) -> str:
        """The source digest of the cases ``source`` names here (:func:`.certified.source_digest`)."""
        self._load(source)
        return self._digests[source]


def regrade(row: Mapping[str, Any], desk: DeskSpec, cases: _Cases, where: str) -> dict[str, Any]:
    """The episode fields of a scored row, from its log replayed under its pinned head."""
    case = cases.get(str(row.get("source") or ""), str(row.get("case_id")))
    if case is None:
        raise ResultsError(f"{where}: no case {row.get('case_id')!r} in {row.get('source')!r}")
    log, head = row.get("log"), row.get("head")
    if not isinstance(log, list) or not isinstance(head, str):
        raise ResultsError(f"{where}: a scored row needs its exported log and its head")
    try:
        score = desk_module(desk.name, "replay").replay(case, log, head=head)
    except LogIntegrityError as exc:
        raise ResultsError(f"{where}: the log does not replay under its head (edited?): {exc}") from exc
    except (KeyError, TypeError, ValueError) as exc:
        raise ResultsError(f"{where}: the log cannot be replayed: {exc!r}") from exc
    graded = score.as_dict()
    if row.get("score") != graded:
        raise ResultsError(f"{where}: the recorded score is not what its log replays to (edited?)")
    info = {**dict(row.get("info_metrics") or {}), "case_id": case.case_id, "score": graded}
    info["family"] = getattr(case, "family", "")
    fields: dict[str, Any] = desk.scoring.episode_fields(info)
    return fields


@functools.cache
def default_log_settings(desk_name: str) -> dict[str, Any]:
    """What the first entry of a log played under the desk's default options records."""
    env = registry.get(desk_name).make_env()
    try:
        env.reset(seed=0)
        settings = env.unwrapped.export_log()[0]["args"].get("settings", {})
    finally:
        env.close()
    return dict(settings)


def settings_label(row: Mapping[str, Any], desk_name: str) -> str:
    """How a scored row was played where that differs from the desk's defaults: the plain
    settings its log's first entry records (``rules=original``, ``hints=true``), a system
    message that replaced the brief, the text mode; ``""`` when none."""
    log = row.get("log")
    logged: Any = log[0] if isinstance(log, list) and log else {}
    for name in ("args", "settings"):  # the first entry's args, then their settings
        logged = logged.get(name) if isinstance(logged, Mapping) else None
    parts = _differences(default_log_settings(desk_name), logged if isinstance(logged, Mapping) else {})
    if row.get("system_prompt") is not None:
        parts.append("system prompt replaced")
    if row.get("mode", DEFAULT_MODE) != DEFAULT_MODE:
        parts.append(f"mode={row.get('mode')}")
    return ", ".join(parts)


def _differences(default: Mapping[str, Any], given: Mapping[str, Any]) -> list[str]:
    """``name=value`` for each plain setting (rules, hints, recovery) that differs from its
    default. A budget (a mapping of limits) is left out: its fields follow the code's
    version, and a log of an older run records the defaults of its day."""
    found = []
    for name in sorted(set(default) | set(given), key=str):
        was, now = default.get(name), given.get(name)
        if isinstance(was, Mapping) or isinstance(now, Mapping) or was == now:
            continue
        found.append(f"{name}={now if isinstance(now, str) else json.dumps(now, default=str)}")
    return found


INCOMPLETE = ("keep", "fail", "refuse")
"""What :func:`load_results` does with a run whose manifest plans rollouts its files lack:
``keep`` reports the rows there are (and counts the missing), ``fail`` scores each missing
rollout as a failure (the desk's lowest reward, every term 0), ``refuse`` raises
:class:`ResultsError`, as does a file without a manifest."""


@dataclass(frozen=True)
class RunRecord:
    """One results file's run, as ``FILE.meta.json`` records it (no manifest: an older run)."""

    path: Path
    manifest: dict[str, Any] | None
    meta: dict[str, Any]

    @property
    def digest(self) -> str | None:
        return None if self.manifest is None else certified.manifest_digest(self.manifest)

    @classmethod
    def read(cls, path: Path) -> RunRecord:
        meta_path = Path(f"{path}.meta.json")
        if not meta_path.exists():
            return cls(path, None, {})
        try:
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ResultsError(f"{meta_path}: not a run's meta file ({exc})") from None
        manifest = meta.get("manifest") if isinstance(meta, dict) else None
        if manifest is not None:
            problem = manifest_problem(manifest)
            if problem:
                raise ResultsError(f"{meta_path}: the manifest is not a run-model manifest ({problem})")
        return cls(path, manifest, meta if isinstance(meta, dict) else {})


_MANIFEST_FIELDS: dict[str, type | tuple[type, ...]] = {
    "desk": str,
    "version": str,
    "source": str,
    "source_kind": str,
    "source_digest": str,
    "source_cases": int,
    "selection": dict,
    "case_ids": list,
    "rollouts": int,
    "settings": dict,
    "settings_key": str,
}


def manifest_problem(manifest: object) -> str:
    """What is wrong with a manifest read from a file ("" when nothing is): a field missing
    or of the wrong type, case ids that are not strings, or no rollouts."""
    if not isinstance(manifest, dict):
        return "not a JSON object"
    for name, kind in _MANIFEST_FIELDS.items():
        value = manifest.get(name)
        if not isinstance(value, kind) or isinstance(value, bool):
            return f"{name!r} missing or not a {getattr(kind, '__name__', kind)}"
    if not all(isinstance(case_id, str) for case_id in manifest["case_ids"]):
        return "'case_ids' holds something other than strings"
    if manifest["rollouts"] < 1 or manifest["source_kind"] not in ("split", "file"):
        return "'rollouts' below 1, or 'source_kind' neither split nor file"
    return ""


@dataclass
class _Seen:
    """A (case, rollout) already read for a model: where, and whether only as an infra error."""

    rollout: Rollout
    path: Path
    infra: bool


class ResultsReader:
    """Reads results files for one desk into models' rollouts (see :func:`load_results`)."""

    def __init__(self, desk_name: str, trust: TrustedKey | None, notices: list[str] | None) -> None:
        self.desk = registry.get(desk_name)
        self.cases = _Cases(self.desk)
        self.trust = trust
        self.notices = notices if notices is not None else []
        self.chosen: dict[str, dict[tuple[str, int], _Seen]] = {}
        self.played_under: dict[str, tuple[str, str]] = {}  # model -> (settings, the first row that had them)
        self.runs: dict[str, list[RunRecord]] = {}  # model -> its files' runs

    def read_file(self, path: Path) -> None:
        if not path.exists():
            raise ResultsError(f"{path}: no such results file")
        run = RunRecord.read(path)
        if self.trust is not None:
            self.check_signed_manifest(run)
        if run.manifest is not None:
            self.check_desk(run)
            self.check_selection(run)
        rows = read_rows(path, self.notices)
        for number, row in rows:
            self.read_row(row, f"{path}:{number}", run)
        for model in {str(row.get("model")) for _, row in rows}:
            self.runs.setdefault(model, []).append(run)

    def check_signed_manifest(self, run: RunRecord) -> None:
        assert self.trust is not None
        if run.manifest is None:
            raise ResultsError(f"{run.path}.meta.json: no run manifest, so nothing of the run is signed")
        try:
            certified.check_manifest_certificate(run.meta, self.trust)
        except CertificateError as exc:
            raise ResultsError(f"{run.path}.meta.json: the manifest's certificate: {exc}") from None

    def check_desk(self, run: RunRecord) -> None:
        """A run of another desk is named as such, before its cases are looked for in this
        desk's sources (where they would read as an edited manifest)."""
        assert run.manifest is not None
        played = run.manifest.get("desk")
        if played != self.desk.name:
            raise ResultsError(
                f"{run.path}.meta.json: a run of desk {played!r}, read as desk {self.desk.name!r}"
                f" (give --desk {played})"
            )

    def check_selection(self, run: RunRecord) -> None:
        """A manifest's cases are the ones its selection picks from its source: a run of 8
        picked cases cannot pass for the first 8, nor for 8 drawn at random."""
        assert run.manifest is not None
        manifest, where = run.manifest, f"{run.path}.meta.json"
        ids = self.cases.ids(str(manifest.get("source") or ""))
        if manifest.get("source_digest") != self.cases.digest(str(manifest.get("source") or "")):
            raise ResultsError(f"{where}: the manifest's source is not the one its digest names (edited?)")
        picked = certified.selected_indices(manifest.get("selection") or {}, len(ids))
        if picked is not None and manifest["case_ids"] != [ids[i] for i in picked]:
            chosen = certified.selection_text(manifest.get("selection") or {}, len(ids))
            raise ResultsError(f"{where}: the manifest says its cases are {chosen}, but they are not")
        if picked is None and not set(manifest["case_ids"]) <= set(ids):
            raise ResultsError(f"{where}: the manifest names cases its source does not hold")

    def read_row(self, row: dict[str, Any], where: str, run: RunRecord) -> None:
        missing = [name for name in ("desk", "case_id", "rollout", "model") if name not in row]
        if missing:
            raise ResultsError(f"{where}: not a run-model row (no {', '.join(missing)})")
        if row["desk"] != self.desk.name:
            raise ResultsError(f"{where}: a row of desk {row['desk']!r}, not {self.desk.name!r}")
        self._check_provenance(row, where, run)
        error = row.get("error")
        if error is None:
            rollout = self._scored(row, where)
        elif isinstance(error, Mapping) and error.get("kind") == "infra":
            rollout = self._infra(row, dict(error), where)
        else:
            raise ResultsError(f"{where}: 'error' is null or an infra error, not {error!r}")
        rollout.case_index = int(row.get("case_index") or 0)
        # One episode, one row: held for rows that name their reset seed (run-model's), whose
        # rollouts each reset with a seed of their own; two plays by hand may share a seed.
        rollout.nonce = _log_nonce(row) if "seed" in row else None
        rollout.source = str(row.get("source") or "")
        _read_extras(rollout, row)
        self._keep(str(row["model"]), rollout, run.path)

    def _check_provenance(self, row: Mapping[str, Any], where: str, run: RunRecord) -> None:
        """The row belongs to its file's run, its case and source are the ones it names, and
        (with a trusted key) its certificate signs exactly what it holds."""
        manifest = run.manifest
        if manifest is not None:
            if row.get("run") != run.digest:
                raise ResultsError(
                    f"{where}: the row is not of this file's run (its 'run' is not the manifest's digest)"
                )
            if (
                row["case_id"] not in set(manifest["case_ids"])
                or not 0 <= int(row["rollout"]) < manifest["rollouts"]
            ):
                raise ResultsError(
                    f"{where}: rollout {row['rollout']} of {row['case_id']!r} is not in the run's manifest"
                    f" ({len(manifest['case_ids'])} cases, {manifest['rollouts']} rollouts each)"
                )
            for name in ("source", "source_digest"):
                if row.get(name) != manifest.get(name):
                    raise ResultsError(f"{where}: the row's {name} is not its run's")
        self._check_source(row, where, manifest)
        _check_episode_identity(row, where)
        if self.trust is not None:
            try:
                certified.check_row_certificate(row, self.trust)
            except CertificateError as exc:
                raise ResultsError(f"{where}: {exc}") from None

    def _check_source(self, row: Mapping[str, Any], where: str, manifest: Mapping[str, Any] | None) -> None:
        source = str(row.get("source") or "")
        claimed = row.get("source_digest", None if manifest is None else manifest.get("source_digest"))
        if claimed is not None and claimed != self.cases.digest(source):
            kind = "the split this install ships" if source in self.desk.cases.splits else "the case file"
            raise ResultsError(
                f"{where}: {source!r} is not the source the row was played on: its digest is not"
                f" {kind}'s (an edited case file, or another version's split)"
            )
        case = self.cases.get(source, str(row["case_id"]))
        if case is not None and row.get("case_digest", case.digest) != case.digest:
            raise ResultsError(f"{where}: the case {row['case_id']!r} is not the one the row was played on")

    def _scored(self, row: dict[str, Any], where: str) -> Rollout:
        rollout = Rollout(
            row["case_id"], "", int(row["rollout"]), regrade(row, self.desk, self.cases, where), None, where
        )
        rollout.family = rollout.episode["family"] if rollout.episode else ""
        rollout.settings = settings_label(row, self.desk.name)
        _check_one_setting(self.played_under, str(row["model"]), rollout.settings, where)
        return rollout

    def _infra(self, row: dict[str, Any], error: dict[str, Any], where: str) -> Rollout:
        case = self.cases.get(str(row.get("source") or ""), str(row["case_id"]))
        if case is None:
            raise ResultsError(f"{where}: no case {row.get('case_id')!r} in {row.get('source')!r}")
        check_infra_evidence(row, case, self.desk, where)
        return Rollout(row["case_id"], getattr(case, "family", ""), int(row["rollout"]), None, error, where)

    def _keep(self, model: str, rollout: Rollout, path: Path) -> None:
        """One row per (case, rollout): an infra error may be followed, in its own file, by the
        row of its retry (``run-model --retry-infra``); anything else twice is refused."""
        runs = self.chosen.setdefault(model, {})
        key = (rollout.case_id, rollout.rollout)
        seen = runs.get(key)
        if seen is not None and not (seen.infra and seen.path == path):
            raise ResultsError(
                f"{rollout.where}: rollout {rollout.rollout} of {rollout.case_id!r} of model {model!r} is"
                f" there twice (also at {seen.rollout.where}); a rollout is counted once: report the files"
                " of overlapping runs apart"
            )
        runs[key] = _Seen(rollout, path, rollout.episode is None)

    def results(self, incomplete: str) -> dict[str, ModelResults]:
        out = {}
        for model, seen in self.chosen.items():
            rollouts = [s.rollout for s in seen.values()]
            _check_one_episode_per_row(rollouts)
            found = ModelResults(model, rollouts, self.played_under.get(model, ("", ""))[0])
            self._describe_run(found, self.runs.get(model, []), incomplete)
            found.rollouts.sort(key=lambda r: (r.case_index, r.case_id, r.rollout))
            out[model] = found
        return out

    def _describe_run(self, found: ModelResults, runs: Sequence[RunRecord], incomplete: str) -> None:
        """What the model's runs planned, which planned rollouts are missing, its source and signature."""
        manifests = [run.manifest for run in runs if run.manifest is not None]
        unmanifested = [run.path for run in runs if run.manifest is None]
        found.certificate = f"verified: key {self.trust.key[:16]}" if self.trust is not None else "unsigned"
        if unmanifested:
            found.run_note = "no run manifest: completeness unknown"
            if incomplete == "refuse":
                raise ResultsError(
                    f"{unmanifested[0]}: no run manifest ({unmanifested[0]}.meta.json missing, or written"
                    " before manifests), so whether the run is complete cannot be told; pass"
                    " --allow-incomplete to report its rows as they are"
                )
        if not manifests:
            first = found.rollouts[0] if found.rollouts else None
            found.source = first.source if first else ""
            return
        _check_same_experiment(found.model, runs)
        first_manifest = manifests[0]
        found.source, found.source_kind = str(first_manifest["source"]), str(first_manifest["source_kind"])
        found.source_digest = str(first_manifest["source_digest"])
        found.selection = " + ".join(
            certified.selection_text(m["selection"], m["source_cases"]) for m in manifests
        )
        found.source_cases = int(first_manifest["source_cases"])
        planned = list(dict.fromkeys(pair for m in manifests for pair in certified.planned_pairs(m)))
        found.planned = len(planned)
        present = {(r.case_id, r.rollout) for r in found.rollouts}
        found.missing = [pair for pair in planned if pair not in present]
        if found.missing and incomplete == "refuse":
            case_id, rollout = found.missing[0]
            raise ResultsError(
                f"model {found.model!r}: {len(found.missing)} of the {len(planned)} rollouts its run planned are"
                f" missing (the first: rollout {rollout} of {case_id!r}); the mean of an incomplete run is not"
                " printed: finish the run (the same run-model command resumes it), or pass --allow-incomplete"
                " to score each missing rollout as a failure"
            )
        if found.missing and incomplete == "fail":
            found.rollouts += [self._failure(found, case_id, r) for case_id, r in found.missing]

    def _failure(self, found: ModelResults, case_id: str, rollout: int) -> Rollout:
        """A missing rollout scored as a failure: the desk's lowest reward, every term and metric 0."""
        case = self.cases.get(found.source, case_id)
        family = getattr(case, "family", "")
        scoring = self.desk.scoring
        episode = {
            "case_id": case_id,
            "family": family,
            "reward": float(scoring.lowest_reward),
            "terms": {term: 0.0 for term in scoring.terms},
            "metrics": {m.name: 0.0 if m.money else 0 for m in scoring.metrics},
        }
        index = next((r.case_index for r in found.rollouts if r.case_id == case_id), 0)
        return Rollout(case_id, family, rollout, episode, None, "(missing)", index, ended="missing")


def _log_nonce(row: Mapping[str, Any]) -> str | None:
    log = row.get("log")
    if isinstance(log, list) and log and isinstance(log[0], Mapping):
        args = log[0].get("args")
        nonce = args.get("nonce") if isinstance(args, Mapping) else None
        return nonce if isinstance(nonce, str) else None
    return None


def _check_episode_identity(row: Mapping[str, Any], where: str) -> None:
    """A row's reset seed is its rollout's, and its nonce is its log's (rows of older runs lack both)."""
    if "seed" in row and row["seed"] != certified.rollout_seed(
        int(row.get("case_index") or 0), int(row["rollout"])
    ):
        raise ResultsError(
            f"{where}: the row's reset seed is not that of rollout {row['rollout']} of its case"
        )
    if "nonce" in row and row.get("log") is not None and row["nonce"] != _log_nonce(row):
        raise ResultsError(f"{where}: the row's nonce is not its log's")


def _check_one_episode_per_row(rollouts: Sequence[Rollout]) -> None:
    """Refuse two rows of one episode (the same log nonce): a row copied as another rollout."""
    seen: dict[str, Rollout] = {}
    for rollout in rollouts:
        if rollout.nonce is None:
            continue
        other = seen.setdefault(rollout.nonce, rollout)
        if other is not rollout:
            raise ResultsError(
                f"{rollout.where}: the same episode as {other.where} (its log's nonce is that row's):"
                " a row copied as another rollout"
            )


def _check_same_experiment(model: str, runs: Sequence[RunRecord]) -> None:
    """A model's files are runs of one experiment: same desk, source and settings."""
    manifests = [(run.path, run.manifest) for run in runs if run.manifest is not None]
    first_path, first = manifests[0]
    for path, manifest in manifests[1:]:
        for name in ("desk", "source", "source_digest", "settings_key"):
            if manifest.get(name) != first.get(name):
                raise ResultsError(
                    f"{path}: model {model!r} was run with another {name} than in {first_path}: one"
                    " model's figures are one experiment's; report the runs apart (or under other model names)"
                )


def check_infra_evidence(row: Mapping[str, Any], case: Any, desk: DeskSpec, where: str) -> None:
    """An infra row keeps the log up to the failure, sealed as the machine's failure: it must
    verify under its head on its case, and have no score."""
    log, head = row.get("log"), row.get("head")
    if not isinstance(log, list) or not isinstance(head, str):
        raise ResultsError(
            f"{where}: an infra error without its evidence (the log up to the failure and its head);"
            " it cannot be told from a row whose score was removed"
        )
    try:
        desk_module(desk.name, "replay").replay(case, log, head=head)
    except InfraFailure:
        return
    except LogIntegrityError as exc:
        raise ResultsError(
            f"{where}: the infra error's log does not replay under its head (edited?): {exc}"
        ) from exc
    except (KeyError, TypeError, ValueError) as exc:
        raise ResultsError(f"{where}: the infra error's log cannot be replayed: {exc!r}") from exc
    raise ResultsError(f"{where}: an infra error whose log is not sealed as one (it ends with a score)")


def load_results(
    paths: Iterable[Path | str],
    desk_name: str = DEFAULT_DESK,
    *,
    trust: TrustedKey | None = None,
    incomplete: str = "keep",
    notices: list[str] | None = None,
) -> dict[str, ModelResults]:
    """Every model's rollouts in ``paths``, each row checked and re-graded (see the module docstring).

    ``trust``: refuse every row, and every run manifest, not signed by that key.
    ``incomplete``: what to do with a run missing planned rollouts (:data:`INCOMPLETE`).
    ``notices`` collects what is worth saying but not refusing (a last line cut short).
    """
    if incomplete not in INCOMPLETE:
        raise ValueError(f"incomplete is one of {', '.join(INCOMPLETE)}, not {incomplete!r}")
    loader = ResultsReader(desk_name, trust, notices)
    for path in paths:
        loader.read_file(Path(path))
    return loader.results(incomplete)


def _check_one_setting(
    played_under: dict[str, tuple[str, str]], model: str, settings: str, where: str
) -> None:
    """Refuse a model's row played under other settings than its first scored row."""
    first = played_under.setdefault(model, (settings, where))
    if first[0] != settings:
        raise ResultsError(
            f"{where}: model {model!r} was played under {settings or 'the defaults'} here and under"
            f" {first[0] or 'the defaults'} at {first[1]}: one model's figures are one experiment's;"
            " report the runs apart (or under other model names)"
        )


def _read_extras(rollout: Rollout, row: Mapping[str, Any]) -> None:
    """How the rollout ended, its tokens and its latency (rows of older runs lack some)."""
    usage: Mapping[str, Any] = row["usage"] if isinstance(row.get("usage"), Mapping) else {}
    timing: Mapping[str, Any] = row["timing"] if isinstance(row.get("timing"), Mapping) else {}
    rollout.ended = str(row.get("ended") or ("finished" if rollout.episode is not None else "infra"))
    rollout.prompt_tokens = int(usage.get("prompt_tokens") or 0)
    rollout.completion_tokens = int(usage.get("completion_tokens") or 0)
    latency = timing.get("latency_s")
    rollout.latency_s = float(latency) if isinstance(latency, int | float) else None


__all__ = [
    "ModelResults",
    "ResultsError",
    "ResultsReader",
    "Rollout",
    "RunRecord",
    "check_infra_evidence",
    "default_log_settings",
    "desk_tools",
    "load_results",
    "manifest_problem",
    "read_rows",
    "regrade",
    "settings_label",
    "trim_partial_line",
]
