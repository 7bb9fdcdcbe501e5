"""An agent vae starts learns its session's tool backend from ``VAE_TOOLS_URL``.

The backend's port is bound before the agent process starts, so the address
is in the process's environment from its first line (docs/contract.md, "The
tool backend"). A stand-in console agent
(``tests/bridge_service/connectors/livekit/fake_console``, mode ``tools``)
POSTs the booking there: the call is recorded as a ``tool_backend_call`` and
the backend's DB, the agent's final state, holds the booking.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from tests.interop.conftest import start_run, watch_until_done
from tests.interop.livekit_support import BOOK, BOOKING
from tests.interop.test_livekit_hostile import fake
from vae.bots.brains.scripted import play_script
from vae.bots.runner import BotConfig, run_bots
from vae.bridge.v1 import bridge_pb2_grpc
from vae.bridge_service.server import BridgeServer
from vae.recordings.models import EventKind, Side
from vae.recordings.read.reader import RecordingReader


async def test_a_started_agent_calls_the_backend_named_in_its_environment(
    bridge: BridgeServer,
    bridge_stub: bridge_pb2_grpc.BridgeServiceStub,
    tmp_path: Path,
    db_path: Path,
) -> None:
    booked = {"party_size": "$args.party_size", "time": "$args.time"}
    effects = {"book_table": [{"op": "append", "path": "bookings", "value": booked}]}
    doc = {**BOOK, "name": "tools", "tool_backend": True,
           "agent": {**BOOK["agent"], "tool_effects": effects}}  # fmt: skip
    run = await start_run(bridge_stub, [doc], agent_connector=fake(tmp_path, "tools"))
    user = BotConfig(bridge.address, "user", lambda: play_script, run_filter=run, max_sessions=1)
    async with asyncio.timeout(60):
        await asyncio.gather(watch_until_done(bridge_stub, run), run_bots(user, asyncio.Event()))
    with RecordingReader(db_path) as r:
        (session,) = r.sessions(run)
        events = r.events(session.session_id)
        state = r.final_states(session.session_id).get(Side.AGENT)
    started = [e.payload for e in events if e.kind is EventKind.TOOL_BACKEND]
    calls = [e.payload for e in events if e.kind is EventKind.TOOL_BACKEND_CALL]
    assert session.stop_reason == "end_tool", session.stop_detail
    assert started and started[0]["event"] == "started"
    assert [(c["tool"], c["transport"], c["status"]) for c in calls] == [
        ("book_table", "http", 200)
    ]
    assert calls[0]["arguments"] == BOOKING
    assert state is not None and state.state == {"bookings": [BOOKING]}
