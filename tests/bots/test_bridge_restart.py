"""The reference bots survive a bridge that goes away and comes back.

Real processes throughout: a bridge (``vae bridge serve``), a ``vae bot user``
and a ``vae bot agent`` (scripted, eSpeak voice). The bridge is killed with
SIGKILL while sessions are live; the bots keep retrying (no traceback, no
exit); a bridge restarted on the same address gets them back, and
``vae run --resume`` completes the run with the *same* bot processes. A bot
whose bridge never returns gives up with a clear message (bounded by
``VAE_BOT_GIVE_UP_S``).
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

from tests.bridge_service.conftest import inline
from tests.helpers import closed_port, count, start_bridge, wait_until
from vae.bridge.v1 import bridge_pb2, bridge_pb2_grpc

ROOT = Path(__file__).resolve().parents[2]


def scenario(name: str) -> dict[str, Any]:
    return {
        "name": name,
        "domain": "airline",
        "max_duration": 60,
        "user": {"script": ["Hi, I would like to change my flight to Friday please."]},
        "agent": {
            "script": [
                "Hello, this is the airline, how can I help you today?",
                "Of course, let me look at the Friday flights for you, one moment please.",
                {"say": "Done, you are on the Friday flight.", "end": True},
            ]
        },
        "success_signals": ["CLEAN_EXIT"],
    }


async def spawn(*args: str, **env: str) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "vae.cli.main",
        *args,
        cwd=ROOT,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(ROOT), **env},
    )


async def test_bots_rejoin_a_restarted_bridge_and_the_resume_completes(tmp_path: Path) -> None:
    db = tmp_path / "vae.db"
    # The kernel picks the port (no other test can race for it); the restart reuses it.
    bridge, address = await start_bridge(db, limit_s=30)
    bots = [
        await spawn("bot", role, "--bridge", address, "--concurrency", "2", "--log-level", "info")
        for role in ("user", "agent")
    ]
    pids = [b.pid for b in bots]
    try:
        async with __import__("grpc").aio.insecure_channel(address) as channel:
            stub = bridge_pb2_grpc.BridgeServiceStub(channel)
            started = await stub.StartRun(
                bridge_pb2.StartRunRequest(
                    sources=inline(scenario("k0"), scenario("k1")),
                    options=bridge_pb2.RunOptions(max_auto_retries=0, concurrency=2),
                )
            )
        run_id = started.run.run_id
        await wait_until(
            lambda: count(db, "SELECT COUNT(DISTINCT session_id) FROM audio_segments") >= 2,
            60,
            "two live sessions with audio",
            alive=bots,
        )
        bridge.send_signal(signal.SIGKILL)
        await bridge.wait()
        # The bots notice and keep retrying; give them a few failed attempts.
        log_lines: list[bytes] = []
        assert bots[0].stderr is not None
        while not any(b"retrying" in line for line in log_lines):
            line = await asyncio.wait_for(bots[0].stderr.readline(), 30)
            assert line, "the user bot's stderr closed: it exited"
            log_lines.append(line)
        assert all(b.returncode is None for b in bots)
        assert not any(b"Traceback" in line for line in log_lines), log_lines

        bridge, restarted_at = await start_bridge(db, address, limit_s=30)
        assert restarted_at == address
        resume = await spawn("run", "--resume", run_id, "--bridge", address, "--json")
        out, err = await asyncio.wait_for(resume.communicate(), 120)
        assert resume.returncode == 0, err.decode()[-2000:]
        doc = json.loads(out)
        assert doc["status"] == "completed", doc
        assert [b.pid for b in bots] == pids
        assert all(b.returncode is None for b in bots), "the same bot processes played the resume"
        by_status = {
            status: count(db, f"SELECT COUNT(*) FROM sessions WHERE run_id = '{run_id}' "
                              f"AND status = '{status}'")
            for status in ("ended", "superseded", "running")
        }  # fmt: skip
        assert by_status == {"ended": 2, "superseded": 2, "running": 0}, by_status
    finally:
        for b in bots:
            if b.returncode is None:
                b.send_signal(signal.SIGTERM)
        errs = [(await asyncio.wait_for(b.communicate(), 30))[1] for b in bots]
        if bridge.returncode is None:
            bridge.send_signal(signal.SIGTERM)
            await asyncio.wait_for(bridge.wait(), 30)
    for err in errs:
        assert b"Traceback" not in err, err.decode()[-2000:]


async def test_a_bridge_that_never_returns_ends_the_bot_with_a_message(tmp_path: Path) -> None:
    bridge, address = await start_bridge(tmp_path / "vae.db", limit_s=30)
    bot = await spawn("bot", "user", "--bridge", address, "--log-level", "info",
                      VAE_BOT_GIVE_UP_S="2")  # fmt: skip
    assert bot.stderr is not None
    # The bot passed its preflight and is waiting for a session: then the bridge dies for good.
    while b"joined" not in (line := await asyncio.wait_for(bot.stderr.readline(), 30)):
        assert line, "the bot exited before joining"
    bridge.kill()
    await bridge.wait()
    _out, err = await asyncio.wait_for(bot.communicate(), 60)
    assert bot.returncode == 1
    assert b"unreachable" in err and b"giving up" in err, err.decode()[-2000:]
    assert b"Traceback" not in err


async def test_a_bridge_that_is_never_there_ends_the_bot_after_its_preflight() -> None:
    with closed_port() as port:  # nothing listens there, and no other test can start to
        bot = await spawn("bot", "user", "--bridge", f"127.0.0.1:{port}")
        _out, err = await asyncio.wait_for(bot.communicate(), 60)
    assert bot.returncode == 1
    assert b"cannot use the bridge" in err and b"is the bridge running" in err, err.decode()
    assert b"Traceback" not in err
