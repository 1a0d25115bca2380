"""Signed episodes over the network: ``serve-env --sign-key`` over OpenEnv and MCP, played
with each protocol's own client against a server on 127.0.0.1 that the test starts.

Every ended episode comes back with a certificate of the server's key: it verifies
against the public key alone, its result's log replays under its head to its score,
and a certificate moved to another episode's result does not verify.
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from batchgate_gym.desks import registry
from batchgate_gym.kernel.certificate import CertificateError, TrustedKey, write_key_pair
from batchgate_gym.serving.certificates import check_served_result

from .support import Served, eval_cases, serving

pytest.importorskip("openenv", reason="the openenv extra is not installed")
pytest.importorskip("mcp", reason="the mcp extra is not installed")

pytestmark = pytest.mark.slow  # servers in their own processes

CASES = (0, 9, 18)  # a clean control, and two bad batches


@pytest.fixture(scope="module")
def signed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[TrustedKey, dict[str, Served]]]:
    private, public = write_key_pair(tmp_path_factory.mktemp("key") / "server-key")
    common = ("--desk", "gate", "--split", "eval", "--sign-key", str(private))
    with serving(("--protocol", "openenv", *common), ("--protocol", "mcp", *common)) as (openenv, mcp):
        yield TrustedKey.load(public), {"openenv": openenv, "mcp": mcp}


def play_openenv(served: Served) -> list[dict[str, Any]]:
    from batchgate_gym.serving.clients import play_openenv as play
    from batchgate_gym.serving.openenv_server import DeskEnvClient

    careful = registry.get("gate").policies.reference_policies["careful"]

    async def all_cases() -> list[dict[str, Any]]:
        async with DeskEnvClient(base_url=served.url()) as client:
            return [(await play(client, careful, {"seed": i, "case_index": i}))["result"] for i in CASES]

    return asyncio.run(all_cases())


def play_mcp(served: Served) -> list[dict[str, Any]]:
    import anyio
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    from batchgate_gym.serving.clients import play_mcp as play

    careful = registry.get("gate").policies.reference_policies["careful"]

    async def one(index: int) -> dict[str, Any]:
        url = served.url("/mcp") + f"?seed={index}&case_index={index}"
        async with streamable_http_client(url) as (read, write, _), ClientSession(read, write) as session:
            await session.initialize()
            return await play(session, careful)

    async def all_cases() -> list[dict[str, Any]]:
        return [await one(index) for index in CASES]

    return anyio.run(all_cases)


PLAYERS = {"openenv": play_openenv, "mcp": play_mcp}


def check(result: dict[str, Any], key: TrustedKey) -> None:
    case = next(c for c in eval_cases("gate") if c.case_id == result["case_id"])
    from batchgate_gym.desks.gate.replay import replay

    check_served_result(result, key, case, replay)


@pytest.mark.parametrize("protocol", list(PLAYERS))
def test_a_signed_servers_certificates_verify_and_do_not_move(
    signed: tuple[TrustedKey, dict[str, Served]], protocol: str
) -> None:
    key, servers = signed
    results = PLAYERS[protocol](servers[protocol])
    assert [r["case_id"] for r in results] == [eval_cases("gate")[i].case_id for i in CASES]
    for result in results:
        assert result["protocol"] == protocol and result["source"] == "eval" and result["certificate"]
        check(result, key)  # genuine: verifies, and replays to its score
    # The first episode's certificate on the second's result: refused.
    moved = copy.deepcopy(results[1])
    moved["certificate"] = results[0]["certificate"]
    with pytest.raises(CertificateError, match="signs another episode"):
        check(moved, key)
    # A better score written into a result: its certificate no longer matches.
    raised = copy.deepcopy(results[0])
    raised["reward"] = 2.0
    with pytest.raises(CertificateError, match="signs another episode"):
        check(raised, key)


def test_another_key_is_refused(signed: tuple[TrustedKey, dict[str, Served]], tmp_path: Path) -> None:
    _key, servers = signed
    (result, *_) = play_openenv(servers["openenv"])
    _, other_public = write_key_pair(tmp_path / "other")
    with pytest.raises(CertificateError, match="signed by another key"):
        check(result, TrustedKey.load(other_public))


def test_batchgate_verify_checks_a_file_of_served_results(
    signed: tuple[TrustedKey, dict[str, Served]], tmp_path: Path
) -> None:
    import json
    import subprocess
    import sys

    key, servers = signed
    results = play_openenv(servers["openenv"]) + play_mcp(servers["mcp"])
    genuine = tmp_path / "served.jsonl"
    genuine.write_text("".join(json.dumps(r) + "\n" for r in results))

    def verify(path: Path) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "batchgate_gym", "verify", str(path), "--trust", key.path]
        return subprocess.run(command, capture_output=True, text=True)

    done = verify(genuine)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"verified: {len(results)} of {len(results)} rows verify; episodes of a server" in done.stdout
    raised = tmp_path / "raised.jsonl"
    edited = copy.deepcopy(results)
    edited[1]["reward"] = 1.0 if edited[1]["reward"] != 1.0 else 0.5
    raised.write_text("".join(json.dumps(r) + "\n" for r in edited))
    done = verify(raised)
    assert (
        done.returncode == 1
        and "raised.jsonl:2: the certificate is genuine but signs another episode" in done.stdout
    )
