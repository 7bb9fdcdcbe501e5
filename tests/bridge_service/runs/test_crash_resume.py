"""A bridge killed with SIGKILL mid-run; `vae run --resume` completes the run."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from pathlib import Path

import grpc

from tests.bridge_service.bots import TestBot, tone
from tests.bridge_service.conftest import inline, scenario
from tests.helpers import count, start_bridge, wait_until
from vae.bridge.v1 import bridge_pb2, bridge_pb2_grpc
from vae.common.v1 import common_pb2
from vae.recordings.read.reader import RecordingReader

USER, AGENT = common_pb2.ROLE_USER, common_pb2.ROLE_AGENT
ROOT = Path(__file__).resolve().parents[3]


async def talk(bot: TestBot) -> None:
    while not bot.ending.is_set():
        await bot.speak(tone(0.5, 16000, 300))


async def short(bot: TestBot) -> None:
    await bot.speak(tone(0.3, 16000, 400))
    if bot.role == AGENT:
        await bot.end(common_pb2.END_KIND_AGENT_END_TOOL)


async def test_sigkill_then_resume(db_path: Path) -> None:
    proc, address = await start_bridge(db_path)
    try:
        async with grpc.aio.insecure_channel(address) as channel:
            stub = bridge_pb2_grpc.BridgeServiceStub(channel)
            docs = [scenario(f"k{i}") for i in range(3)]
            response = await stub.StartRun(
                bridge_pb2.StartRunRequest(
                    sources=inline(*docs), options=bridge_pb2.RunOptions(concurrency=3)
                )
            )
            run_id = response.run.run_id
        bots = [
            TestBot(address, role, talk, run_filter=run_id)
            for _ in range(3)
            for role in (USER, AGENT)
        ]
        tasks = [asyncio.create_task(b.run()) for b in bots]
        await asyncio.wait_for(asyncio.gather(*(b.started.wait() for b in bots)), 20)
        # Audio is durable within a second: wait until every channel has reached the file.
        await wait_until(
            lambda: (
                count(db_path, "SELECT COUNT(DISTINCT session_id || channel) FROM audio_segments")
                == 12
            ),
            10,
            "audio of all sessions on disk",
        )
    finally:
        proc.send_signal(signal.SIGKILL)
        await proc.wait()
    await asyncio.gather(*tasks)
    # Every stream broke (UNAVAILABLE, or whatever the transport saw first).
    assert all(b.got.status not in (None, grpc.StatusCode.OK) for b in bots), [
        b.got.status for b in bots
    ]
    killed = {
        "segments": count(db_path, "SELECT COUNT(*) FROM audio_segments"),
        "events": count(db_path, "SELECT COUNT(*) FROM events"),
    }
    with RecordingReader(db_path) as reader:
        assert all(s.ended_ns is None for s in reader.sessions(run_id))

    proc, address = await start_bridge(db_path)
    try:
        check = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "vae.cli.main",
            "run",
            "--resume",
            run_id,
            "--check",
            "--bridge",
            address,
            "--json",
            cwd=ROOT,
            stdout=asyncio.subprocess.PIPE,
        )
        out, _ = await check.communicate()
        assert check.returncode == 0
        states = {c["scenario"]: c["state"] for c in json.loads(out)["classifications"]}
        assert states == {"k0": "in_flight", "k1": "in_flight", "k2": "in_flight"}

        resume = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "vae.cli.main",
            "run",
            "--resume",
            run_id[:13],
            "--bridge",
            address,
            "--json",
            cwd=ROOT,
            stdout=asyncio.subprocess.PIPE,
            env={**os.environ, "VAE_LOG_LEVEL": "warning"},
        )
        bots = [
            TestBot(address, role, short, run_filter=run_id)
            for _ in range(3)
            for role in (USER, AGENT)
        ]
        results = await asyncio.gather(resume.communicate(), *(b.run() for b in bots))
        out = results[0][0]
        assert resume.returncode == 0, out
        summary = json.loads(out)
        assert summary["status"] == "completed" and summary["scenarios_done"] == 3
    finally:
        proc.send_signal(signal.SIGTERM)
        exit_code = await asyncio.wait_for(proc.wait(), 20)
    assert exit_code == 0

    with RecordingReader(db_path) as reader:
        sessions = reader.sessions(run_id)
        assert sorted((s.scenario_name, s.attempt, str(s.status)) for s in sessions) == [
            (f"k{i}", a, st) for i in range(3) for a, st in ((1, "superseded"), (2, "ended"))
        ]
        for s in sessions:
            if s.attempt == 1:
                assert "never ended" in s.superseded_reason
                assert reader.segments(s.session_id, "user")  # the killed attempt is kept
            else:
                assert s.stop_reason == "end_tool"
                pcm = b"".join(x.pcm for x in reader.segments(s.session_id, "user"))
                assert len(pcm) == 2 * int(0.3 * 16000)  # recorded once, not twice
        assert len(reader.latest_attempts(run_id)) == 3
    # Nothing of the killed attempts was rewritten.
    killed_now = count(
        db_path,
        "SELECT COUNT(*) FROM audio_segments a JOIN sessions s"
        " USING (session_id) WHERE s.attempt = 1",
    )
    assert killed_now == killed["segments"]
    assert (
        count(
            db_path,
            "SELECT COUNT(*) FROM events e JOIN sessions s USING (session_id) WHERE s.attempt = 1",
        )
        == killed["events"]
    )
