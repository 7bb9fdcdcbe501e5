"""A bridge on every core, as a user runs it: every part a real process.

``vae bridge serve --workers 2`` (a front door and two worker processes), a
``vae bot user`` and a ``vae bot agent`` (the reference bots, scripted, each
holding 4 conversations at once), and ``vae run`` through the front door:

- the example suite completes; its sessions were recorded by both worker
  processes (the recorded bridge identity); each session's two bots were sent
  to one worker (both bots' logs name the same port for the session, the port
  the session's recorded address has) and conversed there;
- a worker killed with SIGKILL mid-run: the front door stays up and serving,
  the attempts it held read ``worker_lost`` (the run fails, nothing retried
  with ``--max-retries 0``), the worker is replaced, and ``vae run --resume``
  with the same bot processes completes the run.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import sys
from pathlib import Path
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from tests.helpers import ROOT, count, start_bridge, wait_until
from vae.recordings.read.reader import RecordingReader

SUITE = ROOT / "examples" / "suite"
RUNS_AT = re.compile(rb"(user|agent) bot: session (\S+) runs at worker (\d+) \(port (\d+)\)")
WORKERS = re.compile(r"worker (\d+) pid (\d+) port (\d+)")


async def spawn(*args: str) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable, "-m", "vae.cli.main", *args,
        cwd=ROOT,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip


async def start_front_door(db: Path) -> tuple[asyncio.subprocess.Process, str, dict[int, int]]:
    """The bridge with two workers; its address and worker number -> pid."""
    bridge, address = await start_bridge(db, "127.0.0.1:0", 60, "--workers", "2")
    assert bridge.stdout is not None
    line = (await asyncio.wait_for(bridge.stdout.readline(), 10)).decode()
    pids = {int(n): int(pid) for n, pid, _port in WORKERS.findall(line)}
    assert sorted(pids) == [1, 2], line
    return bridge, address, pids


async def start_bots(address: str) -> list[asyncio.subprocess.Process]:
    return [
        await spawn("bot", role, "--bridge", address, "--concurrency", "4", "--log-level", "info")
        for role in ("user", "agent")
    ]


async def stop_all(
    bots: list[asyncio.subprocess.Process], bridge: asyncio.subprocess.Process
) -> list[bytes]:
    """SIGTERM the bots, then the bridge; the bots' stderr; every process must exit."""
    for bot in bots:
        if bot.returncode is None:
            bot.send_signal(signal.SIGTERM)
    logs = [(await asyncio.wait_for(b.communicate(), 30))[1] for b in bots]
    if bridge.returncode is None:
        bridge.send_signal(signal.SIGTERM)
    assert await asyncio.wait_for(bridge.wait(), 60) == 0
    for log in logs:
        assert b"Traceback" not in log, log.decode()[-3000:]
    return logs


def ports_by_session(logs: list[bytes]) -> dict[str, dict[str, int]]:
    """Session id -> role -> the worker port the bot of that role was redirected to."""
    found: dict[str, dict[str, int]] = {}
    for log in logs:
        for role, session, _worker, port in RUNS_AT.findall(log):
            found.setdefault(session.decode(), {})[role.decode()] = int(port)
    return found


def live_at(db: Path, worker: int) -> int:
    """Sessions running at ``worker`` whose audio is being recorded."""
    with RecordingReader(db) as reader:
        runs = reader.run_ids()
        return sum(
            1
            for run_id in runs
            for s in reader.sessions(run_id)
            if str(s.status) == "running"
            and reader.session_bridges(run_id).get(s.session_id, {}).get("worker") == worker
            and reader.channel_rates(s.session_id)
        )


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


@pytest.mark.timeout(420)
async def test_the_example_suite_runs_on_two_workers(tmp_path: Path) -> None:
    db = tmp_path / "vae.db"
    expected = len(list(SUITE.glob("*.yaml")))
    bridge, address, pids = await start_front_door(db)
    bots = await start_bots(address)
    try:
        # On the virtual clock: the redirects, the workers' recordings and identities are
        # the same as on wall time, in a fraction of it (the kill below keeps wall time).
        run = await spawn("run", str(SUITE), "--bridge", address, "--concurrency", "4",
                          "--clock", "virtual", "--json")  # fmt: skip
        out, err = await asyncio.wait_for(run.communicate(), 300)
        assert run.returncode == 0, err.decode()[-3000:]
        doc = json.loads(out)
        shown = await spawn("runs", "show", doc["run_id"], "--db", str(db), "--json")
        shown_out, _ = await asyncio.wait_for(shown.communicate(), 60)
    finally:
        logs = await stop_all(bots, bridge)
    assert doc["status"] == "completed" and doc["scenarios_done"] == expected, doc["error"]
    sessions = doc["sessions"]
    assert len({s["scenario"] for s in sessions}) == expected
    served = {s["session_id"]: s["bridge"] for s in sessions}
    assert {b["worker"] for b in served.values()} == {1, 2}, "both workers recorded sessions"
    assert all(pids[b["worker"]] == b["pid"] for b in served.values())
    assert {b["front_door"] for b in served.values()} == {address}
    redirected = ports_by_session(logs)
    for session_id, bridge_process in served.items():
        port = int(bridge_process["address"].rsplit(":", 1)[1])
        assert redirected[session_id] == {"user": port, "agent": port}, session_id
        assert count(db, f"SELECT COUNT(DISTINCT channel) FROM audio_segments "
                         f"WHERE session_id = '{session_id}'") == 4  # fmt: skip
        assert count(db, f"SELECT COUNT(*) FROM sessions WHERE session_id = '{session_id}' "
                         "AND clock = 'virtual'") == 1  # fmt: skip
    in_store = {s["session_id"]: s["bridge"] for s in json.loads(shown_out)["sessions"]}
    assert in_store == served
    assert all(gone(pid) for pid in pids.values()), "a worker outlived its bridge"


@pytest.mark.timeout(420)
async def test_a_worker_killed_mid_run_then_resume_completes_the_run(tmp_path: Path) -> None:
    db = tmp_path / "vae.db"
    scenarios = sorted(SUITE.glob("*.yaml"))[:4]
    bridge, address, pids = await start_front_door(db)
    bots = await start_bots(address)
    bot_pids = [b.pid for b in bots]
    try:
        run = await spawn("run", *map(str, scenarios), "--bridge", address, "--concurrency", "4",
                          "--max-retries", "0", "--json")  # fmt: skip
        await wait_until(lambda: live_at(db, 1) >= 1, 90, "a live session at worker 1",
                         alive=[bridge, *bots])  # fmt: skip
        os.kill(pids[1], signal.SIGKILL)
        out, err = await asyncio.wait_for(run.communicate(), 240)
        assert run.returncode == 1, err.decode()[-3000:]
        failed = json.loads(out)
        assert failed["status"] == "failed"
        lost = [s for s in failed["sessions"] if s["stop_reason"] == "worker_lost"]
        assert lost and all(s["bridge"]["pid"] == pids[1] for s in lost)
        assert all("killed by SIGKILL" in s["stop_detail"] for s in lost)
        assert bridge.returncode is None and all(b.returncode is None for b in bots)
        async with grpc.aio.insecure_channel(address) as channel:
            health = health_pb2_grpc.HealthStub(channel)
            reply = await health.Check(health_pb2.HealthCheckRequest(service=""))
        assert reply.status == health_pb2.HealthCheckResponse.SERVING

        resume = await spawn("run", "--resume", failed["run_id"], "--bridge", address, "--json")
        out, err = await asyncio.wait_for(resume.communicate(), 240)
        assert resume.returncode == 0, err.decode()[-3000:]
        resumed: dict[str, Any] = json.loads(out)
    finally:
        logs = await stop_all(bots, bridge)
    assert resumed["status"] == "completed" and resumed["scenarios_done"] == len(scenarios)
    assert [b.pid for b in bots] == bot_pids, "the same bot processes played the resume"
    by_id = {s["session_id"]: s for s in resumed["sessions"]}
    for s in lost:
        assert by_id[s["session_id"]]["status"] == "superseded"
    retried = [s for s in resumed["sessions"] if s["retry_reason"].startswith("resume")]
    assert len(retried) == len(lost)
    assert all(s["stop_reason"] in ("end_tool", "user_hang_up") for s in retried)
    replaced = {s["bridge"]["pid"] for s in retried} - set(pids.values())
    assert replaced, "the restarted worker 1 served part of the resume"
    redirected = ports_by_session(logs)
    for s in retried:
        port = int(s["bridge"]["address"].rsplit(":", 1)[1])
        assert redirected[s["session_id"]] == {"user": port, "agent": port}


@pytest.mark.timeout(300)
async def test_ctrl_c_on_vae_run_cancels_the_sessions_at_the_workers(tmp_path: Path) -> None:
    """`vae run` and its Ctrl-C (CancelRun) go through the front door, as without workers."""
    db = tmp_path / "vae.db"
    scenarios = sorted(SUITE.glob("airline_*.yaml"))[:2]
    bridge, address, pids = await start_front_door(db)
    bots = await start_bots(address)
    try:
        run = await spawn("run", *map(str, scenarios), "--bridge", address, "--concurrency", "2")
        await wait_until(lambda: live_at(db, 1) + live_at(db, 2) == 2, 90,
                         "both sessions live at the workers", alive=[bridge, *bots])  # fmt: skip
        run.send_signal(signal.SIGINT)
        _out, err = await asyncio.wait_for(run.communicate(), 60)
        assert run.returncode == 1 and b"Traceback" not in err, err.decode()[-2000:]
        assert b"cancelled" in err, err.decode()[-2000:]
        shown = await spawn("runs", "show", "20", "--db", str(db), "--json")
        shown_out, _ = await asyncio.wait_for(shown.communicate(), 60)
    finally:
        await stop_all(bots, bridge)
    doc = json.loads(shown_out)
    assert doc["status"] == "cancelled"
    assert [s["stop_reason"] for s in doc["sessions"]] == ["cancelled", "cancelled"]
    assert {s["bridge"]["pid"] for s in doc["sessions"]} <= set(pids.values())


async def test_workers_never_outlive_a_killed_front_door(tmp_path: Path) -> None:
    """SIGKILL leaves the front door no chance to stop them: their stdin closes, they exit."""
    bridge, _address, pids = await start_front_door(tmp_path / "vae.db")
    bridge.send_signal(signal.SIGKILL)
    await bridge.wait()
    await wait_until(lambda: all(gone(pid) for pid in pids.values()), 30, "the workers exited")
