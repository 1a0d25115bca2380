"""Instructions per unit of work, counted by valgrind's callgrind: a speed figure the machine's load cannot move.

On a shared or virtual machine the CPU clock of the same run moves by a third from one
minute to the next; the number of instructions a piece of work executes does not. Each
measure runs a workload twice under ``valgrind --tool=callgrind`` in a new process,
with ``count`` units of work and with none (the same set-up: imports, the eval split
built, statements compiled), and reports the difference divided by ``count``. With
``--before PYTHON`` every measure is also counted under another interpreter, one whose
``batchgate_gym`` is an earlier checkout (installed in its own virtual environment),
and the table gives both and the change. Instructions are not time (a cache miss costs
more than an add), so a change is confirmed on the clock too, in turn; but they say
which way the work went whatever the machine was doing. They are not exact either. Each
child runs with ``PYTHONHASHSEED=0``, so string hashes (and the layouts of sets and dicts
of strings) are the same in every count; caches keyed by object identity are not, and the
same count taken again in a new process still differs by one to three percent per unit,
so a change of a few percent is noise.

    python benchmarks/instructions.py [--measures careful,gate_reset,...] [--before PYTHON] [--out DIR]

The script runs itself as the workload (``--workload NAME --count N``), importing the
package only there, so that an older checkout can run the same workloads.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

# name -> (what one unit is, units counted)
MEASURES: dict[str, tuple[str, int]] = {
    "careful": ("careful episode, eval split, warm (text interface, graded)", 200),
    "naive": ("naive episode, eval split, warm (text interface, graded)", 400),
    "evaluate": (
        "careful episode of evaluate over the eval split, warm (the bench's careful loop plus evaluate's own work)",
        192,
    ),
    "gate_reset": ("fresh procedural reset of BadBatchGate-v0", 200),
    "refund_reset": ("fresh procedural reset of RefundDesk-v0", 500),
    "cold_file": ("careful episode of evaluate over a fresh 100-case file, in a new process", 100),
    "gate_macro": ("BadBatchGateMacro-v0 step, random masked moves, eval split, warm", 2000),
    "refund_macro": ("RefundDeskMacro-v0 step, random masked moves, eval split, warm", 3000),
}


def _episodes(policy_name: str) -> Callable[[int], None]:
    def run(count: int) -> None:
        from batchgate_gym.bench.measures import episode_loop, eval_env
        from batchgate_gym.policies.gate.reference import REFERENCE_POLICIES

        env, policy = eval_env(), REFERENCE_POLICIES[policy_name]()
        env.reset(seed=0)
        episode_loop(env, policy, 2 * len(env.source))  # every case built, every statement compiled
        episode_loop(env, policy, count)

    return run


def _evaluate(count: int) -> None:
    """``count`` careful episodes of ``evaluate`` over the eval split (whole runs of it),
    after two runs that build every case and compile every statement."""
    from batchgate_gym.app.evaluate import evaluate
    from batchgate_gym.envs import BatchGateEnv
    from batchgate_gym.policies.gate.reference import REFERENCE_POLICIES

    careful = REFERENCE_POLICIES["careful"]
    split_size = len(BatchGateEnv(split="eval").source)
    if count % split_size:
        raise ValueError(f"the count of evaluate's episodes is whole runs of the split ({split_size})")
    for _ in range(2 + count // split_size):
        evaluate(careful(), split="eval", progress=False)


def _resets(env_id: str) -> Callable[[int], None]:
    def run(count: int) -> None:
        import gymnasium as gym

        import batchgate_gym.envs  # noqa: F401  (registers the environments)

        env = gym.make(env_id)
        env.reset(seed=0)
        for seed in range(1, count + 1):
            env.reset(seed=10**6 + seed)

    return run


def _cold_file(count: int) -> None:
    from batchgate_gym.app.evaluate import evaluate
    from batchgate_gym.desks.gate.generator import build_case, dumps_case
    from batchgate_gym.kernel.case_files import write_jsonl
    from batchgate_gym.policies.gate.reference import REFERENCE_POLICIES

    careful = REFERENCE_POLICIES["careful"]
    with tempfile.TemporaryDirectory() as directory:
        folder = Path(directory)
        warm_up = write_jsonl(
            folder / "warm-up.jsonl", (dumps_case(build_case(s)) for s in (8 * 10**6, 8 * 10**6 + 1))
        )
        fresh = write_jsonl(folder / "fresh.jsonl", (dumps_case(build_case(10**6 + s)) for s in range(100)))
        evaluate(careful(), cases=str(warm_up), progress=False)  # imports and first-use costs
        if count:
            evaluate(careful(), cases=str(fresh), progress=False)


def _macro(desk: str) -> Callable[[int], None]:
    def run(count: int) -> None:
        import numpy as np

        if desk == "gate":
            from batchgate_gym.envs.gate.macro import GateMacroEnv as MacroEnv
        else:
            from batchgate_gym.envs.refund.macro import RefundMacroEnv as MacroEnv  # type: ignore[assignment]

        env = MacroEnv(split="eval")
        rng = np.random.default_rng(0)
        env.reset(seed=0)

        def steps(n: int) -> None:
            for _ in range(n):
                allowed = np.flatnonzero(env.action_masks())
                *_, terminated, truncated, _info = env.step(allowed[rng.integers(len(allowed))])
                if terminated or truncated:
                    env.reset()

        steps(1500)  # every case built, every statement compiled
        steps(count)

    return run


WORKLOADS: dict[str, Callable[[int], None]] = {
    "careful": _episodes("careful"),
    "naive": _episodes("naive"),
    "evaluate": _evaluate,
    "gate_reset": _resets("batchgate_gym/BadBatchGate-v0"),
    "refund_reset": _resets("batchgate_gym/RefundDesk-v0"),
    "cold_file": _cold_file,
    "gate_macro": _macro("gate"),
    "refund_macro": _macro("refund"),
}
# The cold file counts all its cases or none: its count is its file's size.
_ALL_OR_NONE = {"cold_file"}


def instructions(python: str, workload: str, count: int) -> int:
    """Instructions callgrind counts for ``python`` running ``workload`` over ``count`` units."""
    command = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", python]
    command += [str(Path(__file__).resolve()), "--workload", workload, "--count", str(count)]
    fixed = {**os.environ, "PYTHONHASHSEED": "0"}  # the same str hashes, so set and dict layouts
    done = subprocess.run(command, capture_output=True, text=True, cwd=tempfile.gettempdir(), env=fixed)
    found = re.search(r"Collected\s*:\s*(\d+)", done.stderr)
    if done.returncode != 0 or found is None:
        raise RuntimeError(f"{workload} under callgrind failed ({done.returncode}): {done.stderr[-2000:]}")
    return int(found.group(1))


def per_unit(python: str, workload: str) -> float:
    count = MEASURES[workload][1]
    return (instructions(python, workload, count) - instructions(python, workload, 0)) / count


def markdown(result: dict[str, Any]) -> str:
    before = result.get("before")
    header = "| measure | instructions per unit, now |"
    rule = "|---|---:|"
    if before is not None:
        header = "| measure | instructions per unit, before | now | change |"
        rule = "|---|---:|---:|---:|"
    rows = [header, rule]
    for name, now in result["now"].items():
        cells = [MEASURES[name][0]]
        if before is not None:
            cells += [f"{before[name]:,.0f}", f"{now:,.0f}", f"{now / before[name] - 1:+.1%}"]
        else:
            cells.append(f"{now:,.0f}")
        rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument(
        "--measures", default=",".join(MEASURES), help="comma-separated: " + ", ".join(MEASURES)
    )
    parser.add_argument("--before", default=None, help="a Python whose batchgate_gym is an earlier checkout")
    parser.add_argument("--out", default=None, help="write instructions.json and instructions.md here")
    parser.add_argument("--workload", choices=sorted(WORKLOADS), help=argparse.SUPPRESS)  # the script's child
    parser.add_argument("--count", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.workload or args.count is not None:
        if not args.workload or args.count is None or args.count < 0:
            parser.error("--workload and --count (0 or more) go together (the script runs itself with them)")
        WORKLOADS[args.workload](args.count if args.workload not in _ALL_OR_NONE else min(args.count, 1))
        return 0
    names = [name for name in args.measures.split(",") if name]
    unknown = [name for name in names if name not in MEASURES]
    if unknown:
        parser.error(f"unknown measures {unknown}; known: {', '.join(MEASURES)}")
    if shutil.which("valgrind") is None:
        parser.error("valgrind is not installed (Debian: apt-get install valgrind)")
    result: dict[str, Any] = {"now": {name: per_unit(sys.executable, name) for name in names}}
    if args.before:
        result["before"] = {name: per_unit(args.before, name) for name in names}
    table = markdown(result)
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "instructions.json").write_text(json.dumps(result, indent=1) + "\n")
        command = " ".join(
            ["python benchmarks/instructions.py", *(argv if argv is not None else sys.argv[1:])]
        )
        (out / "instructions.md").write_text(f"<!-- made by: {command} -->\n\n{table}\n")
    print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
