"""What a run plays and under which settings, and what lets it resume: the cases chosen, the
settings and their key, the manifest, the rows already written, ``OUT.meta.json``."""

from __future__ import annotations

import hashlib
import json
import random
import time
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

from batchgate_gym.desks import registry
from batchgate_gym.kernel.certificate import Signer

from .. import certified
from .config import RunConfig


class SettingsMismatch(ValueError):
    """The out file holds a run under other settings; resuming it would mix two experiments."""


def plan(config: RunConfig) -> tuple[list[Any], list[int], str]:
    """The cases of the source, the indices of those played (in order), and the source's name."""
    desk = registry.get(config.desk)
    cases = desk.fixed_cases(config.cases, config.split)
    source = config.cases or config.split or desk.cases.default_split or ""
    return cases, select(cases, config), source


def source_kind(config: RunConfig) -> str:
    """``split`` for a split the package ships, ``file`` for a case file."""
    splits = registry.get(config.desk).cases.splits
    return "file" if config.cases is not None and config.cases not in splits else "split"


def manifest_of(
    config: RunConfig, cases: Sequence[Any], chosen: Sequence[int], source: str, settings: Mapping[str, Any]
) -> dict[str, Any]:
    """The run's manifest (:func:`.certified.build_manifest`)."""
    import batchgate_gym

    return certified.build_manifest(
        desk=config.desk,
        version=batchgate_gym.__version__,
        source=source,
        source_kind=source_kind(config),
        digest=certified.source_digest(cases),
        total=len(cases),
        selection=certified.selection_of(config.n, config.case_ids, config.sample, config.sample_seed),
        case_ids=[cases[index].case_id for index in chosen],
        rollouts=config.rollouts,
        settings=settings,
        settings_key=settings_key(settings),
    )


def select(cases: Sequence[Any], config: RunConfig) -> list[int]:
    """Indices of the cases played: ``case_ids``, a seeded ``sample``, the first ``n``, or all."""
    if config.case_ids:
        where = {case.case_id: index for index, case in enumerate(cases)}
        unknown = [case_id for case_id in config.case_ids if case_id not in where]
        if unknown:
            shown = ", ".join(case.case_id for case in cases[:3])
            raise ValueError(
                f"no case {', '.join(map(repr, unknown))} in this source; its ids look like {shown}, ..."
            )
        return list(dict.fromkeys(where[case_id] for case_id in config.case_ids))
    if config.sample is not None:
        if config.sample > len(cases):
            raise ValueError(f"sample {config.sample} is more than the {len(cases)} cases there are")
        return sorted(random.Random(config.sample_seed).sample(range(len(cases)), config.sample))
    return list(range(len(cases) if config.n is None else min(config.n, len(cases))))


def system_prompt_digest(text: str | None) -> str | None:
    return None if text is None else hashlib.sha256(text.encode()).hexdigest()


def run_settings(config: RunConfig) -> dict[str, Any]:
    """Every setting that changes an episode or a request: what a resumed run must share."""
    address = urlsplit(config.base_url)
    options = {o.name: o.parse(o.default) for o in registry.get(config.desk).options if not o.draws}
    options.update(config.env_kwargs)
    return {
        "desk": config.desk,
        "mode": config.mode,
        "desk_options": dict(sorted(options.items())),
        "model": config.model,
        "host": address.netloc,
        "temperature": config.temperature,
        "top_p": config.top_p,
        "max_tokens": config.max_tokens,
        "seed": config.seed,
        "sampling_args": dict(sorted(config.sampling_args.items())),
        "system_prompt_sha256": system_prompt_digest(config.system_prompt),
        "header_names": sorted(name.lower() for name in config.headers),
    }


def settings_key(settings: Mapping[str, Any]) -> str:
    text = json.dumps(settings, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def differences(before: Mapping[str, Any], now: Mapping[str, Any], prefix: str = "") -> list[str]:
    """``name: before -> now`` for each setting that differs (``desk_options.recovery: ...`` inside)."""
    found = []
    for name in sorted(set(before) | set(now)):
        old, new = before.get(name), now.get(name)
        if old == new:
            continue
        if isinstance(old, Mapping) and isinstance(new, Mapping):
            found += differences(old, new, f"{prefix}{name}.")
        else:
            found.append(f"{prefix}{name}: {json.dumps(old, default=str)} -> {json.dumps(new, default=str)}")
    return found


def check_resumable(
    config: RunConfig,
    settings: Mapping[str, Any],
    rows: Sequence[Mapping[str, Any]],
    manifest: Mapping[str, Any] | None = None,
    signer: Signer | None = None,
) -> None:
    """Refuse to add to an out file written under other settings, for other cases or
    rollouts (another manifest), or signed otherwise (:class:`SettingsMismatch`).

    An out file without rows (a run stopped before its first row) binds nothing: the
    settings may be changed to fix what stopped it.
    """
    if not rows:
        return
    key = settings_key(settings)
    meta: Mapping[str, Any] = {}
    if config.meta_path.exists():
        try:
            meta = json.loads(config.meta_path.read_text(encoding="utf-8"))
            recorded: Mapping[str, Any] | None = meta.get("settings")
        except (ValueError, AttributeError) as exc:
            raise SettingsMismatch(
                f"{config.meta_path} is not a run's settings ({exc}); move it away"
            ) from exc
    else:
        recorded = None
    if recorded is not None and settings_key(recorded) != key:
        raise SettingsMismatch(
            f"{config.out} holds a run under other settings ({'; '.join(differences(recorded, settings))});"
            " use another --out, or the same settings to resume it"
        )
    foreign = sorted({str(row.get("settings_key")) for row in rows if row.get("settings_key") != key})
    if foreign:
        raise SettingsMismatch(
            f"{config.out} holds rows written under other settings (key {', '.join(foreign)}, this run's is"
            f" {key}); use another --out"
        )
    if manifest is not None:
        _check_same_run(config, meta, manifest, signer)


def _check_same_run(
    config: RunConfig, meta: Mapping[str, Any], manifest: Mapping[str, Any], signer: Signer | None
) -> None:
    """A resumed run plays the cases and rollouts its out file was begun with, signed by the same key."""
    before = meta.get("manifest")
    if not isinstance(before, Mapping):
        raise SettingsMismatch(
            f"{config.out} was written without a run manifest (by an older version, or by hand);"
            " use another --out"
        )
    if certified.manifest_digest(before) != certified.manifest_digest(manifest):
        changed = [
            name for name in sorted(set(before) | set(manifest)) if before.get(name) != manifest.get(name)
        ]
        raise SettingsMismatch(
            f"{config.out} holds a run of other cases or rollouts ({', '.join(changed)} differ); use the"
            " same -n/--case/--sample/-r to resume it, or another --out"
        )
    signed_by = (meta.get("manifest_certificate") or {}).get("key")
    if signed_by != (signer.key if signer is not None else None):
        was = f"key {signed_by[:16]}..." if signed_by else "no key"
        now = f"key {signer.key[:16]}..." if signer is not None else "no key"
        raise SettingsMismatch(
            f"{config.out} was signed with {was}, this run with {now}: one run's rows are signed alike;"
            " use the same --sign-key, or another --out"
        )


def done_pairs(rows: Sequence[Mapping[str, Any]], config: RunConfig) -> set[tuple[str, int]]:
    """(case_id, rollout) already in the out file for this desk and model."""
    done = set()
    for row in rows:
        if row.get("desk") != config.desk or row.get("model") != config.model:
            continue
        if config.retry_infra and row.get("error") is not None:
            continue
        done.add((row["case_id"], int(row["rollout"])))
    return done


def write_meta(
    config: RunConfig,
    settings: Mapping[str, Any],
    runs: list[dict[str, Any]],
    manifest: Mapping[str, Any] | None = None,
    signer: Signer | None = None,
) -> None:
    """``OUT.meta.json``: settings and their key, the run's manifest (signed with ``signer``),
    versions, and each run's times and counts."""
    import platform

    import openai

    import batchgate_gym

    meta = {
        "settings": dict(settings),
        "settings_key": settings_key(settings),
        "versions": {
            "batchgate_gym": batchgate_gym.__version__,
            "desk_env": registry.get(config.desk).env_id,
            "openai": openai.__version__,
            "python": platform.python_version(),
        },
        "runs": runs,
    }
    if manifest is not None:
        meta["manifest"] = dict(manifest)
        meta["manifest_digest"] = certified.manifest_digest(manifest)
        if signer is not None:
            meta["manifest_certificate"] = signer.sign(manifest)
    config.meta_path.write_text(json.dumps(meta, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def earlier_runs(config: RunConfig) -> list[dict[str, Any]]:
    """The runs ``OUT.meta.json`` already records (none without one)."""
    if not config.meta_path.exists():
        return []
    runs = json.loads(config.meta_path.read_text(encoding="utf-8")).get("runs")
    return list(runs) if isinstance(runs, list) else []


def now_text() -> str:
    """The local time as the meta file records a run's start and end."""
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")


__all__ = [
    "SettingsMismatch",
    "check_resumable",
    "differences",
    "done_pairs",
    "earlier_runs",
    "manifest_of",
    "now_text",
    "plan",
    "run_settings",
    "select",
    "settings_key",
    "source_kind",
    "system_prompt_digest",
    "write_meta",
]
