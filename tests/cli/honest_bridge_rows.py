"""The bridge rows of the failure table: Ctrl-C and resume, demo, missing peer, connector."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import sys
from pathlib import Path
from typing import Any

import yaml

from tests.bridge_service.bots import TestBot, tone
from tests.bridge_service.conftest import scenario
from tests.helpers import ROOT, cli, closed_port, wait_until
from vae.bridge_service.server import BridgeServer
from vae.common.v1 import common_pb2
from vae.recordings.models import SessionStatus
from vae.recordings.read.reader import RecordingReader


async def linger(bot: TestBot) -> None:
    """Say a little, then stay on the line until the bridge ends the call."""
    await bot.speak(tone(0.3, 16000))
    await bot.ending.wait()


async def talk(bot: TestBot) -> None:
    await bot.speak(tone(0.3, 16000))
    if bot.role == common_pb2.ROLE_AGENT:
        await bot.end(common_pb2.END_KIND_AGENT_END_TOOL)


def bots(address: str, run_id: str, behaviour: Any, pairs: int) -> list[TestBot]:
    return [
        TestBot(address, role, behaviour, run_filter=run_id)
        for _ in range(pairs)
        for role in (common_pb2.ROLE_USER, common_pb2.ROLE_AGENT)
    ]


async def row_ctrl_c_then_resume(tmp_path: Path, bridge: BridgeServer) -> None:
    suite = tmp_path / "suite"
    suite.mkdir()
    for name in ("one", "two"):
        (suite / f"{name}.yaml").write_text(yaml.safe_dump(scenario(name)))
    run_id = "cut-off"
    lingering = bots(bridge.address, run_id, linger, 2)
    tasks = [asyncio.create_task(b.run()) for b in lingering]
    proc = await asyncio.create_subprocess_exec(
        *[sys.executable, "-m", "vae.cli.main", "run", str(suite), "--bridge", bridge.address],
        *["--run-id", run_id, "--concurrency", "2"],
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"},
    )
    try:

        def both_in_flight() -> bool:
            with RecordingReader(bridge.db_path) as reader:
                ids = reader.run_ids()
                sessions = reader.sessions(run_id) if run_id in ids else []
            return len([s for s in sessions if s.status is SessionStatus.RUNNING]) == 2

        await wait_until(both_in_flight, 20)
        proc.send_signal(signal.SIGINT)
        raw_out, raw_err = await asyncio.wait_for(proc.communicate(), 30)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    out, err = raw_out.decode(), raw_err.decode()
    await asyncio.wait_for(asyncio.gather(*tasks), 30)
    assert proc.returncode == 1
    assert f"interrupted: run {run_id} cancelled" in err
    assert f"vae run --resume {run_id}" in err and "completed" not in out + err
    with RecordingReader(bridge.db_path) as reader:
        run = reader.get_run(run_id)
        assert run is not None and run.status == "cancelled"
        assert {s.stop_reason for s in reader.sessions(run_id)} == {"cancelled"}
    # A rescore of the cut-off run decides nothing.
    code, out, err = await cli(
        "rescore", "--run", run_id, "--db", str(bridge.db_path), "--no-judge", "--json"
    )
    assert code == 1 and "unfinished: cancelled: 2" in err
    assert json.loads(out)["summary"]["success_rate"] is None
    code, out, _ = await cli("run", "--resume", run_id, "--check", "--bridge", bridge.address)
    assert code == 0 and out.count("in_flight") == 2 and "unfinished" in out
    assert "completed" not in out
    talking = bots(bridge.address, run_id, talk, 2)
    (code, out, err), *_ = await asyncio.gather(
        cli("run", "--resume", run_id, "--bridge", bridge.address, "--json"),
        *(b.run() for b in talking),
    )
    assert code == 0, err
    summary = json.loads(out)
    assert summary["status"] == "completed"
    with RecordingReader(bridge.db_path) as reader:
        rows = {(s.scenario_name, s.attempt): s for s in reader.sessions(run_id)}
    for name in ("one", "two"):
        assert rows[(name, 1)].status is SessionStatus.SUPERSEDED
        assert rows[(name, 1)].superseded_reason.startswith("resumed:")
        assert rows[(name, 2)].stop_reason == "end_tool"


async def row_ctrl_c_during_demo(tmp_path: Path) -> None:
    db = tmp_path / "demo.db"
    proc = await asyncio.create_subprocess_exec(
        *[sys.executable, "-m", "vae.cli.main", "demo", "--db", str(db)],
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )

    def in_flight() -> bool:
        if not db.exists():
            return False
        with sqlite3.connect(db) as raw:
            tables = {r[0] for r in raw.execute("SELECT name FROM sqlite_master")}
            if "sessions" not in tables:
                return False
            (n,) = raw.execute("SELECT count(*) FROM sessions WHERE status = 'running'").fetchone()
        return bool(n)

    try:
        await wait_until(in_flight, 120)
        proc.send_signal(signal.SIGINT)
        raw_out, raw_err = await asyncio.wait_for(proc.communicate(), 60)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    err = raw_err.decode()
    assert proc.returncode == 1 and "Success rate" not in raw_out.decode()
    with RecordingReader(db) as reader:
        (run,) = reader.list_runs()
        stops = {s.stop_reason for s in reader.sessions(run.run_id)}
    assert run.status == "cancelled", (run.status, run.error, err)
    assert stops <= {"cancelled", "end_tool", "user_hang_up"}
    assert "cancelled" in stops
    assert f"interrupted: run {run.run_id} cancelled" in err
    assert f"vae run --resume {run.run_id}" in err


async def row_missing_peer(tmp_path: Path, bridge: BridgeServer) -> None:
    path = tmp_path / "alone.yaml"
    path.write_text(yaml.safe_dump(scenario("alone")))
    run_id = "alone-run"
    user = TestBot(bridge.address, common_pb2.ROLE_USER, linger, run_filter=run_id)
    task = asyncio.create_task(user.run())
    try:
        # The user is there; no agent comes.
        await wait_until(lambda: bridge.pool.waiting() == 1, 20)
        code, out, _ = await cli(
            "run", str(path), "--bridge", bridge.address, "--run-id", run_id,
            "--pairing-timeout", "0.5", "--max-retries", "0",
        )  # fmt: skip
    finally:
        await user.hang_up_stream()
        await asyncio.wait_for(task, 15)
    assert code == 1
    assert "peer_never_joined" in out and "no agent bot joined within 0.5 s" in out
    assert f"run {run_id}: failed" in out and "completed" not in out
    with RecordingReader(bridge.db_path) as reader:
        run = reader.get_run(run_id)
        assert run is not None and run.status == "failed" and "alone" in run.error
    shown = await cli("runs", "show", run_id, "--db", str(bridge.db_path))
    assert shown[0] == 0 and "no agent bot joined within 0.5 s" in shown[1]


async def row_connector_refuses(tmp_path: Path, bridge: BridgeServer) -> None:
    from websockets.asyncio.server import serve
    from websockets.http11 import Response

    def refuse(_conn: Any, _request: Any) -> Response:
        return _conn.respond(503, "busy: one client at a time\n")  # type: ignore[no-any-return]

    path = tmp_path / "dial.yaml"
    path.write_text(yaml.safe_dump(scenario("dial")))
    with closed_port() as closed:
        async with serve(
            lambda _ws: asyncio.sleep(0), "127.0.0.1", 0, process_request=refuse
        ) as srv:
            port = next(iter(srv.sockets)).getsockname()[1]
            for url, run_id in (
                (f"ws://127.0.0.1:{port}", "refused-busy"),
                (f"ws://127.0.0.1:{closed}", "refused-closed"),
            ):
                code, out, err = await cli(
                    "run", str(path), "--bridge", bridge.address, "--run-id", run_id,
                    "--agent-connector", url, "--max-retries", "0", "--pairing-timeout", "0.5",
                )  # fmt: skip
                assert code == 1, err
                assert "connector_failed" in out and url in out
                assert f"run {run_id}: failed" in out and "completed" not in out
                with RecordingReader(bridge.db_path) as reader:
                    (s,) = reader.sessions(run_id)
                    assert s.stop_reason == "connector_failed" and s.clean_exit is False
