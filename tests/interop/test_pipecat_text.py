"""A text session through a real pipecat pipeline (pipecat-ai 1.14 in its own venv).

The agent is ``examples/pipecat_bot`` reached by the pipecat connector with
``--modality text``: the user's turns go as RTVI ``send-text`` (no audio
response), pipecat's RTVIProcessor turns each into an LLMMessagesAppendFrame,
the bot answers as an LLM would, and pipecat's RTVIObserver reports the answer
as ``bot-llm-started``/``bot-llm-text``/``bot-llm-stopped``, which comes back
as the agent's text turn. The session is recorded without any audio and scores.
"""

from __future__ import annotations

import asyncio
import copy
from pathlib import Path

import grpc
import pytest

from tests.interop.conftest import start_run, watch_until_done
from tests.interop.test_pipecat import BOOKING, SCENARIO
from vae.bots.brains.scripted import play_script
from vae.bots.runner import BotConfig, run_bots
from vae.bridge.v1 import bridge_pb2, bridge_pb2_grpc
from vae.bridge_service.server import BridgeServer
from vae.common.v1 import common_pb2
from vae.recordings.models import Channel, EventKind, SessionStatus, Side, Verdict
from vae.recordings.read.reader import RecordingReader
from vae.scorer_service.config import ScoringConfig
from vae.scorer_service.scoring.rescore import rescore

TEXT = common_pb2.MODALITY_TEXT


async def test_pipecat_bot_text_session_recorded_and_scored(
    bridge: BridgeServer,
    bridge_stub: bridge_pb2_grpc.BridgeServiceStub,
    pipecat_bot: str,
    db_path: Path,
) -> None:
    connector = bridge_pb2.ConnectorConfig(kind="pipecat", url=pipecat_bot, options_json="{}")
    run_id = await start_run(bridge_stub, [SCENARIO], agent_connector=connector, modality=TEXT)
    stop = asyncio.Event()
    user = BotConfig(bridge.address, "user", lambda: play_script, run_filter=run_id, max_sessions=1)
    async with asyncio.timeout(60):
        events, outcomes = await asyncio.gather(
            watch_until_done(bridge_stub, run_id), run_bots(user, stop)
        )
    assert events[-1].kind == bridge_pb2.RUN_EVENT_KIND_RUN_FINISHED
    assert len(outcomes) == 1

    with RecordingReader(db_path) as r:
        (session,) = r.sessions(run_id)
        assert session.status is SessionStatus.ENDED
        assert (session.stop_reason, session.clean_exit) == ("end_tool", True)
        assert r.session_mode(session.session_id).modality == "text"
        assert (session.user_turns, session.agent_turns) == (1, 1)
        for channel in Channel:  # not one sample of audio
            assert r.segments(session.session_id, channel) == [], channel
        evs = r.events(session.session_id)
        said = [
            (e.side, e.payload["text"], e.payload.get("source"))
            for e in evs
            if e.kind is EventKind.TRANSCRIPT
        ]
        assert said == [
            (Side.USER, SCENARIO["user"]["script"][0]["say"], "text_turn"),  # type: ignore[index]
            (Side.AGENT, "Your booking is done, goodbye.", "text_turn"),
        ]
        writes = [e.payload for e in evs if e.kind is EventKind.TOOL_CALL and e.payload["is_write"]]
        assert [(w["name"], w["arguments"]) for w in writes] == [("book_table", BOOKING)]
        final = r.final_states(session.session_id)[Side.AGENT]
        assert final.state == {"bookings": [BOOKING]}
        # The bot's context holds the user's words as text: send-text reached its LLM context.
        heard = [m["content"] for m in final.context if m.get("role") == "user"]
        assert heard == [SCENARIO["user"]["script"][0]["say"]]  # type: ignore[index]

    result = await rescore(db_path, run_id, ScoringConfig())
    with RecordingReader(db_path) as r:
        scores = {s.signal: s for s in r.scores(result.scoring.scoring_id, session.session_id)}
    for signal in ("ACTION_MATCH", "DB_STATE_MATCH", "CLEAN_EXIT", "is_successful"):
        assert scores[signal].verdict is Verdict.PASSED, (signal, scores[signal].detail)
    latency = scores["timing.response_latency_p50_s"]
    assert latency.verdict is Verdict.NOT_APPLICABLE and latency.value is None
    assert latency.detail["modality"] == "text"


async def test_pipecat_cannot_follow_the_virtual_clock(
    bridge_stub: bridge_pb2_grpc.BridgeServiceStub,
) -> None:
    """Refused at StartRun, naming why: never run on a clock it cannot follow."""
    scenario = copy.deepcopy(SCENARIO)
    connector = bridge_pb2.ConnectorConfig(kind="pipecat", url="ws://127.0.0.1:9", options_json="")
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await start_run(
            bridge_stub, [scenario], agent_connector=connector, clock=common_pb2.CLOCK_KIND_VIRTUAL
        )
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    details = err.value.details() or ""
    assert details.startswith("options.clock: the agent side's pipecat connector cannot serve")
    assert "real time" in details
