"""The Node example as a long-running bot, and every client against TLS + token.

The Node agent holds several sessions at once and keeps joining until it is
stopped, so a multi-scenario run completes; against a TLS bridge with a token
both it and ``vae bot`` converse, and a wrong CA certificate or token ends
each of them with a message naming the option, after a bounded number of tries.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import signal
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import grpc
import pytest

from tests.interop.conftest import NODE_DIR, ROOT, SETTINGS, start_run, watch_until_done
from tests.interop.test_node import node_ready
from tests.tls import self_signed
from vae.bots.brains.scripted import play_script
from vae.bots.runner import BotConfig, run_bots
from vae.bridge.v1 import bridge_pb2, bridge_pb2_grpc
from vae.bridge_service.config import BridgeSettings
from vae.bridge_service.server import BridgeServer
from vae.recordings.read.reader import RecordingReader
from vae.serving import TlsFiles, client_channel

TOKEN = "s3cret-token"


def scenario(name: str) -> dict[str, object]:
    return {
        "name": name,
        "domain": "restaurant",
        "max_duration": 30,
        "user": {"script": [{"say": "Hi, I would like to book a table, please."}]},
        "agent": {"node_bot": {"answers": 1}},
        "success_signals": ["CLEAN_EXIT"],
    }


async def start_node(*args: str, log: Path) -> asyncio.subprocess.Process:
    node = node_ready()
    with log.open("wb") as err:
        return await asyncio.create_subprocess_exec(
            node, str(NODE_DIR / "bot.js"), *args, stdout=asyncio.subprocess.PIPE, stderr=err
        )


async def test_node_bot_holds_sessions_and_completes_a_multi_scenario_run(
    bridge: BridgeServer,
    bridge_stub: bridge_pb2_grpc.BridgeServiceStub,
    db_path: Path,
    tmp_path: Path,
) -> None:
    run_id = await start_run(bridge_stub, [scenario(f"node_{i}") for i in range(3)], concurrency=2)
    log = tmp_path / "node.log"
    proc = await start_node("--bridge", bridge.address, "--concurrency", "2", log=log)
    stop = asyncio.Event()
    user = BotConfig(bridge.address, "user", lambda: play_script, run_filter=run_id, concurrency=2)
    users = asyncio.create_task(run_bots(user, stop))
    try:
        async with asyncio.timeout(120):
            events = await watch_until_done(bridge_stub, run_id)
    finally:
        stop.set()
        await users
    assert proc.returncode is None  # still joining: it runs until stopped
    proc.send_signal(signal.SIGTERM)
    out, _ = await asyncio.wait_for(proc.communicate(), 20)
    assert proc.returncode == 0, log.read_text()
    sessions = json.loads(out)["sessions"]
    assert sorted(s["scenario"] for s in sessions) == ["node_0", "node_1", "node_2"]
    assert {s["reason"] for s in sessions} == {"STOP_REASON_END_TOOL"}
    assert events[-1].message == "all scenarios done"
    with RecordingReader(db_path) as r:
        spans = sorted((s.started_ns, s.ended_ns or 0) for s in r.sessions(run_id))
    assert any(b[0] < a[1] for a, b in itertools.pairwise(spans))  # two at once


async def test_node_bot_rejoins_a_restarted_bridge(
    db_path: Path, tmp_path: Path, bridge: BridgeServer
) -> None:
    """The bridge goes away and comes back on the same address: the bot rejoins it."""
    address = bridge.address
    proc = await asyncio.create_subprocess_exec(
        node_ready(), str(NODE_DIR / "bot.js"), "--bridge", address, "--sessions", "1",
        "--max-tries", "30", stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    assert proc.stderr is not None
    lines: list[str] = []

    async def read_until(text: str) -> None:
        assert proc.stderr is not None
        while line := (await proc.stderr.readline()).decode():
            lines.append(line)
            if text in line:
                return
        raise AssertionError(f"the bot exited before {text!r}: {''.join(lines)}")

    async with asyncio.timeout(30):
        await read_until("joined as")
    await bridge.stop()
    settings = BridgeSettings(**{**SETTINGS.__dict__, "address": address})
    again = BridgeServer(tmp_path / "second.db", settings)
    await again.start()
    try:
        async with grpc.aio.insecure_channel(address) as channel:
            stub = bridge_pb2_grpc.BridgeServiceStub(channel)
            run_id = await start_run(stub, [scenario("after_restart")])
            user = BotConfig(address, "user", lambda: play_script, run_filter=run_id)
            stop = asyncio.Event()
            users = asyncio.create_task(run_bots(user, stop))
            try:
                async with asyncio.timeout(90):
                    await read_until("retrying")  # it noticed the bridge was gone
                    events = await watch_until_done(stub, run_id)
                    out, rest = await proc.communicate()
            finally:
                stop.set()
                await users
    finally:
        await again.stop()
    assert proc.returncode == 0, "".join(lines) + rest.decode()
    assert json.loads(out)["sessions"][0]["scenario"] == "after_restart"
    assert events[-1].message == "all scenarios done"


@pytest.fixture
async def secure_bridge(db_path: Path, tmp_path: Path) -> AsyncIterator[tuple[BridgeServer, Path]]:
    tls = TlsFiles(*self_signed(tmp_path))
    settings = BridgeSettings(**{**SETTINGS.__dict__, "address": "localhost:0"})
    server = BridgeServer(db_path, settings, tls=tls, token=TOKEN)
    await server.start()
    try:
        yield server, tls.cert
    finally:
        await server.stop()


async def vae_bot(*args: str) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable, "-m", "vae.cli.main", "bot", *args,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, cwd=ROOT,
    )  # fmt: skip


async def test_node_and_reference_bots_over_tls_with_a_token(
    secure_bridge: tuple[BridgeServer, Path], db_path: Path, tmp_path: Path
) -> None:
    server, ca = secure_bridge
    address = f"localhost:{server.port}"
    async with client_channel(address, token=TOKEN, tls_ca=ca) as channel:
        stub = bridge_pb2_grpc.BridgeServiceStub(channel)
        run_id = await start_run(stub, [scenario("secure")])
        node = await start_node(
            "--bridge", address, "--tls-ca", str(ca), "--token", TOKEN, "--sessions", "1",
            log=tmp_path / "node.log",
        )  # fmt: skip
        user = await vae_bot(
            "user", "--bridge", address, "--tls-ca", str(ca), "--token", TOKEN, "--sessions", "1"
        )
        async with asyncio.timeout(90):
            events, (node_out, _), (_, user_err) = await asyncio.gather(
                watch_until_done(stub, run_id), node.communicate(), user.communicate()
            )
    assert node.returncode == 0, (tmp_path / "node.log").read_text()
    assert user.returncode == 0, user_err.decode()
    assert json.loads(node_out)["sessions"][0]["reason"] == "STOP_REASON_END_TOOL"
    assert events[-1].message == "all scenarios done"


@pytest.mark.parametrize("mistake", ["token", "ca"])
async def test_a_wrong_token_or_ca_ends_every_client_clearly(
    secure_bridge: tuple[BridgeServer, Path], tmp_path: Path, mistake: str
) -> None:
    server, ca = secure_bridge
    address = f"localhost:{server.port}"
    other = tmp_path / "other"
    other.mkdir()
    wrong_ca, _ = self_signed(other)
    token = "wrong" if mistake == "token" else TOKEN
    use_ca = ca if mistake == "token" else wrong_ca
    option = "--token" if mistake == "token" else "--tls-ca"
    node = await start_node(
        "--bridge", address, "--tls-ca", str(use_ca), "--token", token, "--max-tries", "3",
        log=tmp_path / "node.log",
    )  # fmt: skip
    user = await vae_bot("user", "--bridge", address, "--tls-ca", str(use_ca), "--token", token)
    run = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "vae.cli.main", "run", str(ROOT / "examples" / "suite"),
        "--bridge", address, "--tls-ca", str(use_ca), "--token", token,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, cwd=ROOT,
    )  # fmt: skip
    async with asyncio.timeout(60):  # bounded: never an endless loop
        _, (_, user_err), (_, run_err) = await asyncio.gather(
            node.communicate(), user.communicate(), run.communicate()
        )
    assert run.returncode == 1 and option in run_err.decode(), run_err.decode()
    node_err = (tmp_path / "node.log").read_text()
    assert node.returncode == 1 and option in node_err, node_err
    assert user.returncode == 1 and option in user_err.decode(), user_err.decode()
    what = "UNAUTHENTICATED" if mistake == "token" else "TLS handshake failed"
    assert what in user_err.decode()


async def test_enough_sessions_release_waiting_streams_and_let_live_ones_finish(
    bridge: BridgeServer,
    bridge_stub: bridge_pb2_grpc.BridgeServiceStub,
    db_path: Path,
) -> None:
    """--sessions 1 with two sessions in progress: the second one is not cut off."""
    proc = await asyncio.create_subprocess_exec(
        node_ready(), str(NODE_DIR / "bot.js"), "--bridge", bridge.address,
        "--concurrency", "2", "--sessions", "1",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    assert proc.stderr is not None
    lines: list[str] = []
    stop = asyncio.Event()
    users: asyncio.Task[object] | None = None
    try:
        async with asyncio.timeout(30):  # both streams wait before the run starts
            while sum("joined as" in line for line in lines) < 2:
                line = (await proc.stderr.readline()).decode()
                assert line, f"the bot exited before joining: {''.join(lines)}"
                lines.append(line)
        slow = {
            **scenario("slow"),
            "user": {"script": [{"say": "Hi, a table please."}, {"say": "For two, at eight."}]},
            "agent": {"node_bot": {"answers": 2}},
        }
        run_id = await start_run(bridge_stub, [scenario("quick"), slow], concurrency=2)
        user = BotConfig(
            bridge.address, "user", lambda: play_script, run_filter=run_id, concurrency=2
        )
        users = asyncio.create_task(run_bots(user, stop))
        async with asyncio.timeout(120):
            events = await watch_until_done(bridge_stub, run_id)
            out, rest = await proc.communicate()  # it exits by itself after --sessions
    finally:
        stop.set()
        if proc.returncode is None:
            proc.kill()
        if users is not None:
            await users
    assert proc.returncode == 0, "".join(lines) + rest.decode()
    with RecordingReader(db_path) as r:
        reasons = {s.scenario_name: s.stop_reason for s in r.sessions(run_id)}
        spans = sorted((s.started_ns, s.ended_ns or 0) for s in r.sessions(run_id))
    assert spans[1][0] < spans[0][1]  # the two sessions overlapped
    assert reasons == {"quick": "end_tool", "slow": "end_tool"}, reasons
    assert events[-1].status == bridge_pb2.RUN_STATUS_COMPLETED, [e.message for e in events]
    played = json.loads(out)["sessions"]
    assert sorted(s["scenario"] for s in played) == ["quick", "slow"]
