"""Instructions per unit of work, counted by valgrind's callgrind: a speed figure the machine's load cannot move.

On a shared or virtual machine the CPU clock of the same run moves by a third from one
minute to the next; the number of instructions a piece of work executes does not. Each
measure runs its workload under ``valgrind --tool=callgrind`` in a new process: the
set-up first (imports, the eval split built, statements compiled, a warm-up), then
``count`` units of work inside a window (:func:`counted`: the units run in a Python
callback that C calls, and callgrind collects only inside that callback), and reports the
window's instructions divided by ``count``. The same measure counted again in another
process gives the same count, or one a few hundred instructions apart in tens of
millions: the set-up, whose count moves between processes by up to 28M (identity-keyed
caches, memory layout), is outside the window. The analyst's measures (``WHOLE_PROCESS``)
are counted over the whole process less a run with no units, because their work runs on
other threads too, which the window does not see; their counts move by that start-up
spread divided by their units. With ``--before PYTHON`` every measure is also counted
under another interpreter, one whose ``batchgate_gym`` is an earlier checkout (installed
in its own virtual environment), and the table gives both and the change. Instructions
are not time (a cache miss costs more than an add), so a change is confirmed on the
clock too, in turn; but they say which way the work went whatever the machine was doing.
Each child runs with ``PYTHONHASHSEED=0``, so string hashes (and the layouts of sets and
dicts of strings) are the same in every count.

    python benchmarks/instructions.py [--measures careful,gate_reset,...] [--before PYTHON]
        [--before-counts JSON] [--jobs N] [--out DIR]

``--before-counts`` takes the before column from the ``instructions.json`` of an earlier
run (its "now", counted under the earlier checkout's Python), so a long count of the
code a change starts from is taken once. A reset counted by phase (``PHASES``) gets a
second table: each phase's instructions, the difference of two measures.

The script runs itself as the workload (``--workload NAME --count N``), importing the
package only there, so that an older checkout can run the same workloads.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import importlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

STORES = ("sqlite", "duckdb", "lake", "files")  # the analyst's, each reset to on its own
# name -> (what one unit is, units counted)
MEASURES: dict[str, tuple[str, int]] = {
    "careful": ("careful episode, eval split, warm (text interface, graded)", 100),
    "naive": ("naive episode, eval split, warm (text interface, graded)", 200),
    "evaluate": (
        "careful episode of evaluate over the eval split, warm (the bench's careful loop plus evaluate's own work)",
        96,
    ),
    "gate_reset": ("fresh procedural reset of BadBatchGate-v0", 100),
    "refund_reset": ("fresh procedural reset of RefundDesk-v0", 200),
    "cold_file": ("careful episode of evaluate over a fresh 40-case file, in a new process", 40),
    "gate_macro": ("BadBatchGateMacro-v0 step, random masked moves, eval split, warm", 500),
    "refund_macro": ("RefundDeskMacro-v0 step, random masked moves, eval split, warm", 750),
    # The text call each macro move stands for, sent as its text action to a bare text
    # environment on the same state (the same resets and moves, replayed).
    "gate_text_call": ("BadBatchGate-v0 step of a macro move's text action, same states as gate_macro", 500),
    "refund_text_call": (
        "RefundDesk-v0 step of a macro move's text action, same states as refund_macro",
        750,
    ),
    # A fresh reset by phase: each measure is the reset's path up to the end of a phase,
    # so a phase is the difference of two rows (the last phase: the full reset's row).
    "gate_generate": ("gate reset phase: generate (the generator's dict)", 100),
    "gate_check": ("gate reset phase: up to check (the case made typed, and its digest)", 100),
    "gate_build": ("gate reset phase: up to build (the case's SQLite image)", 100),
    "gate_first_episode": ("fresh procedural reset of BadBatchGate-v0 and careful's episode on it", 30),
    "refund_generate": ("refund reset phase: generate (the generator's dict)", 200),
    "refund_check": ("refund reset phase: up to check (the case made typed, and its digest)", 200),
    **{
        f"analyst_{part}_{store}": (f"analyst procedural {what}, store {store}", 3)
        for store in STORES
        for part, what in (("case", "case built (no reset)"), ("reset", "reset (its case built)"))
    },
    # The world's part of a reset alone: its case built before the window opens. It runs
    # on the calling thread (a store opens at its first query), so the window sees it all
    # and the count is exact, where the whole-process measures' difference is not.
    **{
        f"analyst_world_{store}": (
            f"analyst reset to a case already built, store {store} (the world's part: log and task)",
            20,
        )
        for store in STORES
    },
}
# A reset's phases: each phase measure counts the reset's path up to the end of its phase,
# so a phase is its measure less the measures named after it.
PHASES: dict[str, tuple[tuple[str, str, tuple[str, ...]], ...]] = {
    "gate_reset": (
        ("generate", "gate_generate", ()),
        ("check (typed, digest)", "gate_check", ("gate_generate",)),
        ("build (the SQLite image)", "gate_build", ("gate_check",)),
        ("reset (restore, log, task)", "gate_reset", ("gate_build",)),
        (
            "first compile (first careful episode, less a warm one)",
            "gate_first_episode",
            ("gate_reset", "careful"),
        ),
    ),
    "refund_reset": (
        ("generate", "refund_generate", ()),
        ("check (typed, digest)", "refund_check", ("refund_generate",)),
        ("build and reset (no database: state, log, task)", "refund_reset", ("refund_check",)),
    ),
    **{
        f"analyst_reset_{store}": (
            (
                "generate and check (the question, its dataset made and written, its answer)",
                f"analyst_case_{store}",
                (),
            ),
            # Counted on its own, in the window: the difference of the two whole-process
            # measures moves by their start-up spread over 3 units, more than this phase.
            (
                "the world's reset (log and task; a store opens at its first query)",
                f"analyst_world_{store}",
                (),
            ),
        )
        for store in STORES
    },
}

# Measures counted over the whole process, less a run with no units: their work runs on
# other threads too (polars' and DuckDB's pools), where callgrind's window, which follows
# one thread's calls, would not see it. A new process's start-up moves by up to 28M
# instructions from one run to the next, so these counts move by that over their units.
WHOLE_PROCESS = frozenset(f"analyst_{part}_{store}" for store in STORES for part in ("case", "reset"))

# Whole-process measures whose run with no units is the same run (the same set-up, the
# same warm-up): it is counted once for them all.
SHARED_SET_UP: dict[str, str] = {
    f"analyst_{part}_{store}": f"analyst {store}" for store in STORES for part in ("case", "reset")
}


# The window callgrind counts in: a measure's units run inside a Python callback that C calls
# through ctypes, and callgrind collects only inside ctypes' callback entry
# (``--collect-atstart=no --toggle-collect=_CallPythonObject``). Nothing else in these
# workloads calls a ctypes callback, so the window holds exactly the units' work.
WINDOW_FUNCTION = "_CallPythonObject"


def counted(units: Callable[[], object]) -> None:
    """Run ``units`` inside the counted window: as the comparison of a two-element ``qsort``,
    called once. An exception inside is raised again here (ctypes would only print it)."""
    import ctypes

    failures: list[BaseException] = []
    ran = False

    def compare(_left: Any, _right: Any) -> int:
        nonlocal ran
        if not ran:  # a sort of two compares once; a second call would only add its entry
            ran = True
            try:
                units()
            except BaseException as error:  # carried out of the C frame
                failures.append(error)
        return 0

    callback = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p)(compare)
    pair = (ctypes.c_int * 2)(0, 0)
    ctypes.CDLL(None).qsort(pair, 2, ctypes.sizeof(ctypes.c_int), callback)
    if failures:
        raise failures[0]
    if not ran:
        raise RuntimeError("qsort never called the window's comparison")


def _evaluate_module() -> Any:
    """The module holding ``evaluate`` and ``run_episode``, wherever this checkout keeps it
    (``--before`` runs these workloads on an earlier checkout)."""
    try:
        from batchgate_gym import evaluation

        return evaluation
    except ImportError:
        from batchgate_gym.app import evaluate as module

        return module


def _episodes(policy_name: str) -> Callable[[int], None]:
    def run(count: int) -> None:
        from batchgate_gym.bench.measures import episode_loop, eval_env
        from batchgate_gym.policies.gate.reference import REFERENCE_POLICIES

        env, policy = eval_env(), REFERENCE_POLICIES[policy_name]()
        env.reset(seed=0)
        episode_loop(env, policy, 2 * len(env.source))  # every case built, every statement compiled
        counted(lambda: episode_loop(env, policy, count))

    return run


def _evaluate(count: int) -> None:
    """``count`` careful episodes of ``evaluate`` over the eval split (whole runs of it),
    after two runs that build every case and compile every statement."""
    from batchgate_gym.envs import BatchGateEnv
    from batchgate_gym.policies.gate.reference import REFERENCE_POLICIES

    evaluate = _evaluate_module().evaluate
    careful = REFERENCE_POLICIES["careful"]
    split_size = len(BatchGateEnv(split="eval").source)
    if count % split_size:
        raise ValueError(f"the count of evaluate's episodes is whole runs of the split ({split_size})")
    for _ in range(2):
        evaluate(careful(), split="eval", progress=False)

    def runs() -> None:
        for _ in range(count // split_size):
            evaluate(careful(), split="eval", progress=False)

    counted(runs)


def _resets(env_id: str) -> Callable[[int], None]:
    def run(count: int) -> None:
        import gymnasium as gym

        import batchgate_gym.envs  # noqa: F401  (registers the environments)

        env = gym.make(env_id)
        env.reset(seed=0)

        def resets() -> None:
            for seed in range(1, count + 1):
                env.reset(seed=10**6 + seed)

        counted(resets)

    return run


def _cold_file(count: int) -> None:
    from batchgate_gym.desks.gate.generator import build_case, dumps_case
    from batchgate_gym.kernel.case_files import write_jsonl
    from batchgate_gym.policies.gate.reference import REFERENCE_POLICIES

    evaluate = _evaluate_module().evaluate
    careful = REFERENCE_POLICIES["careful"]
    with tempfile.TemporaryDirectory() as directory:
        folder = Path(directory)
        warm_up = write_jsonl(
            folder / "warm-up.jsonl", (dumps_case(build_case(s)) for s in (8 * 10**6, 8 * 10**6 + 1))
        )
        fresh = write_jsonl(
            folder / "fresh.jsonl",
            (dumps_case(build_case(10**6 + s)) for s in range(MEASURES["cold_file"][1])),
        )
        evaluate(careful(), cases=str(warm_up), progress=False)  # imports and first-use costs
        if count:
            counted(lambda: evaluate(careful(), cases=str(fresh), progress=False))


def _macro_env(desk: str) -> Any:
    if desk == "gate":
        from batchgate_gym.envs.gate.macro import GateMacroEnv

        return GateMacroEnv(split="eval")
    from batchgate_gym.envs.refund.macro import RefundMacroEnv

    return RefundMacroEnv(split="eval")


_MACRO_WARM_UP = 400  # steps: every case built, every statement compiled


# A reset before a move: the case it drew and the opening's text action (``None``: no reset).
Opened = tuple[str, str] | None


def _macro_moves(env: Any, count: int) -> Iterator[tuple[Opened, int, str]]:
    """``count`` random masked moves on ``env``, reset with seed 0 first: each move with
    the reset before it (the first move's is the seeded one), its index and its text action."""
    import numpy as np

    rng = np.random.default_rng(0)
    _vector, info = env.reset(seed=0)
    opened: Opened = (info["case_id"], info["text_action"])
    for _ in range(count):
        allowed = np.flatnonzero(env.action_masks())
        index = int(allowed[rng.integers(len(allowed))])
        *_, terminated, truncated, info = env.step(index)
        yield opened, index, info["text_action"]
        opened = None
        if terminated or truncated:
            _vector, info = env.reset()
            opened = (info["case_id"], info["text_action"])


def _replayed(
    desk: str, count: int, begin: Callable[[int | None, str], str], move: Callable[[int, str], None]
) -> None:
    """The desk's macro moves drawn on one macro env (all the measure's moves, in both runs:
    the same set-up), then the warm-up's and ``count`` more played again on a fresh
    environment: ``begin(seed, opening)`` resets it (the first with seed 0, as the draw) and
    returns the case drawn; ``move(index, text_action)`` plays a move. Both measures of a
    desk replay the same moves this way, so each plays them on the same states with the
    same process caches (every statement the moves send compiled once already, every case
    built), and neither counts the draw."""
    moves = list(_macro_moves(_macro_env(desk), _MACRO_WARM_UP + MEASURES[f"{desk}_macro"][1]))

    def play(first: int, end: int) -> None:
        for number in range(first, end):
            opened, index, text_action = moves[number]
            if opened is not None:
                case, opening = opened
                drawn = begin(0 if number == 0 else None, opening)
                if drawn != case:
                    raise RuntimeError(f"the replay drew case {drawn}, the macro env {case}")
            move(index, text_action)

    play(0, _MACRO_WARM_UP)
    counted(lambda: play(_MACRO_WARM_UP, _MACRO_WARM_UP + count))


def _macro(desk: str) -> Callable[[int], None]:
    """Macro steps: the drawn moves replayed on a fresh macro env."""

    def run(count: int) -> None:
        macro = _macro_env(desk)

        def begin(seed: int | None, _opening: str) -> str:
            return str(macro.reset(seed=seed)[1]["case_id"])

        _replayed(desk, count, begin, lambda index, _text: macro.step(index))

    return run


def _text_calls(desk: str) -> Callable[[int], None]:
    """The text calls the macro moves stand for: a bare text environment, each reset
    followed by the macro env's opening action, each move's text action replayed."""

    def run(count: int) -> None:
        macro = _macro_env(desk)
        text = macro.text_env.__class__(split="eval")
        macro.close()

        def begin(seed: int | None, opening: str) -> str:
            case = str(text.reset(seed=seed)[1]["case_id"])
            text.step(opening)
            return case

        _replayed(desk, count, begin, lambda _index, action: text.step(action))

    return run


def _phase_cases(desk: str, typed: bool, built: bool = False) -> Callable[[int], None]:
    """Fresh procedural cases up to the end of a phase: the generator's dict, then the typed
    case and its digest, then (the gate) its image. The warm-up case goes the whole way in
    every phase's run, so their runs with no units are one run."""

    def run(count: int) -> None:
        package = f"batchgate_gym.desks.{desk}"
        generator = importlib.import_module(f"{package}.generator")
        sources = importlib.import_module(f"{package}.sources")
        world = importlib.import_module(f"{package}.world")

        def case(seed: int, typed: bool, built: bool) -> None:
            if not typed:
                generator.build_case(seed)
                return
            made = sources.build_procedural(seed)
            made.digest  # noqa: B018  (the digest is made on first use)
            if built and desk == "gate":
                world.prepare(made)

        case(8 * 10**6, True, True)  # first-use costs

        def cases() -> None:
            for seed in range(1, count + 1):
                case(10**6 + seed, typed, built)

        counted(cases)

    return run


def _first_episode(count: int) -> None:
    from batchgate_gym.envs import BatchGateEnv
    from batchgate_gym.policies.gate.reference import REFERENCE_POLICIES

    env, policy = BatchGateEnv(), REFERENCE_POLICIES["careful"]()
    run_episode = _evaluate_module().run_episode
    run_episode(env, policy, 0, {"seed": 0})  # first-use costs

    def episodes() -> None:
        for seed in range(1, count + 1):
            run_episode(env, policy, seed, {"seed": 10**6 + seed})

    counted(episodes)


def _analyst(part: str, store: str) -> Callable[[int], None]:
    """Fresh procedural analyst cases asking in ``store``: built (question and data spec),
    reset to (the world and its stores on that case, the case built too), or (``world``)
    reset to after every case was built, the resets alone counted in the window. The
    dataset cache is a new folder in each run, so no run finds another's datasets on
    disk; the warm-up case is built and reset to in every part's run, so the whole-process
    parts' runs with no units are one run."""

    def run(count: int) -> None:
        with tempfile.TemporaryDirectory() as cache:
            os.environ["BATCHGATE_ANALYST_CACHE"] = cache
            # One polars thread: a pool's workers spin a while before they sleep, and the
            # instructions they spin would move with the machine's timing.
            os.environ["POLARS_MAX_THREADS"] = "1"
            from batchgate_gym.desks.analyst.sources import build_procedural
            from batchgate_gym.envs.analyst.text import AnalystDeskEnv

            env = AnalystDeskEnv()
            build_procedural(8 * 10**6, store=store).digest  # noqa: B018
            env.reset(seed=0, options={"store": store, "case_seed": 8 * 10**6})

            def resets() -> None:
                for seed in range(1, count + 1):
                    env.reset(seed=seed, options={"store": store, "case_seed": 10**6 + seed})

            if part == "reset":
                resets()
            else:
                for seed in range(1, count + 1):  # each built once per process, then kept
                    build_procedural(10**6 + seed, store=store).digest  # noqa: B018
                if part == "world":
                    counted(resets)
            env.close()

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
    "gate_text_call": _text_calls("gate"),
    "refund_text_call": _text_calls("refund"),
    "gate_generate": _phase_cases("gate", typed=False),
    "gate_check": _phase_cases("gate", typed=True),
    "gate_build": _phase_cases("gate", typed=True, built=True),
    "gate_first_episode": _first_episode,
    "refund_generate": _phase_cases("refund", typed=False),
    "refund_check": _phase_cases("refund", typed=True),
    **{
        f"analyst_{part}_{store}": _analyst(part, store)
        for store in STORES
        for part in ("case", "reset", "world")
    },
}
# The cold file counts all its cases or none: its count is its file's size.
_ALL_OR_NONE = {"cold_file"}


def instructions(python: str, workload: str, count: int) -> int:
    """Instructions callgrind counts for ``python`` running ``workload`` over ``count`` units:
    in the window around its units (:func:`counted`), or in the whole process for a measure
    whose work runs on other threads too (``WHOLE_PROCESS``)."""
    command = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null"]
    if workload not in WHOLE_PROCESS:
        command += ["--collect-atstart=no", f"--toggle-collect={WINDOW_FUNCTION}"]
    command.append(python)
    command += [str(Path(__file__).resolve()), "--workload", workload, "--count", str(count)]
    fixed = {**os.environ, "PYTHONHASHSEED": "0"}  # the same str hashes, so set and dict layouts
    done = subprocess.run(command, capture_output=True, text=True, cwd=tempfile.gettempdir(), env=fixed)
    found = re.search(r"Collected\s*:\s*(\d+)", done.stderr)
    if done.returncode != 0 or found is None:
        raise RuntimeError(f"{workload} under callgrind failed ({done.returncode}): {done.stderr[-2000:]}")
    return int(found.group(1))


def counts(runs: list[tuple[str, str, int]], jobs: int) -> dict[tuple[str, str, int], int]:
    """The instructions of each ``(python, workload, count)`` run, ``jobs`` runs at a time
    (each run is a process of its own; running others beside it moves no count)."""
    with concurrent.futures.ThreadPoolExecutor(max(1, jobs)) as pool:
        done = pool.map(lambda run: instructions(*run), runs)
        return dict(zip(runs, done, strict=True))


def per_unit(pythons: dict[str, str], names: list[str], jobs: int = 1) -> dict[str, dict[str, float]]:
    """Instructions per unit of each measure under each interpreter (``{"now": python, ...}``):
    its window's count over its units, or for a whole-process measure its run with its
    units less its run with none (shared by measures of one set-up)."""
    zero_of = {name: SHARED_SET_UP.get(name, name) for name in names if name in WHOLE_PROCESS}
    zero_runs = {key: name for name, key in reversed(zero_of.items())}  # one workload per set-up
    runs = [(python, name, MEASURES[name][1]) for python in pythons.values() for name in names]
    runs += [(python, name, 0) for python in pythons.values() for name in zero_runs.values()]
    counted = counts(list(dict.fromkeys(runs)), jobs)
    return {
        side: {
            name: (
                counted[python, name, MEASURES[name][1]]
                - (counted[python, zero_runs[zero_of[name]], 0] if name in zero_of else 0)
            )
            / MEASURES[name][1]
            for name in names
        }
        for side, python in pythons.items()
    }


def markdown(result: dict[str, Any]) -> str:
    before = result.get("before")
    header = "| measure | instructions per unit, now |"
    rule = "|---|---:|"
    if before is not None:
        header = "| measure | instructions per unit, before | now | change |"
        rule = "|---|---:|---:|---:|"
    rows = [header, rule]
    for name, now in result["now"].items():
        rows.append(_row(MEASURES[name][0], now, before, name))
    return "\n".join(rows + _phase_tables(result) + _macro_table(result["now"]))


def _macro_table(now: dict[str, float]) -> list[str]:
    """Each desk's macro step beside the text call it stands for (target: at most 1.00x)."""
    desks = [desk for desk in ("gate", "refund") if {f"{desk}_macro", f"{desk}_text_call"} <= now.keys()]
    if not desks:
        return []
    lines = ["", "| desk | macro step | its text call, same state | macro / text |", "|---|---:|---:|---:|"]
    for desk in desks:
        macro, text = now[f"{desk}_macro"], now[f"{desk}_text_call"]
        lines.append(f"| {desk} | {macro:,.0f} | {text:,.0f} | {macro / text:.2f}x |")
    return lines


def _row(label: str, now: float, before: dict[str, float] | None, name: str) -> str:
    """A table row: the now count, and with a before column its count and the change
    (a measure the before run did not count says so)."""
    if before is None:
        return f"| {label} | {now:,.0f} |"
    if name not in before:
        return f"| {label} | not counted | {now:,.0f} |  |"
    then = before[name]
    return f"| {label} | {then:,.0f} | {now:,.0f} | {now / then - 1:+.1%} |"


def _phase_tables(result: dict[str, Any]) -> list[str]:
    """A table per reset counted by phase: each phase whose measures were all counted."""
    lines: list[str] = []
    now, before = result["now"], result.get("before")
    for reset, phases in PHASES.items():
        counted = [
            (label, measure, less) for label, measure, less in phases if {measure, *less} <= now.keys()
        ]
        if reset not in now or len(counted) < 2:
            continue
        head = "| phase | before | now | change |" if before is not None else "| phase | now |"
        rule = "|---|---:|---:|---:|" if before is not None else "|---|---:|"
        lines += ["", f"{MEASURES[reset][0]}, by phase:", "", head, rule]
        for label, measure, less in counted:
            phase_now = now[measure] - sum(now[name] for name in less)
            if before is not None and {measure, *less} <= before.keys():
                phase_then = {label: before[measure] - sum(before[name] for name in less)}
            else:
                phase_then = {} if before is not None else None
            lines.append(_row(label, phase_now, phase_then, label))
    return lines


def _read_counts(
    parser: argparse.ArgumentParser, files: str, names: list[str], needed: bool
) -> dict[str, float]:
    """The "now" counts of the named measures from earlier runs' instructions.json files
    (each run counted some measures); every one when ``needed``, else those counted."""
    counted: dict[str, float] = {}
    for file in files.split(","):
        counted.update(json.loads(Path(file).read_text())["now"])
    missing = [name for name in names if name not in counted]
    if needed and missing:
        parser.error(f"{files} has no count of {', '.join(missing)}")
    return {name: counted[name] for name in names if name in counted}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument(
        "--measures", default=",".join(MEASURES), help="comma-separated: " + ", ".join(MEASURES)
    )
    parser.add_argument("--before", default=None, help="a Python whose batchgate_gym is an earlier checkout")
    parser.add_argument(
        "--before-counts",
        default=None,
        help="instructions.json files of earlier runs (comma-separated): their now is the before",
    )
    parser.add_argument(
        "--now-counts",
        default=None,
        help="instructions.json files of earlier runs (comma-separated): their now, not counted again",
    )
    parser.add_argument("--jobs", type=int, default=1, help="callgrind runs at a time (counts do not move)")
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
    if args.before and args.before_counts:
        parser.error("give --before or --before-counts, not both")
    if args.now_counts:
        result: dict[str, Any] = {"now": _read_counts(parser, args.now_counts, names, needed=True)}
    else:
        if shutil.which("valgrind") is None:
            parser.error("valgrind is not installed (Debian: apt-get install valgrind)")
        pythons = {"now": sys.executable, **({"before": args.before} if args.before else {})}
        result = per_unit(pythons, names, args.jobs)
    if args.before_counts:
        result["before"] = _read_counts(parser, args.before_counts, names, needed=False)
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
