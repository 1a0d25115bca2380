"""The fixed splits: eval (32 cases), train (320) and holdout (32), rebuilt byte for byte from seeds.

Eval pins every case's variant and payment fault so that its counts come out as
the desk's eval has always had them: 7 timeout-then-retry, 4 partial-failure,
3 duplicate-ticket, 3 resumed-session, 2 parallel-worker, 4 legit-repeat-purchase,
5 legit-partial-refund and 4 clean-single; 21 to pay, 3 to escalate, 8 settled;
14 with a payment fault and a lagging history; 4 of the tickets to pay lose their
first payment before the provider (:data:`EVAL_UNSENT`). The variants are chosen so that
rare damage counts in the mean: 6 of the 21 tickets to pay carry, beside the owed
line, an unpaid line that is not owed and is within the cap, which a policy paying
every unpaid line pays (with one such ticket it stayed within 0.05 of careful);
3 tickets are above the cap. Train holds 40 cases a family, the variants in turn,
the faults of the families without their own drawn at the default rate. Both are
built at the default scale.

``holdout`` is ours, never trained on: eval's plan (the same variants, faults and lost
first payments, so the same strata: each of careful's checks, the cap, the history, the
retry and its key, decides at least two of its cases, and every payment fault and lagging
history occurs) drawn afresh from its own seed, :data:`HOLDOUT_SEED`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from batchgate_gym.kernel.case_files import check_split, write_jsonl

from ..cases import CAP_CENTS, dumps_case
from .build import DEFAULT_FAULT_RATE, DEFAULT_LAG_DEPTH, DEFAULT_LINES, DEFAULT_PRIOR_ROWS, compose
from .families import FAMILIES, variants

SPLITS = ("eval", "train", "holdout")  # the one definition; sources serves them by name
EVAL_SEED = 40_261_001
HOLDOUT_SEED = 60_261_001
TRAIN_SEED = 50_261_001
TRAIN_PER_FAMILY = 40
TIMEOUT = "timeout_but_executes"

# Per family, its eval cases in order: (variant, payment fault or None). The two
# fault families carry their own fault whatever is written here.
EVAL_PLAN: dict[str, tuple[tuple[int, str | None], ...]] = {
    "timeout-then-retry": ((0, None), (2, None), (1, None), (2, None), (0, None), (0, None), (3, None)),
    "partial-failure": ((0, None), (2, None), (3, None), (2, None)),
    "duplicate-ticket": ((0, None), (2, None), (1, None)),
    "resumed-session": ((0, None), (2, None), (1, None)),
    "parallel-worker": ((0, None), (1, None)),
    "legit-repeat-purchase": ((0, None), (1, None), (3, TIMEOUT), (2, None)),
    "legit-partial-refund": ((1, None), (2, None), (1, TIMEOUT), (3, TIMEOUT), (0, None)),
    "clean-single": ((3, None), (1, None), (2, None), (1, None)),
}

# Per family, the eval cases (by place in EVAL_PLAN) whose first payment never reaches the
# provider and answers with a timeout that tells the truth: 4 of the 21 to pay, so that a
# policy that never looks at a payment's answer leaves 4 owed refunds unpaid (at least
# 0.0625 below careful), two of them behind a tool that lies on the next payment.
EVAL_UNSENT: dict[str, tuple[int, ...]] = {
    "timeout-then-retry": (1, 4),
    "legit-repeat-purchase": (0,),
    "clean-single": (0,),
}

_DEFAULT_SCALE: dict[str, Any] = {
    "lines": DEFAULT_LINES,
    "prior_rows": DEFAULT_PRIOR_ROWS,
    "lag_depth": DEFAULT_LAG_DEPTH,
    "cap_cents": CAP_CENTS,
}


def split_path(name: str) -> Path:
    """Where the committed split lives: ``desks/refund/data/<name>.jsonl``."""
    check_split(name, SPLITS)
    return Path(__file__).resolve().parent.parent / "data" / f"{name}.jsonl"


def build_split(name: str) -> list[dict[str, Any]]:
    """All cases of a split, in file order, rebuilt from the split's fixed seeds."""
    check_split(name, SPLITS)
    if name == "holdout":
        return _eval(HOLDOUT_SEED, "holdout")
    return _eval() if name == "eval" else _train()


def write_split(name: str, path: str | Path | None = None) -> Path:
    """Write a split as JSONL (one case a line, ``\\n`` endings, raw UTF-8); returns the path."""
    target = Path(path) if path is not None else split_path(name)
    return write_jsonl(target, (dumps_case(case) for case in build_split(name)))


def _eval(seed: int = EVAL_SEED, split: str = "eval") -> list[dict[str, Any]]:
    """Eval's plan from ``seed``: the eval split itself, or holdout from its own seed."""
    cases = []
    for index, family in enumerate(FAMILIES):
        for k, (variant, fault) in enumerate(EVAL_PLAN[family]):
            cases.append(
                compose(
                    seed + 100 * index + k,
                    family=family,
                    variant=variant,
                    fault_rate=DEFAULT_FAULT_RATE,
                    case_id=f"{split}-{family}-{k}",
                    split=split,
                    fault=fault,
                    unsent=k in EVAL_UNSENT.get(family, ()),
                    **_DEFAULT_SCALE,
                )
            )
    return cases


def _train() -> list[dict[str, Any]]:
    cases = []
    for index, family in enumerate(FAMILIES):
        count = variants(family)
        for k in range(TRAIN_PER_FAMILY):
            cases.append(
                compose(
                    TRAIN_SEED + 1000 * index + k,
                    family=family,
                    variant=k % count,
                    fault_rate=DEFAULT_FAULT_RATE,
                    case_id=f"train-{family}-{k}",
                    split="train",
                    **_DEFAULT_SCALE,
                )
            )
    return cases


__all__ = ["EVAL_PLAN", "EVAL_UNSENT", "SPLITS", "build_split", "split_path", "write_split"]
