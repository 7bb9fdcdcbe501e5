"""The Node example agent in a text session: TextTurns both ways, no audio at all.

examples/node/bot.js declares Join.supports_text; with ``--modality text``
the bridge pairs it with the Python reference user, they exchange whole text
turns, and the session is recorded (transcripts from the turns, the tool
call, the final state) and ends as it does in audio.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from tests.interop.conftest import start_run, watch_until_done
from tests.interop.test_node import SCENARIO, node_ready, run_node
from vae.bots.brains.scripted import play_script
from vae.bots.runner import BotConfig, run_bots
from vae.bridge.v1 import bridge_pb2, bridge_pb2_grpc
from vae.bridge_service.server import BridgeServer
from vae.common.v1 import common_pb2
from vae.recordings.models import Channel, EventKind, Side
from vae.recordings.read.reader import RecordingReader


async def test_node_agent_text_session(
    bridge: BridgeServer,
    bridge_stub: bridge_pb2_grpc.BridgeServiceStub,
    db_path: Path,
    tmp_path: Path,
) -> None:
    node = node_ready()
    run_id = await start_run(bridge_stub, [SCENARIO], modality=common_pb2.MODALITY_TEXT)
    user = BotConfig(bridge.address, "user", lambda: play_script, run_filter=run_id, max_sessions=1)
    log = tmp_path / "node_bot.log"
    async with asyncio.timeout(60):
        events, (code, out), outcomes = await asyncio.gather(
            watch_until_done(bridge_stub, run_id),
            run_node(node, "bot.js", "--bridge", bridge.address, "--run", run_id,
                     "--sessions", "1", log=log),
            run_bots(user, asyncio.Event()),
        )  # fmt: skip
    assert code == 0, log.read_text()
    ((outcome),) = json.loads(out)["sessions"]
    assert (outcome["reason"], outcome["clean_exit"]) == ("STOP_REASON_END_TOOL", True)
    assert events[-1].kind == bridge_pb2.RUN_EVENT_KIND_RUN_FINISHED and len(outcomes) == 1
    assert "(text)" in log.read_text()

    with RecordingReader(db_path) as r:
        (session,) = r.sessions(run_id)
        assert (session.stop_reason, session.clean_exit) == ("end_tool", True)
        assert r.session_mode(session.session_id).modality == "text"
        assert (session.user_turns, session.agent_turns) == (1, 2)  # greeting, answer
        for channel in Channel:
            assert r.segments(session.session_id, channel) == [], channel
        evs = r.events(session.session_id)
        said = [(e.side, e.payload["text"]) for e in evs if e.kind is EventKind.TRANSCRIPT]
        assert said == [
            (Side.AGENT, "Hello, this is the Node agent."),
            (Side.USER, "Hi, please move my booking to Friday."),
            (Side.AGENT, "All done, goodbye."),
        ]
        calls = [e.payload for e in evs if e.kind is EventKind.TOOL_CALL]
        assert [c["name"] for c in calls] == ["change_booking"]
        final = r.final_states(session.session_id)[Side.AGENT]
        assert final.state["node_bot"] == {"change_booking": {"day": "friday"}}
        # The Node bot read the caller's words as text.
        assert {"role": "user", "content": "Hi, please move my booking to Friday."} in final.context
