"""The LiveKit flow of docs/interop.md through the real CLI, as a user runs it.

The stand-ins as the docs start them (``stand_ins.py --scenarios``), the
reference user bot, ``vae run`` on ``examples/livekit_agent/scenarios`` with
``--agent-connector livekit:examples/livekit_agent/agent.py`` (a relative
path, made absolute by ``vae run``), then ``vae rescore``: the booking
scenario passes, the must-not-book scenario fails on its database.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.helpers import free_port
from tests.interop.cli_flows import rescored, run_with_users, verdicts
from tests.interop.conftest import ROOT, subprocess_until_ready
from tests.interop.livekit_support import EXAMPLE, require_livekit_venv
from vae.bridge_service.server import BridgeServer


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
    async with subprocess_until_ready(stand_ins, "READY", tmp_path / "stand_ins.log"):
        code, out, err = await run_with_users(
            bridge.address,
            ["examples/livekit_agent/scenarios", "--concurrency", "2",
             "--agent-connector", "livekit:examples/livekit_agent/agent.py",
             "--connector-options", json.dumps(options)],
            concurrency=2,
            timeout_s=120,
        )  # fmt: skip
    assert code == 0, err
    run = json.loads(out)
    assert run["status"] == "completed" and run["scenarios_done"] == 2

    code, sessions, err = await rescored(run["run_id"], db_path)
    assert code in (0, 1), err  # 1: a scenario failed, as one must here
    by_scenario = {s["scenario_name"]: verdicts(s) for s in sessions}
    booked, refused = by_scenario["livekit_book_table"], by_scenario["livekit_must_not_book"]
    for signal in ("ACTION_MATCH", "DB_STATE_MATCH", "CLEAN_EXIT", "is_successful"):
        assert booked[signal] == "passed", (signal, booked)
    assert refused["DB_STATE_MATCH"] == "failed" and refused["is_successful"] == "failed"
    assert refused["CLEAN_EXIT"] == "passed"
