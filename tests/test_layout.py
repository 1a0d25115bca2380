"""The package layout the design fixes: a core that needs no Gymnasium (only its
registration module touches Gymnasium's registry, and never loads environment code),
a kernel that knows no desk, desks that never import each other, envs and policies
installed inside ``batchgate_gym``, and nothing else at the top level."""

from __future__ import annotations

import ast
import json
import pkgutil
import re
import subprocess
import sys
from pathlib import Path

import pytest

import batchgate_gym

ROOT = Path(__file__).resolve().parent.parent

CORE = ROOT / "batchgate_gym"
# The play loop, wiring, benchmarks, network servers and test helpers, not the core (at any depth): the
# loop, the servers and the benchmarks play the desks' environments, so they stand outside what
# needs no Gymnasium; a desk's ``spec`` names its environment and policies for the registry and
# builds its attack line-up from them when asked.
_NOT_CORE = ("app", "bench", "evaluation", "serving", "spec", "testing", "__main__")
REGISTRATION = "batchgate_gym.registration"
# What the core never imports: learning and multi-agent stacks, the environment code.
_FORBIDDEN = ("gymnasium", "pettingzoo", "torch", "ray", "stable_baselines3", "sb3_contrib")
_OUTSIDE_CORE = ("batchgate_gym.envs", "batchgate_gym.policies", "batchgate_gym.app")


def _modules(folder: Path, installed_as: str) -> dict[str, Path]:
    """Every module under ``folder`` (installed as the package ``installed_as``) by name."""
    modules = {}
    for path in sorted(folder.rglob("*.py")):
        parts = path.relative_to(folder).with_suffix("").parts
        modules[".".join((installed_as, *(p for p in parts if p != "__init__")))] = path
    return modules


def _core_modules() -> dict[str, Path]:
    return {
        module: path
        for module, path in _modules(CORE, "batchgate_gym").items()
        if not any(part in _NOT_CORE for part in (path.relative_to(CORE).parts[0], path.stem))
    }


def _imports(module: str, path: Path) -> list[tuple[str, bool]]:
    """Every module ``path`` imports, resolved to an absolute name, and whether the
    import runs when the module is imported (``False``: inside a function)."""
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    tree = ast.parse(path.read_text(), str(path))
    in_function = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            in_function.update(id(child) for child in ast.walk(node) if child is not node)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            stem = ".".join([*base, *([node.module] if node.module else [])])
            # ``from . import x`` may import a submodule: count both readings.
            names = [stem] + [f"{stem}.{alias.name}" for alias in node.names]
        else:
            continue
        found += [(name, id(node) not in in_function) for name in names]
    return found


def _is_within(name: str, roots: tuple[str, ...]) -> bool:
    return any(name == root or name.startswith(root + ".") for root in roots)


def test_no_core_module_but_registration_imports_gymnasium_or_env_code():
    modules = _core_modules()
    assert {"batchgate_gym.desks.gate.world", "batchgate_gym.kernel.ledger", REGISTRATION} <= set(modules)
    for module, path in modules.items():
        for name, eager in _imports(module, path):
            if module == REGISTRATION:
                # Gymnasium's registry, the standard library and the desk packages (for
                # their ids): the environments are named by string entry point.
                stdlib = name.split(".")[0] in sys.stdlib_module_names
                assert stdlib or _is_within(name, ("gymnasium", "batchgate_gym.desks")), (module, name)
                assert not _is_within(name, _OUTSIDE_CORE), (module, name)
                continue
            assert not _is_within(name, _FORBIDDEN), (module, name)
            assert not _is_within(name, _OUTSIDE_CORE[:2]), (module, name)
            assert not (eager and _is_within(name, _OUTSIDE_CORE)), (module, name)


_PROBE = """
import importlib, json, sys
if sys.argv[1] == "without-gymnasium":
    sys.modules["gymnasium"] = None  # any import of it now fails
for name in json.loads(sys.argv[2]):
    importlib.import_module(name)
registered = None
if sys.modules.get("gymnasium") is not None:
    registry = sys.modules["gymnasium"].registry
    ids = ("batchgate_gym/BadBatchGate-v0", "batchgate_gym/BadBatchGateMacro-v0")
    registered = {env_id: registry[env_id].entry_point for env_id in ids if env_id in registry}
loaded = sorted(name for name, module in sys.modules.items() if module is not None)
print(json.dumps({"modules": loaded, "registered": registered}))
"""


def _probe(mode: str) -> dict:
    core = json.dumps(list(_core_modules()))
    out = subprocess.run(
        [sys.executable, "-c", _PROBE, mode, core], capture_output=True, text=True, check=True
    ).stdout
    return json.loads(out)


@pytest.mark.slow  # a fresh interpreter imports every core module
def test_importing_the_core_loads_no_env_code_and_registers_by_name_only():
    out = _probe("with-gymnasium")
    leaked = [
        name for name in out["modules"] if _is_within(name, _FORBIDDEN[1:]) or _is_within(name, _OUTSIDE_CORE)
    ]
    assert leaked == []
    assert out["registered"] == {
        "batchgate_gym/BadBatchGate-v0": "batchgate_gym.envs.gate.text:BatchGateEnv",
        "batchgate_gym/BadBatchGateMacro-v0": "batchgate_gym.envs.gate.macro:GateMacroEnv",
    }


@pytest.mark.slow  # a fresh interpreter imports every core module
def test_the_core_imports_without_gymnasium_installed():
    out = _probe("without-gymnasium")
    assert "batchgate_gym.desks.gate.world" in out["modules"] and out["registered"] is None
    assert [name for name in out["modules"] if _is_within(name, (*_FORBIDDEN, *_OUTSIDE_CORE))] == []


def test_envs_and_policies_install_inside_the_package(tmp_path):
    probe = (
        "import importlib.util as u, json;"
        "print(json.dumps({n: (s.origin if (s := u.find_spec(n)) else None)"
        " for n in ('envs', 'policies', 'batchgate_gym.envs', 'batchgate_gym.policies')}))"
    )
    # Run away from the checkout, so only what is installed can be found.
    found = json.loads(
        subprocess.run(
            [sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True, check=True
        ).stdout
    )
    assert found["envs"] is None and found["policies"] is None
    # Run from another checkout than the one installed, the tests would test that one's code.
    installed = Path(found["batchgate_gym.envs"]).parent.parent
    assert installed == ROOT, (
        f"the installed package is {installed}'s, not this checkout's: pip install -e {ROOT}"
    )
    assert Path(found["batchgate_gym.policies"]).parent == ROOT / "policies"


# Words of one desk or another: the kernel uses none of them.
_DOMAIN_WORDS = re.compile(
    r"\b(reports?|reported|batch(es|_id)?|list_batches|quarantin\w*|wh_\w+|staging|warehouse|refund\w*)\b",
    re.IGNORECASE,
)


def test_kernel_knows_nothing_of_the_domain():
    kernel = ROOT / "batchgate_gym" / "kernel"
    for path in kernel.glob("*.py"):
        text = path.read_text()
        for word in ("from ..", "batchgate_gym."):
            assert word not in text, (path.name, word)
        assert not _DOMAIN_WORDS.search(text), (path.name, _DOMAIN_WORDS.search(text).group())


def _desk_of(name: str) -> str | None:
    """The desk package ``name`` is in (``batchgate_gym.desks.registry``, a module beside the
    desks, is in none)."""
    parts = name.split(".")
    inside = parts[:2] == ["batchgate_gym", "desks"] and len(parts) > 2
    return parts[2] if inside and (CORE / "desks" / parts[2]).is_dir() else None


def _allowed_for_desk(desk: str) -> tuple[str, ...]:
    """What a desk's modules may import of the package: the kernel, the registry they are
    declared to, and their own desk's package, environments and policies (its ``spec`` and
    ``testing`` name them); never another desk's, nor a module gathering every desk's."""
    return (
        "batchgate_gym.kernel",
        "batchgate_gym.desks.registry",
        f"batchgate_gym.desks.{desk}",
        f"batchgate_gym.envs.{desk}",
        f"batchgate_gym.policies.{desk}",
    )


def test_the_kernel_imports_no_desk_and_desks_never_import_each_other():
    """Every module counts here, ``spec`` and ``testing`` too: a helper that reached another
    desk's through the root ``batchgate_gym.testing`` would be a cross-desk import."""
    modules = _modules(CORE, "batchgate_gym")
    desks = {_desk_of(module) for module in modules} - {None}
    assert {"gate", "refund", "analyst"} <= desks
    assert {"batchgate_gym.kernel.testing", "batchgate_gym.desks.analyst.testing"} <= set(modules)
    for module, path in modules.items():
        ours = [n for n, _eager in _imports(module, path) if _is_within(n, ("batchgate_gym",))]
        if _is_within(module, ("batchgate_gym.kernel",)):
            assert [n for n in ours if not _is_within(n, ("batchgate_gym.kernel",))] == [], module
        own = _desk_of(module)
        if own is not None:
            allowed = _allowed_for_desk(own)
            stray = [n for n in ours if n != "batchgate_gym.desks" and not _is_within(n, allowed)]
            assert stray == [], (module, stray)


# The analyst's subpackages, each importing only those before it: its data, then its engines (which
# read the data's files); its questions and their answers stand alone; the episode's own modules
# (cases, world, grader ...) sit above all three.
_ANALYST = "batchgate_gym.desks.analyst"
_ANALYST_LAYERS = {"datasets": set(), "questions": set(), "engines": {"datasets"}}


def _analyst_part(name: str) -> str | None:
    """The analyst subpackage (or top-level module) ``name`` is in; ``None`` outside the desk."""
    return name[len(_ANALYST) + 1 :].split(".")[0] if name.startswith(_ANALYST + ".") else None


def test_the_analyst_subpackages_import_down_and_its_modules_in_no_circle():
    modules = {m: p for m, p in _modules(CORE, "batchgate_gym").items() if _is_within(m, (_ANALYST,))}
    graph = {m: {n for n, _eager in _imports(m, p) if n in modules and n != m} for m, p in modules.items()}
    assert {f"{_ANALYST}.engines.stores", f"{_ANALYST}.questions.template"} <= set(graph)
    for module, imported in graph.items():
        part = _analyst_part(module)
        if part in _ANALYST_LAYERS:
            reached = {_analyst_part(n) for n in imported} - {part}
            assert reached <= _ANALYST_LAYERS[part], (module, sorted(map(str, reached)))
    # a circle, lazy imports included: a module that reaches itself again
    for start in graph:
        seen, todo = set(), list(graph[start])
        while todo:
            current = todo.pop()
            assert current != start, f"{start} imports itself through {sorted(seen)}"
            if current not in seen:
                seen.add(current)
                todo.extend(graph[current])


# Arrows point down: the command line (``app``) is built on the play loop (``evaluation``), the
# benchmark, the servers, the model harness, the desks and the kernel, never the reverse, not even
# inside a function; the root package's lazy names come from below it too.
_COMMAND_LINE = "batchgate_gym.app"


def _below_the_command_line() -> dict[str, Path]:
    """Every module but the command line's own: the package's, and the environments' and
    policies' (installed inside it), which the command line wires together."""
    modules = {
        **_modules(CORE, "batchgate_gym"),
        **_modules(ROOT / "envs", "batchgate_gym.envs"),
        **_modules(ROOT / "policies", "batchgate_gym.policies"),
    }
    return {
        module: path
        for module, path in modules.items()
        if not _is_within(module, (_COMMAND_LINE,)) and module != "batchgate_gym.__main__"
    }


def test_nothing_below_the_command_line_imports_it():
    below = _below_the_command_line()
    assert {
        "batchgate_gym",
        "batchgate_gym.desks.registry",
        "batchgate_gym.llm.runner",
        "batchgate_gym.desks.gate.testing",
        "batchgate_gym.bench.measures",
        "batchgate_gym.serving.checking",
        "batchgate_gym.serving.clients",
        "batchgate_gym.evaluation.loop",
        "batchgate_gym.policies.gate.audit",
        "batchgate_gym.envs.refund.text",
    } <= set(below)
    upward = sorted(
        (module, name)
        for module, path in below.items()
        for name, _eager in _imports(module, path)
        if _is_within(name, (_COMMAND_LINE,))
    )
    assert upward == []


def test_the_root_package_lazy_names_come_from_below_the_command_line():
    import importlib

    for name in ("evaluate", "replay"):
        found = getattr(batchgate_gym, name)
        assert not _is_within(found.__module__, (_COMMAND_LINE,)), (name, found.__module__)
    assert importlib.import_module("batchgate_gym.evaluation").evaluate is batchgate_gym.evaluate


def _names_a_desk(name: str) -> bool:
    """``name`` is one desk's own module: in its package, its environments or its policies."""
    parts = name.split(".")
    return (
        len(parts) > 2
        and parts[:2]
        in (["batchgate_gym", "desks"], ["batchgate_gym", "envs"], ["batchgate_gym", "policies"])
        and (CORE / "desks" / parts[2]).is_dir()
    )


def test_the_model_harness_and_the_servers_name_no_desk():
    """A desk declares in its spec what they need of it (its TRL class, the policies compared),
    so a new desk edits neither; their test helpers (``testing``) may build the desks they test on."""
    modules = {
        module: path
        for module, path in _modules(CORE, "batchgate_gym").items()
        if _is_within(module, ("batchgate_gym.llm", "batchgate_gym.serving")) and path.stem != "testing"
    }
    assert {"batchgate_gym.llm.trl_env", "batchgate_gym.serving.checking"} <= set(modules)
    named = sorted(
        (module, name)
        for module, path in modules.items()
        for name, _eager in _imports(module, path)
        if _names_a_desk(name)
    )
    assert named == []


def _envs_and_policies() -> dict[str, Path]:
    return {
        **_modules(ROOT / "envs", "batchgate_gym.envs"),
        **_modules(ROOT / "policies", "batchgate_gym.policies"),
    }


def _desks_reached(module: str, modules: dict[str, Path]) -> set[str]:
    """The desks ``module`` imports, directly or through the envs and policies it imports."""
    desks: set[str] = set()
    seen, todo = {module}, [module]
    while todo:
        current = todo.pop()
        for name, _eager in _imports(current, modules[current]):
            desk = _desk_of(name)
            if desk is not None:
                desks.add(desk)
            elif name in modules and name not in seen:
                seen.add(name)
                todo.append(name)
    return desks


def test_no_env_or_policy_of_one_desk_imports_another_desks():
    """Each env and policy module plays one desk (or none: the shared text env, the policy
    interface); a package's ``__init__``, which gathers its modules, may name several."""
    modules = _envs_and_policies()
    assert _desks_reached("batchgate_gym.envs.gate.text", modules) == {"gate"}
    mixed = {
        module: sorted(desks)
        for module, path in modules.items()
        if path.name != "__init__.py" and len(desks := _desks_reached(module, modules)) > 1
    }
    assert mixed == {}


def test_console_script_and_module_entry_point():
    out = subprocess.run(
        [sys.executable, "-m", "batchgate_gym", "--help"], capture_output=True, text=True, check=True
    ).stdout
    assert "report" in out
    assert [m.name for m in pkgutil.iter_modules(batchgate_gym.__path__) if m.name == "kernel"] == ["kernel"]


def test_every_package_is_listed_for_installation():
    """An editable install finds any folder; a wheel holds only the packages setup.cfg lists."""
    import configparser

    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg")
    listed = set(config["options"]["packages"].split())
    found = set()
    for top, installed_as in (
        ("batchgate_gym", "batchgate_gym"),
        ("envs", "batchgate_gym.envs"),
        ("policies", "batchgate_gym.policies"),
    ):
        for init in (ROOT / top).rglob("__init__.py"):
            parts = init.parent.relative_to(ROOT / top).parts
            found.add(".".join((installed_as, *parts)))
    assert found == listed
    data = config["options.package_data"]
    assert data["batchgate_gym.desks.gate"].strip() == "data/*.jsonl"


def test_the_test_tree_mirrors_the_package():
    """Each folder of tests is a package named after the subpackage it tests (tests/desks/refund/
    holds the refund desk's tests), so its files need not repeat the folder's name."""
    import configparser

    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg")
    listed = set(config["options"]["packages"].split())
    tests = ROOT / "tests"
    for folder in sorted(p for p in tests.rglob("*") if p.is_dir()):
        parts = folder.relative_to(tests).parts
        if parts[0] == "data" or any(part.startswith((".", "__")) for part in parts):
            continue
        assert (folder / "__init__.py").is_file(), f"{folder} is not a package"
        assert ".".join(("batchgate_gym", *parts)) in listed, f"{folder} names no package"
        assert list(folder.glob(f"test_{folder.name}_*.py")) == [], f"{folder}: file names repeat the folder"
