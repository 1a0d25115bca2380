"""``batchgate play``: play one case of a desk yourself, in the terminal.

Playing a case by hand is the quickest way to see what an agent sees: the task
text first, then one action per line (the same syntax a policy sends), each
answered with the environment's observation, and the score with every term at
the end. ``--case`` picks a fixed case by id (from ``--cases`` or a split, eval by
default); otherwise a case is drawn with ``--seed`` (a procedural one unless
``--cases`` or ``--split`` is given). The turn budget is the desk's own (the gate
30, a refund ticket 12, an analyst question 16) unless ``--max-turns`` sets it,
and the episode ends as the desk's does (a report, a reply to the customer, an
answer or a decline). ``:quit`` (or end of input) stops before that: nothing is
scored. ``--record FILE`` appends an episode that ended to FILE as a result row, the
row ``batchgate run-model`` writes (the conversation in its text mode, the score, the
exported log and its head), so ``batchgate report --results`` re-grades it and
``batchgate view`` shows it; a row names its case by split or case file, so a recorded
case is a fixed one (``--split``, ``--cases`` or ``--case``). ``--policy NAME`` lets a
policy of the desk (a reference policy or an attacker) play instead of you, each of its
actions shown after the prompt as if typed, and recorded under its name.
"""

from __future__ import annotations

import argparse
import contextlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from batchgate_gym.desks import registry
from batchgate_gym.desks.registry import DEFAULT_DESK
from batchgate_gym.kernel.episode import MAX_TURNS

from .shared import UsageError, add_case_source, desk_of, env_kwargs, int_in

QUIT = ":quit"
PROMPT = "action> "
SCORE_BANNER = "=== score ==="
TAKES_DESK_OPTIONS = True  # plays the desk's environment: --rules, --recovery, ... apply


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_case_source(parser, default="procedural cases")
    parser.add_argument(
        "--case", metavar="CASE_ID", help="play this case (eval split unless --cases/--split)"
    )
    parser.add_argument("--seed", type=int_in(0), default=None, help="seed for drawing the case")
    parser.add_argument(
        "--max-turns",
        type=int_in(1, MAX_TURNS),
        default=None,
        help="turn limit (default: the desk's own, which the task text states)",
    )
    parser.add_argument(
        "--policy",
        metavar="NAME",
        help="let this policy of the desk play instead of you (careful, naive, an attacker ...)",
    )
    parser.add_argument(
        "--record",
        metavar="FILE.jsonl",
        help="append the episode, once it ends, as a result row (for report --results and view)",
    )


def unused_options(args: argparse.Namespace, desk: registry.DeskSpec) -> dict[str, str]:
    """``--seed`` draws a case; with ``--case`` naming one, nothing is drawn. A recorded
    row names its case by split or file, which a drawn procedural case has not."""
    unused = {"seed": "--case names the case to play, so no case is drawn"} if args.case else {}
    if not (args.cases or args.split or args.case):
        unused["record"] = "a recorded case must be re-gradable: play one of --split, --cases or --case"
    return unused


def build_env(args: argparse.Namespace) -> tuple[Any, dict[str, Any]]:
    """The environment and the reset arguments the options ask for."""
    desk = desk_of(args)
    cases: Any = None
    if args.cases or args.split or args.case:
        cases = desk.fixed_cases(args.cases, args.split)
    turns = {} if args.max_turns is None else {"max_turns": args.max_turns}  # None: the desk's own
    env = desk.make_env(cases, **turns, **env_kwargs(args, desk, cases))
    reset: dict[str, Any] = {"seed": args.seed}
    if args.case:
        reset["options"] = {"case_id": args.case}
    return env, reset


def play(
    env: Any,
    reset_kwargs: dict[str, Any],
    read_line: Callable[[str], str],
    write: Callable[[str], None],
    desk: registry.DeskSpec | str = DEFAULT_DESK,
    steps: list[tuple[str, str]] | None = None,
    skip_blank: bool = True,
) -> dict[str, Any]:
    """One episode driven by a person; returns the last step's info (with the score if it ended).

    ``steps``, when given, receives the opening observation as ``("", text)`` and then
    each step's ``(action, observation)``. A person's blank line is skipped; with
    ``skip_blank=False`` (a policy's lines) it is sent as the action it is."""
    info: dict[str, Any]  # Gymnasium's reset and step info
    try:
        observation, info = env.reset(**reset_kwargs)
    except ValueError as exc:  # a case id or index the cases lack: said as the command's reason
        raise registry.CaseSourceError(str(exc)) from exc
    write(observation)
    if steps is not None:
        steps.append(("", observation))
    ending, turns = _ending(env)
    write(
        f"\nOne action per line; the episode ends at {ending}{turns}. {QUIT} stops it before that, unscored."
    )
    while True:
        try:
            line = read_line(PROMPT)
        except EOFError:
            line = QUIT
        if skip_blank and not line.strip():
            continue
        if line.strip() == QUIT:
            write(f"Stopped before {ending}: the episode did not end, and nothing is scored.")
            return info
        observation, _reward, terminated, truncated, info = env.step(line)
        write(observation)
        if steps is not None:
            steps.append((line, observation))
        if terminated or truncated:
            write(score_text(info, desk))
            return info


def _ending(env: Any) -> tuple[str, str]:
    """How the environment's episodes end, as play states it: the desk's own ending (a
    text environment's ``adapter.ending``) and `` or after turn T`` from its limits; a
    desk's environment of another make says what it can."""
    unwrapped = env.unwrapped
    adapter, limits = getattr(unwrapped, "adapter", None), getattr(unwrapped, "limits", None)
    ending = f"'{adapter.ending.finished}'" if adapter is not None else "the desk's end"
    turns = limits.max_turns if limits is not None else getattr(unwrapped, "max_turns", None)
    return ending, "" if turns is None else f" or after turn {turns}"


def score_text(info: dict[str, Any], desk: registry.DeskSpec | str = DEFAULT_DESK) -> str:
    """The end of a played episode: the case, the reward, every term and every shown metric."""
    desk = registry.get(desk) if isinstance(desk, str) else desk
    score = info["score"]
    family = f" ({info['family']})" if info.get("family") else ""
    lines = [
        SCORE_BANNER,
        f"case {info['case_id']}{family}",
        f"reward {score['reward']:.4f}",
        *(f"  {term:<12} {score[term]:.4f}" for term in desk.scoring.terms),
    ]
    for metric in desk.scoring.shown_metrics:
        value = metric.read(info)
        phrase = metric.phrase or metric.row or metric.name
        if metric.out_of is not None:
            lines.append(f"{phrase}: {value} of {desk.scoring.metric(metric.out_of).read(info)}")
        else:
            lines.append(f"{phrase}: {metric.text(value)}")
    return "\n".join(lines)


PLAYER = "play"  # the model name of a row you played; a policy's row carries the policy's name


def policy_lines(
    policy: Any, steps: list[tuple[str, str]], write: Callable[[str], None]
) -> Callable[[str], str]:
    """``read_line`` for a policy: its next action on the latest observation, echoed after the prompt."""
    started = False

    def next_line(prompt: str) -> str:
        nonlocal started
        observation = steps[-1][1]
        if not started:
            policy.reset(observation, {"turn": 0, "calls": 0})
            started = True
        action: str = policy.act(observation)
        write(f"{prompt}{action}")
        return action

    return next_line


def named_policy(desk: registry.DeskSpec, name: str) -> Any:
    """A policy of the desk by name, ready to play; an unknown name stops with the known ones."""
    from batchgate_gym.kernel.text_policy import as_policy

    known = desk.policies.known()
    if name not in known:
        raise UsageError(
            f"batchgate play: the {desk.name} desk has no policy {name!r}; known: {', '.join(known)}"
        )
    return as_policy(known[name])


def recorded_row(
    desk: registry.DeskSpec,
    source: str,
    cases: list[Any],
    steps: list[tuple[str, str]],
    info: dict[str, Any],
    log: list[Any],
    player: str = PLAYER,
) -> dict[str, Any]:
    """A finished episode as the row ``run-model`` writes in its text mode."""
    from batchgate_gym.llm.chat import ChatSettings, answer_messages, opening_messages
    from batchgate_gym.llm.runner import info_metrics

    settings = ChatSettings(mode="text")
    messages = opening_messages(steps[0][1])
    for action, observation in steps[1:]:
        assistant = {"role": "assistant", "content": action}
        messages += [assistant, *answer_messages(observation, assistant, settings)]
    index = next(i for i, case in enumerate(cases) if case.case_id == info["case_id"])
    return {
        "desk": desk.name,
        "source": source,
        "case_index": index,
        "case_id": info["case_id"],
        "family": info.get("family", ""),
        "rollout": 0,
        "model": player,
        "mode": "text",
        "messages": messages,
        "score": info["score"],
        "info_metrics": info_metrics(desk, info),
        "log": log,
        "head": info["log_head"],
        "turns": len(steps) - 1,
        "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
        "requests": 0,
        "retries": 0,
        "timing": {},
        "error": None,
    }


def append_row(path: Path, row: dict[str, Any]) -> dict[str, Any]:
    """Append ``row`` as the next rollout of its case and player in ``path``."""
    from batchgate_gym.llm.results import read_rows, trim_partial_line

    if path.exists():
        trim_partial_line(path)
        earlier = [
            r
            for _, r in read_rows(path)
            if (r.get("model"), r.get("case_id")) == (row["model"], row["case_id"])
        ]
        row = {**row, "rollout": len(earlier)}
    with path.open("a", encoding="utf-8") as out:
        out.write(json.dumps(row) + "\n")
    return row


def run(args: argparse.Namespace) -> int:
    with contextlib.suppress(ImportError):  # not on every platform
        import readline  # noqa: F401  (line editing and history for input())
    desk = desk_of(args)
    policy = named_policy(desk, args.policy) if args.policy else None
    env, reset = build_env(args)
    steps: list[tuple[str, str]] = []

    def write(text: str) -> None:
        print(text, flush=True)

    read_line = input if policy is None else policy_lines(policy, steps, write)
    try:
        info = play(env, reset, read_line, write, desk, steps, skip_blank=policy is None)
        log = env.unwrapped.export_log()
    finally:
        env.close()
    if args.record:
        if "score" not in info:
            print(f"Not recorded in {args.record}: the episode did not end.", flush=True)
            return 0
        source = str(args.cases or args.split or desk.cases.default_split or "")
        player = args.policy or PLAYER
        row = recorded_row(desk, source, desk.fixed_cases(args.cases, args.split), steps, info, log, player)
        row = append_row(Path(args.record), row)
        print(f"Recorded in {args.record}: {row['case_id']}, rollout {row['rollout']}.", flush=True)
    return 0
