"""The LiveKit flow of docs/interop.md through the real CLI, as a user runs it.

The stand-ins as the docs start them (``stand_ins.py --scenarios``), the
reference user bot, ``vae run`` on ``examples/livekit_agent/scenarios`` with
``--agent-connector livekit:examples/livekit_agent/agent.py`` (a relative
path, made absolute by ``vae run``), then ``vae rescore``: the booking
scenario passes, the must-not-book scenario fails on its database.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest

from tests.helpers import free_port
from tests.interop.conftest import ROOT, subprocess_until_ready
from tests.interop.livekit_support import EXAMPLE, require_livekit_venv
from vae.bots.brains.scripted import play_script
from vae.bots.runner import BotConfig, run_bots
from vae.bridge_service.server import BridgeServer


async def vae(*args: str) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "vae.cli.main", *args,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, cwd=ROOT,
    )  # fmt: skip
    out, err = await proc.communicate()
    return int(proc.returncode or 0), out.decode(), err.decode()


@pytest.mark.timeout(240)  # real-time sessions on a loaded CI machine
async def test_the_documented_livekit_commands(
    bridge: BridgeServer, tmp_path: Path, db_path: Path
) -> None:
    python = require_livekit_venv()
    port = free_port()
    stand_ins = [sys.executable, str(EXAMPLE / "stand_ins.py"), "--port", str(port),
                 "--scenarios", "examples/livekit_agent/scenarios"]  # fmt: skip
    options = {
        "python": str(python.relative_to(ROOT)),
        "env": {"OPENAI_BASE_URL": f"http://127.0.0.1:{port}/v1", "OPENAI_API_KEY": "offline"},
    }
    user = BotConfig(bridge.address, "user", lambda: play_script, concurrency=2)
    stop = asyncio.Event()
    async with subprocess_until_ready(stand_ins, "READY", tmp_path / "stand_ins.log"):
        users = asyncio.ensure_future(run_bots(user, stop))
        try:
            async with asyncio.timeout(120):
                code, out, err = await vae(
                    "run", "examples/livekit_agent/scenarios", "--bridge", bridge.address,
                    "--concurrency", "2",
                    "--agent-connector", "livekit:examples/livekit_agent/agent.py",
                    "--connector-options", json.dumps(options), "--json",
                )  # fmt: skip
        finally:
            stop.set()
            await users
    assert code == 0, err
    run = json.loads(out)
    assert run["status"] == "completed" and run["scenarios_done"] == 2

    code, out, err = await vae("rescore", "--run", run["run_id"], "--db", str(db_path),
                               "--no-judge", "--allow-unscored", "--json")  # fmt: skip
    assert code in (0, 1), err  # 1: a scenario failed, as one must here
    verdicts = {
        s["scenario_name"]: {x["signal"]: x["verdict"] for x in s["scores"]}
        for s in json.loads(out)["sessions"]
    }
    booked, refused = verdicts["livekit_book_table"], verdicts["livekit_must_not_book"]
    for signal in ("ACTION_MATCH", "DB_STATE_MATCH", "CLEAN_EXIT", "is_successful"):
        assert booked[signal] == "passed", (signal, booked)
    assert refused["DB_STATE_MATCH"] == "failed" and refused["is_successful"] == "failed"
    assert refused["CLEAN_EXIT"] == "passed"
