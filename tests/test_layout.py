"""The package layout the design fixes: a core that imports no Gymnasium, envs and
policies installed inside ``batchgate_gym``, and nothing else at the top level."""

from __future__ import annotations

import json
import pkgutil
import subprocess
import sys
from pathlib import Path

import batchgate_gym

ROOT = Path(__file__).resolve().parent.parent

_PROBE = """
import importlib, json, pathlib, sys
import batchgate_gym
root = pathlib.Path(batchgate_gym.__file__).parent
skip = ("app", "testing", "__main__")
core = []
for path in sorted(root.rglob("*.py")):
    parts = path.relative_to(root).with_suffix("").parts
    if parts[0] in skip or parts[-1] == "__main__":
        continue
    core.append(".".join(("batchgate_gym", *(p for p in parts if p != "__init__"))))
for name in core:
    importlib.import_module(name)
leaked = sorted(n for n in sys.modules if n.split(".")[0] in ("gymnasium", "pettingzoo", "torch", "ray")
                or n.startswith(("batchgate_gym.envs", "batchgate_gym.policies", "batchgate_gym.app")))
print(json.dumps({"core": core, "leaked": leaked}))
"""


def test_core_imports_neither_gymnasium_nor_envs_nor_policies():
    out = json.loads(
        subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, check=True).stdout
    )
    assert "batchgate_gym.world" in out["core"] and "batchgate_gym.kernel.ledger" in out["core"]
    assert out["leaked"] == []


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
    assert Path(found["batchgate_gym.envs"]).parent == ROOT / "envs"
    assert Path(found["batchgate_gym.policies"]).parent == ROOT / "policies"


def test_kernel_knows_nothing_of_the_domain():
    kernel = ROOT / "batchgate_gym" / "kernel"
    for path in kernel.glob("*.py"):
        text = path.read_text()
        for word in ("batch_id", "wh_orders", "quarantine", "from ..", "batchgate_gym."):
            assert word not in text, (path.name, word)


def test_console_script_and_module_entry_point():
    out = subprocess.run(
        [sys.executable, "-m", "batchgate_gym", "--help"], capture_output=True, text=True, check=True
    ).stdout
    assert "report" in out
    assert [m.name for m in pkgutil.iter_modules(batchgate_gym.__path__) if m.name == "kernel"] == ["kernel"]
