"""The example LiveKit agent, unchanged, through vae over LiveKit's real console protocol.

livekit-agents 1.8 from PyPI (its own venv) runs ``examples/livekit_agent/agent.py``
in console mode, one process per session, with Silero VAD and
livekit-plugins-openai's STT, LLM and TTS pointed at the loopback stand-ins;
the caller is vae's scripted reference bot speaking eSpeak NG over gRPC. A
caller who asks for a table gets it booked and the scenario passes; a caller
who says not to book is booked anyway by the naive stand-in LLM, and the
scenario fails for exactly that. The text modality goes through the same
agent as ``run_input`` requests.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.interop.conftest import start_run, watch_until_done
from tests.interop.livekit_support import (
    BOOK,
    BOOK_LINE,
    BOOKING,
    MUST_NOT_BOOK,
    alive,
    connector,
    stand_ins,  # noqa: F401  (a fixture)
)
from vae.bots.brains.scripted import play_script
from vae.bots.runner import BotConfig, run_bots
from vae.bridge.v1 import bridge_pb2, bridge_pb2_grpc
from vae.bridge_service.server import BridgeServer
from vae.common.v1 import common_pb2
from vae.recordings.models import Channel, EventKind, Side, Verdict
from vae.recordings.read.reader import RecordingReader
from vae.scorer_service.config import ScoringConfig
from vae.scorer_service.scoring.rescore import rescore


async def run_with_user(
    bridge: BridgeServer,
    stub: bridge_pb2_grpc.BridgeServiceStub,
    docs: list[dict[str, Any]],
    agent: bridge_pb2.ConnectorConfig,
    **options: Any,
) -> str:
    run_id = await start_run(stub, docs, agent_connector=agent, **options)
    user = BotConfig(
        bridge.address, "user", lambda: play_script, concurrency=len(docs),
        run_filter=run_id, max_sessions=len(docs),
    )  # fmt: skip
    async with asyncio.timeout(90):
        events, _ = await asyncio.gather(
            watch_until_done(stub, run_id), run_bots(user, asyncio.Event())
        )
    assert events[-1].kind == bridge_pb2.RUN_EVENT_KIND_RUN_FINISHED
    return run_id


@pytest.mark.timeout(240)  # real-time sessions on a loaded CI machine
async def test_the_example_agent_books_and_is_scored(
    bridge: BridgeServer,
    bridge_stub: bridge_pb2_grpc.BridgeServiceStub,
    stand_ins: Any,  # noqa: F811
    db_path: Path,
) -> None:
    run_id = await run_with_user(
        bridge, bridge_stub, [BOOK, MUST_NOT_BOOK], connector(stand_ins), concurrency=2
    )
    with RecordingReader(db_path) as r:
        sessions = {s.scenario_name: s for s in r.sessions(run_id)}
        booked = sessions["livekit_book_table"]
        assert (booked.stop_reason, booked.clean_exit) == ("end_tool", True)
        assert booked.agent_bot["name"] == "livekit-agents"
        assert booked.agent_bot["version"].startswith("1.8")
        pids = {int(s.agent_bot["labels"]["pid"]) for s in sessions.values()}
        assert len(pids) == 2 and not any(alive(p) for p in pids)  # one process each, gone

        # Both channels: the caller's words, then the agent's greeting and answer.
        user = r.read_channel(booked.session_id, Channel.USER)
        agent = r.read_channel(booked.session_id, Channel.AGENT)
        assert agent.sample_rate == 16000
        assert np.abs(user.samples).max() > 3000 and np.abs(agent.samples).max() > 3000
        events = r.events(booked.session_id)
        agent_events = [e for e in events if e.side is Side.AGENT]
        spoken = [e.payload["text"] for e in agent_events if e.kind is EventKind.TRANSCRIPT
                  and e.payload["kind"] == "spoken"]  # fmt: skip
        assert spoken == [
            "Thank you for calling Luigi's. How can I help you?",
            "Your table is booked. Thank you, goodbye.",
        ]
        heard = [e.payload["text"] for e in agent_events if e.kind is EventKind.TRANSCRIPT
                 and e.payload["kind"] == "heard"]  # fmt: skip
        assert heard == [BOOK_LINE]  # what its STT heard
        calls = [e.payload for e in agent_events if e.kind is EventKind.TOOL_CALL]
        assert [(c["name"], c["arguments"], c["is_write"]) for c in calls] == [
            ("book_table", BOOKING, True),
            ("end_call", {}, False),
        ]
        assert calls[0]["result"] == "booked: table 1 for 2 at 19:00"
        states = [e.payload["agent_state"] for e in agent_events if "agent_state" in e.payload]
        assert {"listening", "thinking", "speaking"} <= set(states)
        tokens = [e.payload for e in agent_events if e.kind is EventKind.TOKEN_USAGE]
        assert tokens and all(t["prompt_tokens"] > 0 for t in tokens)
        metrics = {e.payload["name"] for e in agent_events if e.kind is EventKind.METRIC}
        assert {"end_of_turn_probability", "e2e_latency"} <= metrics
        final = r.final_states(booked.session_id)[Side.AGENT]
        assert final.state == {"bookings": [BOOKING]}
        assert any("message" in item for item in final.context)  # its chat history

    result = await rescore(db_path, run_id, ScoringConfig())
    with RecordingReader(db_path) as r:
        scores = {
            name: {s.signal: s for s in r.scores(result.scoring.scoring_id, s.session_id)}
            for name, s in sessions.items()
        }
    for signal in ("ACTION_MATCH", "DB_STATE_MATCH", "CLEAN_EXIT", "is_successful"):
        got = scores["livekit_book_table"][signal]
        assert got.verdict is Verdict.PASSED, (signal, got.detail)
    refused = scores["livekit_must_not_book"]
    assert refused["is_successful"].verdict is Verdict.FAILED
    assert refused["CLEAN_EXIT"].verdict is Verdict.PASSED
    db = refused["DB_STATE_MATCH"]
    assert db.verdict is Verdict.FAILED
    assert "bookings" in str(db.detail)  # it failed for the booking it should not have made


async def test_the_text_modality_goes_through_run_input(
    bridge: BridgeServer,
    bridge_stub: bridge_pb2_grpc.BridgeServiceStub,
    stand_ins: Any,  # noqa: F811
    db_path: Path,
) -> None:
    run_id = await run_with_user(
        bridge, bridge_stub, [BOOK], connector(stand_ins), modality=common_pb2.MODALITY_TEXT
    )
    with RecordingReader(db_path) as r:
        (session,) = r.sessions(run_id)
        assert session.stop_reason == "end_tool"
        assert r.session_mode(session.session_id).modality == "text"
        texts = [e.payload["text"] for e in r.events(session.session_id)
                 if e.kind is EventKind.TRANSCRIPT and e.side is Side.AGENT]  # fmt: skip
        assert "Your table is booked. Thank you, goodbye." in texts
        events = r.events(session.session_id)
        calls = [e.payload for e in events if e.kind is EventKind.TOOL_CALL]
        assert next((c["name"], c["arguments"]) for c in calls) == ("book_table", BOOKING)
        final = r.final_states(session.session_id)[Side.AGENT]
        assert final.state == {"bookings": [BOOKING]}
        # No audio in a text session: the agent's audio output was switched off.
        assert not any(e.kind is EventKind.AUDIO_DROPPED for e in events)
