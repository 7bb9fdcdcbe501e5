"""LiveKit agent processes: one per session, up to the run's concurrency, none left behind.

Each test runs its own copy of the example agent (a path under its tmp_path),
so the processes it counts in /proc are its own: three sessions at
concurrency 3 run three agent processes at once, each recorded with its pid
and none alive after the run; a cancelled run and a `vae bridge serve` that
gets SIGTERM mid-call leave none either.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.interop.conftest import ROOT, start_run, watch_until_done
from tests.interop.livekit_support import (
    AGENT,
    BOOK,
    agent_processes,
    alive,
    connector,
    console_agents,
    parent_pid,
    stand_ins,  # noqa: F401  (a fixture)
)
from vae.bots.brains.scripted import play_script
from vae.bots.runner import BotConfig, run_bots
from vae.bridge.v1 import bridge_pb2, bridge_pb2_grpc
from vae.bridge_service.server import BridgeServer
from vae.recordings.read.reader import RecordingReader


def own_agent(tmp_path: Path) -> Path:
    folder = tmp_path / "agent"
    folder.mkdir()
    return Path(shutil.copy(AGENT, folder / "agent.py"))


async def start_three(
    stub: bridge_pb2_grpc.BridgeServiceStub, name: str, servers: Any, tmp_path: Path
) -> tuple[Path, str]:
    """A copy of the example agent of this test's own, and a run of three sessions on it
    at concurrency 3: (the agent's path, the run id)."""
    agent = own_agent(tmp_path)
    scenarios = [{**BOOK, "name": f"{name}_{i}"} for i in range(3)]
    run_id = await start_run(
        stub, scenarios, agent_connector=connector(servers, agent), concurrency=3
    )
    return agent, run_id


@pytest.mark.timeout(240)  # real-time sessions on a loaded CI machine
async def test_three_sessions_run_three_processes_and_leave_none(
    bridge: BridgeServer,
    bridge_stub: bridge_pb2_grpc.BridgeServiceStub,
    stand_ins: Any,  # noqa: F811
    tmp_path: Path,
    db_path: Path,
) -> None:
    agent, run_id = await start_three(bridge_stub, "three", stand_ins, tmp_path)
    user = BotConfig(bridge.address, "user", lambda: play_script, concurrency=3,
                     run_filter=run_id, max_sessions=3)  # fmt: skip
    most = 0

    async def count() -> None:
        nonlocal most
        while True:
            most = max(most, len(agent_processes(str(agent))))
            await asyncio.sleep(0.1)

    async with asyncio.timeout(120), asyncio.TaskGroup() as tg:
        counting = tg.create_task(count())
        await asyncio.gather(watch_until_done(bridge_stub, run_id), run_bots(user, asyncio.Event()))
        counting.cancel()
    assert most == 3  # all three at once, never more
    with RecordingReader(db_path) as r:
        sessions = r.sessions(run_id)
    assert sorted(s.stop_reason for s in sessions) == ["end_tool"] * 3
    pids = {int(s.agent_bot["labels"]["pid"]) for s in sessions}
    assert len(pids) == 3
    assert not [p for p in pids if alive(p)] and not console_agents(str(agent))


async def mid_call(stub: bridge_pb2_grpc.BridgeServiceStub, run_id: str, n: int) -> None:
    """Return once ``n`` sessions of the run have started (their agents are on the line)."""
    seen = 0
    async for event in stub.WatchRun(bridge_pb2.WatchRunRequest(run_id=run_id)):
        seen += event.kind == bridge_pb2.RUN_EVENT_KIND_SESSION_STARTED
        if seen == n:
            return
    raise AssertionError(f"the run finished with {seen} of {n} sessions started")


async def test_a_cancelled_run_leaves_no_process(
    bridge: BridgeServer,
    bridge_stub: bridge_pb2_grpc.BridgeServiceStub,
    stand_ins: Any,  # noqa: F811
    tmp_path: Path,
    db_path: Path,
) -> None:
    agent, run_id = await start_three(bridge_stub, "cancel", stand_ins, tmp_path)
    stop = asyncio.Event()
    user = BotConfig(bridge.address, "user", lambda: play_script, concurrency=3, run_filter=run_id)
    async with asyncio.timeout(90), asyncio.TaskGroup() as tg:
        tg.create_task(run_bots(user, stop))
        await mid_call(bridge_stub, run_id, 3)
        running = agent_processes(str(agent))
        assert len(running) == 3
        await bridge_stub.CancelRun(bridge_pb2.CancelRunRequest(run_id=run_id))
        events = await watch_until_done(bridge_stub, run_id)
        # Checked the moment the run reports its end, before anything else happens.
        left = [p for p in running if alive(p)]
        stop.set()
    assert "cancelled" in events[-1].message
    assert not left and not console_agents(str(agent))
    with RecordingReader(db_path) as r:
        assert {s.stop_reason for s in r.sessions(run_id)} == {"cancelled"}


async def test_sigterm_of_the_bridge_leaves_no_process(
    stand_ins: Any,  # noqa: F811
    tmp_path: Path,
) -> None:
    import grpc

    bridge = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "vae.cli.main", "bridge", "serve", "--address", "127.0.0.1:0",
        "--db", str(tmp_path / "vae.db"), "--log-level", "warning",
        cwd=ROOT, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    stop = asyncio.Event()
    try:
        assert bridge.stdout is not None
        line = await asyncio.wait_for(bridge.stdout.readline(), 30)
        assert line.startswith(b"vae bridge listening on "), line
        address = line.decode().rsplit(" ", 1)[1].strip()
        async with grpc.aio.insecure_channel(address) as channel:
            stub = bridge_pb2_grpc.BridgeServiceStub(channel)
            agent, run_id = await start_three(stub, "sigterm", stand_ins, tmp_path)
            user = BotConfig(address, "user", lambda: play_script, concurrency=3,
                             run_filter=run_id, give_up_after_s=5)  # fmt: skip
            async with asyncio.timeout(90), asyncio.TaskGroup() as tg:
                tg.create_task(run_bots(user, stop))
                await mid_call(stub, run_id, 3)
                running = agent_processes(str(agent))
                assert len(running) == 3
                assert all(parent_pid(p) == bridge.pid for p in running)  # the bridge's children
                bridge.send_signal(signal.SIGTERM)
                _, err = await bridge.communicate()
                left = [p for p in running if alive(p)]  # the moment the bridge has exited
                stop.set()
        assert bridge.returncode == 0, err.decode()[-2000:]
        assert not left and not console_agents(str(agent))
        with RecordingReader(tmp_path / "vae.db") as r:
            assert {s.stop_reason for s in r.sessions(run_id)} == {"shutdown"}
    finally:
        stop.set()
        if bridge.returncode is None:
            bridge.kill()
            await bridge.wait()
