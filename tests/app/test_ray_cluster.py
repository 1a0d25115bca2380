"""The commands on a real two-node Ray cluster: a head and a second node started with ``ray
start``, as docs/models.md tells a user to, on this machine's loopback.

The nodes listen on 127.0.0.2, not 127.0.0.1: Ray replaces 127.0.0.1 and ``localhost`` with
the machine's own network address, and the tests send traffic to loopback only. Every
process of the cluster and every command runs with token authentication on
(``RAY_AUTH_MODE=token`` and the token in ``RAY_AUTH_TOKEN``), as the docs advise: Ray 2.60
turns it on by itself for a head started where a local ``ray.init()`` once left a token in
``~/.ray``, and then refuses every process that was not told. Every
command that plays many episodes (``report``, ``attacks``, ``team``) gives, with
``--backend ray``, the same per-case rows as on this machine, and says that its tasks ran on
both nodes.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("ray", reason="Ray is not installed: pip install 'batchgate_gym[ray]'")

pytestmark = pytest.mark.slow  # two Ray nodes take half a minute to start

HOST = "127.0.0.2"
RAY = str(Path(sys.executable).parent / "ray")
AUTH = {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(32)}


def with_auth() -> dict[str, str]:
    env = {**os.environ, **AUTH, "BATCHGATE_NO_PROGRESS": "1"}
    env.pop("RAY_ADDRESS", None)
    return env


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind((HOST, 0))
        return int(probe.getsockname()[1])


def start_node(args: list[str], temp_dir: Path) -> subprocess.Popen[str]:
    """``ray start ARGS --block``: the node lives as long as the process (SIGTERM stops it)."""
    common = [f"--node-ip-address={HOST}", "--num-cpus=1", "--disable-usage-stats", f"--temp-dir={temp_dir}"]
    process = subprocess.Popen(
        [RAY, "start", *args, *common, "--block"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
        env=with_auth(),
    )
    assert process.stdout is not None
    for line in process.stdout:
        if "Ray runtime started" in line:
            return process
    raise RuntimeError(f"ray start {' '.join(args)} ended before the node started")


def wait_for_nodes(address: str, count: int, within: float = 120) -> None:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        status = subprocess.run(
            [RAY, "status", "--address", address], capture_output=True, text=True, env=with_auth()
        )
        if status.stdout.count(" node_") >= count:
            return
        time.sleep(1)
    raise RuntimeError(f"the cluster at {address} did not reach {count} nodes")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    temp_dir = Path(f"/tmp/bg-ray-{os.getpid()}")  # short: Ray's socket paths live under it
    address = f"{HOST}:{free_port()}"
    nodes: list[subprocess.Popen[str]] = []
    try:
        nodes.append(
            start_node(["--head", f"--port={address.split(':')[1]}", "--include-dashboard=false"], temp_dir)
        )
        nodes.append(start_node([f"--address={address}"], temp_dir))
        wait_for_nodes(address, 2)
        yield address
    finally:
        for node in reversed(nodes):
            node.send_signal(signal.SIGTERM)
        for node in reversed(nodes):
            try:
                node.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(node.pid, signal.SIGKILL)
                node.wait()


def batchgate(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [sys.executable, "-m", "batchgate_gym", *args],
        capture_output=True,
        text=True,
        env=with_auth() if env is None else env,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    return done


def analyst_cases(folder: Path) -> Path:
    """The first twelve analyst eval questions as a case file (the whole split takes a minute)."""
    from batchgate_gym.desks.analyst import cases

    lines = (Path(cases.__file__).parent / "data" / "eval.jsonl").read_text().splitlines()[:12]
    path = folder / "analyst-12.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_every_desks_report_on_two_nodes_is_the_local_report(cluster: str, tmp_path: Path) -> None:
    pytest.importorskip("duckdb", reason="the analyst desk needs its extra")
    sources = {"gate": [], "refund": [], "analyst": ["--cases", str(analyst_cases(tmp_path))]}
    for desk, source in sources.items():
        command = ["report", "--desk", desk, *source, "--json"]
        local = batchgate(*command)
        on_ray = batchgate(*command, "--backend", "ray", "--ray-address", cluster)
        assert json.loads(on_ray.stdout) == json.loads(local.stdout), desk
        assert "Ray tasks ran on 2 nodes" in on_ray.stderr, (desk, on_ray.stderr)


def test_attacks_and_team_on_two_nodes_are_the_local_tables(cluster: str) -> None:
    for command in (["attacks", "--desk", "refund", "--json"], ["team", "--seeds", "12", "--json"]):
        local = batchgate(*command)
        on_ray = batchgate(*command, "--backend", "ray", "--ray-address", cluster)
        assert json.loads(on_ray.stdout) == json.loads(local.stdout), command
        assert "Ray tasks ran on 2 nodes" in on_ray.stderr, (command, on_ray.stderr)


def test_a_command_without_the_clusters_token_is_refused_in_one_line(cluster: str) -> None:
    env = {**with_auth(), "RAY_AUTH_TOKEN": secrets.token_hex(32)}  # another token
    done = subprocess.run(
        [sys.executable, "-m", "batchgate_gym", "report", "--backend", "ray", "--ray-address", cluster],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert done.returncode == 1 and "cannot join the Ray cluster at" in done.stderr.splitlines()[-1]
    assert "Traceback" not in done.stderr


def test_a_cluster_that_is_not_there_is_one_line() -> None:
    env = {**os.environ, "BATCHGATE_NO_PROGRESS": "1"}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "batchgate_gym",
            "report",
            "--backend",
            "ray",
            "--ray-address",
            f"{HOST}:{free_port()}",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert done.returncode == 1 and "cannot join the Ray cluster at" in done.stderr
    assert "Traceback" not in done.stderr


def test_ray_address_without_the_ray_backend_is_refused() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "batchgate_gym", "report", "--ray-address", f"{HOST}:6379"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2 and "--ray-address is used with --backend ray" in done.stderr


def test_run_model_on_two_nodes_writes_the_local_rows_signed_here(cluster: str, tmp_path: Path) -> None:
    from batchgate_gym.kernel.certificate import write_key_pair
    from batchgate_gym.llm.server import ServerSettings, serve_in_thread

    private, public = write_key_pair(tmp_path / "key")
    outs = {"local": tmp_path / "local.jsonl", "ray": tmp_path / "ray.jsonl"}
    with serve_in_thread(ServerSettings(policy="careful")) as server:
        for backend, out in outs.items():
            done = batchgate(
                "run-model", "--split", "eval", "-n", "8", "-r", "2", "--model", "careful",
                "--base-url", server.base_url, "--api-key-env", "TEST_KEY", "--out", str(out),
                "--sign-key", str(private), "--backend", backend,
                *(["--ray-address", cluster] if backend == "ray" else []),
                env={**with_auth(), "TEST_KEY": "local"},
            )  # fmt: skip
            if backend == "ray":
                assert "Ray tasks ran on 2 nodes" in done.stderr, done.stderr

    def rows(path: Path) -> dict[tuple[str, int], dict[str, object]]:
        found = [json.loads(line) for line in path.read_text().splitlines()]
        return {(row["case_id"], row["rollout"]): row for row in found}

    local, on_ray = rows(outs["local"]), rows(outs["ray"])
    assert len(on_ray) == 16 and set(on_ray) == set(local)
    for key, row in local.items():  # the same episodes, but for the wall clock
        assert {k: v for k, v in on_ray[key].items() if k != "timing"} == {
            k: v for k, v in row.items() if k != "timing"
        }
    assert (
        "verified: 16 of 16 rows verify"
        in batchgate("verify", str(outs["ray"]), "--trust", str(public)).stdout
    )
