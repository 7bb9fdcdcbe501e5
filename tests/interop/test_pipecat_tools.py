"""The pipecat example bot calls its write tool on the session's tool backend, over HTTP.

The only change to the bot is where its tool lives: the connector tells it
(the ``set_tool_backend`` client message) and it POSTs its arguments there.
It books May 2 where the caller asked for May 1 (``--tool-args``): the
example scenario fails on TOOL_CALLS naming book_table and its ``date``, the
backend's DB (the agent's final state) fails the DB assertion, and its own
report of the call is backed by what the backend served (CLAIMED_NOT_DONE
passes). docs/scenarios.md, "A tool backend", shows this run.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
import yaml

from tests.helpers import free_port
from tests.interop.conftest import (
    PIPECAT_BOT,
    ROOT,
    require_pipecat_venv,
    start_run,
    subprocess_until_ready,
    watch_until_done,
)
from vae.bots.brains.scripted import play_script
from vae.bots.runner import BotConfig, run_bots
from vae.bridge.v1 import bridge_pb2, bridge_pb2_grpc
from vae.bridge_service.server import BridgeServer
from vae.recordings.models import EventKind, Side, Verdict
from vae.recordings.read.reader import RecordingReader
from vae.scorer_service.config import ScoringConfig
from vae.scorer_service.scoring.rescore import rescore

pytest.importorskip("mcp", reason="the tools extra (pip install 'vae[tools]') is not installed")

SCENARIO = ROOT / "examples" / "tool_backend" / "restaurant_book_table.yaml"
WRONG = {"date": "2026-05-02", "time": "19:00", "party_size": 2}


async def test_the_pipecat_bot_books_the_wrong_date_on_the_backend(
    bridge: BridgeServer,
    bridge_stub: bridge_pb2_grpc.BridgeServiceStub,
    db_path: Path,
    tmp_path: Path,
) -> None:
    python = require_pipecat_venv()
    port = free_port()
    args = [str(python), str(PIPECAT_BOT), "--port", str(port), "--answers", "2",
            "--tool", "book_table", "--tool-backend", "--tool-args", json.dumps(WRONG)]  # fmt: skip
    doc = yaml.safe_load(SCENARIO.read_text())
    async with subprocess_until_ready(args, "READY", tmp_path / "pipecat_bot.log"):
        connector = bridge_pb2.ConnectorConfig(kind="pipecat", url=f"ws://127.0.0.1:{port}")
        run_id = await start_run(bridge_stub, [doc], agent_connector=connector)
        user = BotConfig(bridge.address, "user", lambda: play_script, run_filter=run_id,
                         max_sessions=1)  # fmt: skip
        async with asyncio.timeout(90):
            await asyncio.gather(watch_until_done(bridge_stub, run_id),
                                 run_bots(user, asyncio.Event()))  # fmt: skip
    result = await rescore(db_path, run_id, ScoringConfig(no_judge=True))
    (outcome,) = result.sessions
    tool_calls = outcome.get("TOOL_CALLS")
    assert tool_calls is not None and tool_calls.verdict is Verdict.FAILED, tool_calls
    first = tool_calls.detail["expectations"][0]
    assert (first["tool"], first["kind"], first["argument"]) == ("book_table", "arguments", "date")
    assert 'expected "2026-05-01", got "2026-05-02"' in first["reason"]
    assert tool_calls.detail["expectations"][1]["passed"]  # cancel_booking never called
    db = outcome.get("DB_STATE_ASSERTION")
    assert db is not None and db.verdict is Verdict.FAILED
    claimed = outcome.get("CLAIMED_NOT_DONE")
    assert claimed is not None and claimed.verdict is Verdict.PASSED, claimed
    success = outcome.get("is_successful")
    assert success is not None and success.verdict is Verdict.FAILED
    with RecordingReader(db_path) as reader:
        sid = outcome.session_id
        calls = [e.payload for e in reader.events(sid, [EventKind.TOOL_BACKEND_CALL])]
        logs = [e.payload.get("message") for e in reader.events(sid, [EventKind.LOG])]
        final = reader.final_states(sid)[Side.AGENT]
        session = reader.session(sid)
    assert [(c["tool"], c["arguments"], c["status"], c["transport"]) for c in calls] == [
        ("book_table", WRONG, 200, "http")]  # fmt: skip
    assert "tool_backend acknowledged" in logs
    assert final.state == {"bookings": {"2026-05-02": {"time": "19:00", "party_size": 2}}}
    assert session is not None and session.stop_reason == "end_tool"
