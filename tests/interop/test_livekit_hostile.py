"""A hostile console peer ends its own session, and only that one.

Two runs share one bridge: a stand-in console agent that sends a message of a
kind vae does not know after its greeting, and one that holds a normal call
(``tests/bridge_service/connectors/livekit/fake_console``). The first session
ends ``bot_error`` naming the message; the second finishes with the agent's
end tool; both processes are gone.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest

from tests.interop.conftest import start_run, watch_until_done
from tests.interop.livekit_support import BOOK, alive
from vae.bots.brains.scripted import play_script
from vae.bots.runner import BotConfig, run_bots
from vae.bridge.v1 import bridge_pb2, bridge_pb2_grpc
from vae.bridge_service.server import BridgeServer
from vae.recordings.models import EventKind
from vae.recordings.read.reader import RecordingReader

FAKE = Path(__file__).resolve().parents[1] / "bridge_service/connectors/livekit/fake_console"


def fake(tmp_path: Path, mode: str) -> bridge_pb2.ConnectorConfig:
    agent = tmp_path / f"{mode}.py"
    agent.write_text("# the stand-in console ignores its agent file\n")
    env = {"PYTHONPATH": str(FAKE), "FAKE_CONSOLE_MODE": mode}
    options = json.dumps({"python": sys.executable, "env": env})
    return bridge_pb2.ConnectorConfig(kind="livekit", url=f"livekit:{agent}", options_json=options)


@pytest.mark.parametrize("mode", ["unknown", "oversized", "garbage"])
async def test_a_hostile_peer_ends_only_its_session(
    bridge: BridgeServer,
    bridge_stub: bridge_pb2_grpc.BridgeServiceStub,
    tmp_path: Path,
    db_path: Path,
    mode: str,
) -> None:
    hostile = await start_run(bridge_stub, [{**BOOK, "name": "hostile"}],
                              agent_connector=fake(tmp_path, mode))  # fmt: skip
    good = await start_run(bridge_stub, [{**BOOK, "name": "good"}],
                           agent_connector=fake(tmp_path, "speak"))  # fmt: skip
    users = [
        run_bots(
            BotConfig(bridge.address, "user", lambda: play_script, run_filter=run, max_sessions=1),
            asyncio.Event(),
        )
        for run in (hostile, good)
    ]
    async with asyncio.timeout(60):
        await asyncio.gather(watch_until_done(bridge_stub, hostile),
                             watch_until_done(bridge_stub, good), *users)  # fmt: skip
    with RecordingReader(db_path) as r:
        (bad,) = r.sessions(hostile)
        (fine,) = r.sessions(good)
        errors = [e.payload for e in r.events(bad.session_id) if e.kind is EventKind.SESSION_ERROR]
    assert bad.stop_reason == "bot_error"
    assert errors and errors[0]["field"].startswith("console.")
    assert fine.stop_reason == "end_tool"
    for session in (bad, fine):
        assert not alive(int(session.agent_bot["labels"]["pid"]))
