"""A pipecat phone agent over Twilio Media Streams, evaluated through the Twilio connector.

The agent is ``examples/pipecat_bot/twilio_bot.py``: a real pipecat pipeline
(its own venv, no network) with pipecat's ``TwilioFrameSerializer`` behind
its FastAPI WebSocket transport, automatic hang-up through Twilio's REST API
off. The bridge plays Twilio; the caller is the Python reference bot. Audio
flows both ways as μ-law, the caller barges in and the agent's ``clear`` is
honoured, the agent's marks are echoed, the call is recorded and scored.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.helpers import free_port
from tests.interop.conftest import (
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
from vae.recordings.models import Channel, EventKind, Side, Verdict
from vae.recordings.read.reader import RecordingReader
from vae.recordings.traces.ids import traceparent
from vae.scorer_service.config import ScoringConfig
from vae.scorer_service.scoring.rescore import rescore

TWILIO_BOT = ROOT / "examples" / "pipecat_bot" / "twilio_bot.py"
ANSWER_S = 3.0
SCENARIO = {
    "name": "twilio_table",
    "domain": "restaurant",
    "max_duration": 40,
    "first_speaker": "agent",
    "user": {
        "persona": {"name": "Ann"},
        "yield_after_s": None,  # the caller keeps talking over the agent until it stops
        "script": [
            {"say": "Hello, I would like a table for two tonight, please."},
            # Talk over the agent's answer: the agent stops, its serializer sends `clear`.
            {"barge_in_after_s": 0.8, "say": "Sorry, make that three people, at eight."},
        ],
    },
    "agent": {"persona": {"role": "host"}},
    "success_signals": ["CLEAN_EXIT"],
}


@pytest.fixture
async def twilio_bot(tmp_path: Path) -> AsyncIterator[tuple[int, Path]]:
    python = require_pipecat_venv()
    port = free_port()
    log = tmp_path / "twilio_bot.log"
    args = [str(python), str(TWILIO_BOT), "--port", str(port), "--answer-s", str(ANSWER_S)]
    async with subprocess_until_ready(args, "READY", log):
        yield port, log


def voiced_s(samples: np.ndarray, rate: int) -> float:
    frame = rate // 50
    n = len(samples) // frame
    rms = np.sqrt(np.mean(samples[: n * frame].astype(np.float64).reshape(n, frame) ** 2, 1))
    return float((rms > 1000).sum()) / 50


async def test_pipecat_twilio_agent_recorded_and_scored(
    bridge: BridgeServer,
    bridge_stub: bridge_pb2_grpc.BridgeServiceStub,
    twilio_bot: tuple[int, Path],
    db_path: Path,
) -> None:
    port, log = twilio_bot
    options = {
        "final_state_url": f"http://127.0.0.1:{port}/calls/{{call_sid}}",
        "custom_parameters": {"campaign": "vae-test"},
    }
    connector = bridge_pb2.ConnectorConfig(
        kind="twilio", url=f"twilio+ws://127.0.0.1:{port}/ws", options_json=json.dumps(options)
    )
    run_id = await start_run(bridge_stub, [SCENARIO], agent_connector=connector)
    user = BotConfig(bridge.address, "user", lambda: play_script, run_filter=run_id, max_sessions=1)
    async with asyncio.timeout(90):
        events, outcomes = await asyncio.gather(
            watch_until_done(bridge_stub, run_id), run_bots(user, asyncio.Event())
        )
    assert events[-1].status == bridge_pb2.RUN_STATUS_COMPLETED, [e.message for e in events]

    with RecordingReader(db_path) as r:
        (s,) = r.sessions(run_id)
        assert (s.stop_reason, s.clean_exit) == ("end_tool", True), s.stop_detail
        assert "closed the media stream" in s.stop_detail
        assert s.agent_bot["labels"]["connector"] == "twilio" and s.audio["rates"]["agent"] == 8000
        agent = r.read_channel(s.session_id, Channel.AGENT)
        to_agent = r.read_channel(s.session_id, Channel.TO_AGENT)
        # Audio both ways: the greeting, the cut answer and the last answer; the caller heard.
        spoken = voiced_s(agent.samples, agent.sample_rate)
        assert ANSWER_S * 2 - 0.5 < spoken < ANSWER_S * 3 - 0.5  # one answer was cut short
        assert voiced_s(to_agent.samples, to_agent.sample_rate) > 2.0
        logs = [e.payload for e in r.events(s.session_id) if e.kind is EventKind.LOG]
        clears = [p for p in logs if p.get("twilio_event") == "clear"]
        marks = [p["mark"] for p in logs if p.get("twilio_event") == "mark"]
        assert clears, logs
        assert "greeting" in marks and "answer-2" in marks
        final = r.final_states(s.session_id)[Side.AGENT].state
    # What the agent saw of Twilio: start's parameters and format, our echoed marks.
    assert final["custom_parameters"] == {
        "scenario": "twilio_table",
        "session_id": s.session_id,
        "run_id": run_id,
        "role": "agent",
        "campaign": "vae-test",
        # the session's W3C trace context (docs/traces.md)
        "traceparent": traceparent(run_id, s.session_id),
    }
    assert final["media_format"] == {"encoding": "audio/x-mulaw", "sampleRate": 8000, "channels": 1}
    assert final["barge_ins"] >= 1 and final["answers"] == 2
    assert "greeting" in final["marks_answered"]
    assert len(outcomes) == 1

    result = await rescore(db_path, run_id, ScoringConfig())
    with RecordingReader(db_path) as r:
        scores = {x.signal: x for x in r.scores(result.scoring.scoring_id, s.session_id)}
    assert scores["CLEAN_EXIT"].verdict is Verdict.PASSED
    measured = scores["timing.response_latency_p50_s"].value
    reported = [float(v) for v in re.findall(r"REPLY_LATENCY_S ([\d.]+)", log.read_text())]
    print(f"reply latency: bridge-measured p50 {measured:.3f} s, bot-reported {reported}")
    assert measured is not None and reported


async def test_a_twilio_bot_can_play_the_caller(
    bridge: BridgeServer,
    bridge_stub: bridge_pb2_grpc.BridgeServiceStub,
    twilio_bot: tuple[int, Path],
    db_path: Path,
) -> None:
    """The same connector on the user side: the bot's hang-up is the user hanging up."""
    port, _ = twilio_bot
    scenario = {
        "name": "twilio_caller",
        "max_duration": 40,
        "first_speaker": "user",
        "agent": {"script": ["Hello, how can I help?", "Sure, anything else?", "Bye."]},
    }
    connector = bridge_pb2.ConnectorConfig(kind="twilio", url=f"twilio+ws://127.0.0.1:{port}/ws")
    run_id = await start_run(bridge_stub, [scenario], user_connector=connector)
    agent = BotConfig(
        bridge.address, "agent", lambda: play_script, run_filter=run_id, max_sessions=1
    )
    async with asyncio.timeout(90):
        events, _ = await asyncio.gather(
            watch_until_done(bridge_stub, run_id), run_bots(agent, asyncio.Event())
        )
    assert events[-1].status == bridge_pb2.RUN_STATUS_COMPLETED
    with RecordingReader(db_path) as r:
        (s,) = r.sessions(run_id)
        user = r.read_channel(s.session_id, Channel.USER)
        kinds = [e.kind for e in r.events(s.session_id) if e.side is Side.USER]
    assert s.stop_reason == "user_hang_up", s.stop_detail
    assert s.user_bot["labels"]["connector"] == "twilio" and user.sample_rate == 8000
    assert voiced_s(user.samples, 8000) > ANSWER_S * 2  # its greeting and answers
    assert EventKind.AUDIO_DROPPED not in kinds  # no audio was pushed at a hung-up line


async def test_an_llm_caller_hears_an_audio_only_agent_through_its_recogniser(
    bridge: BridgeServer,
    bridge_stub: bridge_pb2_grpc.BridgeServiceStub,
    twilio_bot: tuple[int, Path],
    db_path: Path,
) -> None:
    """``vae bot user --llm ... --asr openai``: the agent shares no transcripts (it is a phone
    line), so the LLM caller transcribes each of its turns through the real ``openai`` client
    (loopback ``/v1/audio/transcriptions``), acts on the text and reports it as HEARD."""
    from tests.stt_server import TranscriptionServer
    from vae.bots.brains.llm import LlmBrain, LlmSettings
    from vae.bots.stand_in.openai_server import OpenAICompatibleServer
    from vae.speech.stt import make_transcriber
    from vae.speech.stt_settings import TranscriptionSettings

    port, _ = twilio_bot
    heard_texts = ["Luigi's, how can I help you?", "Eight works, see you tonight."]
    answers = iter(heard_texts)
    chats: list[list[dict[str, Any]]] = []

    def llm(request: dict[str, Any]) -> dict[str, Any]:
        chats.append(request["messages"])
        last = str(request["messages"][-1].get("content") or "")
        return {"content": f"You said: {last}"}  # its reply uses what it heard

    scenario = {
        "name": "twilio_llm_caller",
        "max_duration": 40,
        "first_speaker": "agent",
        "user": {"persona": {"name": "Ann"}},
        "agent": {"persona": {"role": "host"}},
        "success_signals": ["CLEAN_EXIT"],
    }
    connector = bridge_pb2.ConnectorConfig(kind="twilio", url=f"twilio+ws://127.0.0.1:{port}/ws")
    run_id = await start_run(bridge_stub, [scenario], agent_connector=connector)
    with (
        TranscriptionServer(lambda _upload: next(answers, "")) as stt,
        OpenAICompatibleServer(llm) as chat,
    ):
        ears = make_transcriber(TranscriptionSettings("openai", stt.base_url, "whisper-1"))
        settings = LlmSettings(base_url=chat.base_url, model="stand-in")
        user = BotConfig(
            bridge.address, "user", lambda: LlmBrain(settings, transcriber=ears),
            run_filter=run_id, max_sessions=1,
        )  # fmt: skip
        try:
            async with asyncio.timeout(90):
                events, _ = await asyncio.gather(
                    watch_until_done(bridge_stub, run_id), run_bots(user, asyncio.Event())
                )
        finally:
            await ears.close()
        uploads = list(stt.uploads)
    assert events[-1].status == bridge_pb2.RUN_STATUS_COMPLETED, [e.message for e in events]
    with RecordingReader(db_path) as r:
        (s,) = r.sessions(run_id)
        mine = [e.payload for e in r.events(s.session_id, [EventKind.TRANSCRIPT])
                if e.side is Side.USER]  # fmt: skip
    heard = [p["text"] for p in mine if "heard" in str(p["kind"])]
    spoken = [p["text"] for p in mine if "spoken" in str(p["kind"])]
    # Each agent turn (its greeting and its answers: tones of ANSWER_S) was transcribed.
    assert heard == heard_texts, (heard, [round(u.seconds, 2) for u in uploads])
    assert all(u.seconds >= ANSWER_S - 0.2 for u in uploads[: len(heard_texts)])
    # The LLM was given the transcribed text and answered it: its replies use what it heard.
    told = [m["content"] for m in chats[-1] if m["role"] == "user"]  # the whole history
    assert told[: len(heard_texts)] == heard_texts
    assert spoken[:2] == [f"You said: {t}" for t in heard_texts]
