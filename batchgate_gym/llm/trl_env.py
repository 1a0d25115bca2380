"""The desks as environments for TRL's ``GRPOTrainer(environment_factory=...)``.

TRL (1.16) trains a model on an environment through a zero-argument factory that
builds one instance per concurrent rollout; instances are kept and reused. Of
such an instance it reads three things:

* its **tools**: every public method of the class except ``reset`` and
  ``get_reward`` (methods whose names start with ``_`` are skipped). Each is
  shown to the model as a JSON schema that ``transformers.utils.get_json_schema``
  builds from the method's type hints and its Google-style docstring (a summary,
  then ``Args:`` naming every parameter). A tool call the model writes is made as
  ``method(**arguments)``; whatever it returns, made a string, is the ``tool``
  message the model reads next, and an exception becomes ``{"error": ...}``;
* ``reset(**row)``, called before each rollout with every field of the dataset
  row; a string it returns is appended to the prompt's last user message;
* ``get_reward()``, called once per finished rollout, with no argument, for the
  rollout's reward.

Each desk's spec names its class of such instances (``trl_env``, a subclass of
:class:`DeskToolEnv` in ``envs/NAME/trl.py``, checked and documented by :func:`desk_tools`; the refund
desk's offers ``void_refund`` too with recovery on). Their public methods are the desk's tools, declared with the desk's
parameters and types; their docstrings are written from the desk's own
:class:`~batchgate_gym.kernel.codec.ToolSpec` (the words an agent reads
everywhere else), so the schemas TRL builds are the desk's ``tool_schemas()``.
Each method is one step of the desk's text environment with a single JSON call,
and returns that step's observation (turn header, the call and its result, and
the end of the episode when it ends there): the environment's codec refuses a
bad argument, its log records every call, its grader scores the episode. A call
whose arguments do not fit the declaration (one missing, one unknown) is not
refused by Python either: it is sent as the model wrote it, for the
environment to refuse and log like any malformed call.

Each call is a turn of the environment (a chat message with several calls is
one turn under ``batchgate run-model``; TRL runs every call of a message, one
after the other, each as its own method call), so the desk's turn limit counts
calls here. Once the episode has ended, a further call
reaches nothing and raises (TRL shows the model the error).

``reset(seed=..., case_index=...)`` starts an episode like ``env.reset(seed=seed,
options={"case_index": case_index})``: the same seed gives the same case in any
process; ``case_index`` picks the i-th of the fixed cases the instance was made
with. Other row fields (``prompt``) are ignored. It returns the whole reset
observation (brief, tools, case). ``get_reward()`` is the reward the environment
paid on the episode's last step (the desk's score, on termination or at the turn
limit). TRL asks for it once the rollout is over, and a rollout can be over before
its episode is: the model stopped calling tools (a closing message without a tool
call, which under TRL does not reach the refund desk's ``reply``) or TRL's own limit
on tool-calling turns stopped it. Such an episode is ended there and scored as the
turn limit scores it (:meth:`~batchgate_gym.envs.text_env.TextDeskEnv.end_unfinished`,
the log sealed with :data:`UNFINISHED`), as ``batchgate run-model`` and the
verifiers adapter score a rollout cut short: a fixed 0 would have paid more than
the desk does for damage already done (a refund paid twice scores below 0), and
less than it does for work already right.

:func:`environment_factory` gives the factory for a desk, and
:func:`episode_rows` dataset rows (an empty user prompt, a seed, optionally a case
index) for ``datasets.Dataset.from_list``. Nothing here imports TRL.
"""

from __future__ import annotations

import functools
import inspect
import json
from collections.abc import Callable, Iterable, Mapping
from types import GenericAlias
from typing import Any, TypeVar, get_type_hints

from batchgate_gym.desks import registry
from batchgate_gym.desks.registry import load
from batchgate_gym.kernel.codec import Param, ToolSpec

RETURNS = "The environment's observation for this call: the turn, the call and its result."
UNFINISHED = "the rollout ended before the episode did"  # the seal's reason for such an episode
NOT_TOOLS = frozenset({"reset", "get_reward"})  # the public methods TRL does not offer as tools

EnvT = TypeVar("EnvT", bound="DeskToolEnv")


class EpisodeOver(RuntimeError):
    """A tool was called after the episode ended; nothing reached the desk."""


class DeskToolEnv:
    """One desk's text environment behind TRL's environment interface.

    ``cases`` and ``env_kwargs`` are passed to the desk's ``make_env`` (``None``:
    fresh cases drawn from each reset's seed). Subclasses declare the desk's tools
    as methods (see :func:`desk_tools`).
    """

    desk_name: str = ""
    tool_specs: Mapping[str, ToolSpec] = {}

    @classmethod
    def _class_for(cls, env_kwargs: Mapping[str, Any]) -> type[DeskToolEnv]:
        """The class that offers every tool ``env_kwargs`` enable: this one, unless a desk's
        option adds tools (named with ``_``: TRL offers every public method as a tool)."""
        return cls

    def __init__(self, cases: Any = None, **env_kwargs: Any) -> None:
        self.env = registry.get(self.desk_name).make_env(cases, **env_kwargs)
        self.observations: list[str] = []  # the reset observation, then one per call
        self._started = False
        self._done = False
        self._reward = 0.0
        self._info: dict[str, Any] = {}

    def reset(self, seed: int | None = None, case_index: int | None = None, **row: Any) -> str:
        """Start an episode (the seed picks the case; ``case_index`` a fixed one); the task text."""
        options = None if case_index is None else {"case_index": int(case_index)}
        observation, _info = self.env.reset(seed=None if seed is None else int(seed), options=options)
        self.observations = [observation]
        self._started = True
        self._done = False
        self._reward = 0.0
        self._info = {}
        return str(observation)

    def get_reward(self) -> float:
        """The reward the environment paid at the episode's end; an episode still running
        is ended here, unfinished, and scored as the turn limit scores it (0 before any reset)."""
        if self._started and not self._done:
            self._info = dict(self.env.unwrapped.end_unfinished(UNFINISHED))
            self._done = True
            self._reward = float(self._info["score"]["reward"])
        return self._reward

    @property
    def done(self) -> bool:
        """The episode has ended (terminated, or the turn limit reached)."""
        return self._done

    @property
    def final_info(self) -> dict[str, Any]:
        """The last step's ``info`` (``score``, ``log_head``, ...) once the episode ended; else empty."""
        return dict(self._info)

    def _send(self, name: str, arguments: Mapping[str, Any]) -> str:
        """One step of the environment with this single call; its observation."""
        if not self._started:
            raise RuntimeError("call reset() before calling a tool")
        if self._done:
            ending = getattr(getattr(self.env.unwrapped, "adapter", None), "ending", None)
            raise EpisodeOver(getattr(ending, "after_end", "not run: the episode already ended"))
        action = json.dumps([{"name": name, "arguments": dict(arguments)}])
        observation, reward, terminated, truncated, info = self.env.step(action)
        self.observations.append(observation)
        if terminated or truncated:
            self._done = True
            self._reward = float(reward)
            self._info = dict(info)
        return str(observation)


def _annotation(param: Param) -> Any:
    return GenericAlias(list, (param.items,)) if param.kind is list else param.kind


def _docstring(spec: ToolSpec) -> str:
    lines = [spec.description, "", "Args:"]
    lines += [f"    {param.name}: {param.description}" for param in spec.params]
    return "\n".join([*lines, "", "Returns:", f"    {RETURNS}"])


def _check_declaration(cls: type, method: Callable[..., Any], spec: ToolSpec) -> None:
    """The method takes the spec's parameters, in order, with its types and defaults, and returns text."""
    where = f"{cls.__name__}.{spec.name}"
    parameters = list(inspect.signature(method).parameters.values())[1:]  # after self
    hints = get_type_hints(method)
    if [p.name for p in parameters] != [param.name for param in spec.params]:
        raise TypeError(f"{where}: parameters {[p.name for p in parameters]} are not the desk's")
    for declared, param in zip(parameters, spec.params, strict=True):
        if hints.get(param.name) != _annotation(param):
            raise TypeError(f"{where}: {param.name} is not annotated {_annotation(param)}")
        default = inspect.Parameter.empty if param.required else param.default
        if declared.default != default or declared.kind is not inspect.Parameter.POSITIONAL_OR_KEYWORD:
            raise TypeError(f"{where}: {param.name} does not take the desk's default")
    if hints.get("return") is not str:
        raise TypeError(f"{where}: a tool returns the observation text (str)")


def _as_tool(method: Callable[..., str], spec: ToolSpec) -> Callable[..., str]:
    """The declared method, documented from the spec, sending ill-fitting calls to the desk as written."""
    signature = inspect.signature(method)

    @functools.wraps(method)
    def tool(self: DeskToolEnv, *args: Any, **kwargs: Any) -> str:
        try:
            signature.bind(self, *args, **kwargs)
        except TypeError:  # a missing or unknown argument: the desk's codec refuses and logs it
            if args:
                kwargs = {**dict(zip((p.name for p in spec.params), args, strict=False)), **kwargs}
            return self._send(spec.name, kwargs)
        return method(self, *args, **kwargs)

    tool.__doc__ = _docstring(spec)
    return tool


def desk_tools(cls: type[EnvT]) -> type[EnvT]:
    """Check ``cls``'s public methods against its desk's tools and document them from the specs.

    Raises ``TypeError`` when a tool is missing, a public method is not a tool, or
    a declaration differs from the desk's parameters, types or defaults.
    """
    declared = {
        name
        for name, _ in inspect.getmembers(cls, predicate=inspect.isfunction)
        if not name.startswith("_") and name not in NOT_TOOLS
    }
    if declared != set(cls.tool_specs):
        raise TypeError(
            f"{cls.__name__}: tools {sorted(declared)} are not the desk's {sorted(cls.tool_specs)}"
        )
    for name, spec in cls.tool_specs.items():
        if name not in cls.__dict__:  # inherited from a checked class: the same spec, or refused
            if getattr(cls, name).__doc__ != _docstring(spec):
                raise TypeError(f"{cls.__name__}.{name}: inherited, but the desk's {name} is another tool")
            continue
        method = cls.__dict__[name]
        _check_declaration(cls, method, spec)
        setattr(cls, name, _as_tool(method, spec))
    return cls


def trl_desks() -> tuple[str, ...]:
    """The desks that declare a TRL class (``trl_env`` in their spec)."""
    return tuple(name for name in registry.names() if registry.get(name).trl_env is not None)


def tool_env_class(desk: str, **env_kwargs: Any) -> type[DeskToolEnv]:
    """``desk``'s TRL class, the one that offers every tool ``env_kwargs`` enable."""
    declared = registry.get(desk).trl_env if desk in registry.names() else None
    if declared is None:
        raise KeyError(f"no TRL environment for desk {desk!r}; known: {', '.join(trl_desks())}")
    cls: type[DeskToolEnv] = load(declared)
    return cls._class_for(env_kwargs)


def environment_factory(desk: str, cases: Any = None, **env_kwargs: Any) -> Callable[[], DeskToolEnv]:
    """A zero-argument factory of ``desk``'s tool environment, for ``GRPOTrainer(environment_factory=...)``.

    The class offers every tool the settings enable: ``environment_factory("refund",
    recovery=True)`` makes the refund desk's class with ``void_refund``.
    """
    return functools.partial(tool_env_class(desk, **env_kwargs), cases, **env_kwargs)


def episode_rows(
    seeds: Iterable[int], *, case_indices: bool = False, prompt: str = ""
) -> list[dict[str, Any]]:
    """Dataset rows, one episode each: a user prompt (the reset observation is appended to it) and a seed.

    With ``case_indices`` each row also plays the fixed case of index ``seed``.
    """
    rows = []
    for seed in seeds:
        row: dict[str, Any] = {"prompt": [{"role": "user", "content": prompt}], "seed": int(seed)}
        if case_indices:
            row["case_index"] = int(seed)
        rows.append(row)
    return rows


def keep_trained_rewards(trainer: Any) -> list[list[float]]:
    """Keep every reward a TRL ``GRPOTrainer`` computes: the list it returns gains, at each
    step, the rewards of that step's rollouts (the last reward column: with
    ``environment_factory``, what each environment's ``get_reward()`` paid), so a run can
    hold them to the desk's score of the same calls."""
    kept: list[list[float]] = []
    calculate = trainer._calculate_rewards

    def keeping(*args: Any, **kwargs: Any) -> Any:
        rewards = calculate(*args, **kwargs)
        kept.append([float(value) for value in rewards[:, -1].tolist()])
        return rewards

    trainer._calculate_rewards = keeping
    return kept


__all__ = [
    "NOT_TOOLS",
    "RETURNS",
    "UNFINISHED",
    "DeskToolEnv",
    "EpisodeOver",
    "desk_tools",
    "environment_factory",
    "episode_rows",
    "keep_trained_rewards",
    "tool_env_class",
    "trl_desks",
]
