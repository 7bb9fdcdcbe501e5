"""Text sessions: whole turns both ways, on the real and on the virtual clock.

A text turn is recorded as the sender's spoken transcript, counted as a turn,
delivered to the peer (at once on the real clock; on the virtual clock when it
has been "spoken"), and every end of a session works as in audio.
"""

from __future__ import annotations

import asyncio
import json

import grpc
import pytest

from tests.bridge_service.bots import TestBot, tone
from tests.bridge_service.conftest import scenario, start_run, watch
from tests.bridge_service.lockstep_bots import StepBot, waiting
from vae.bridge.v1 import bridge_pb2, bridge_pb2_grpc
from vae.bridge_service.server import BridgeServer
from vae.common.v1 import common_pb2
from vae.recordings.models import EventKind, Side
from vae.recordings.read.reader import RecordingReader

USER, AGENT = common_pb2.ROLE_USER, common_pb2.ROLE_AGENT
TEXT, VIRTUAL = common_pb2.MODALITY_TEXT, common_pb2.CLOCK_KIND_VIRTUAL
MS = 1_000_000


def text_turn(text: str) -> bridge_pb2.BotMessage:
    return bridge_pb2.BotMessage(text=bridge_pb2.TextTurn(text=text))


def transcripts(reader: RecordingReader, session_id: str) -> list[tuple[Side, str, int]]:
    s = reader.session(session_id)
    assert s is not None
    return [
        (e.side, e.payload["text"], (e.bridge_ns - s.started_ns) // MS)
        for e in reader.events(session_id)
        if e.kind is EventKind.TRANSCRIPT
    ]


async def test_text_on_the_real_clock_is_delivered_at_once_and_recorded(
    bridge: BridgeServer, stub: bridge_pb2_grpc.BridgeServiceStub
) -> None:
    run_id = await start_run(
        stub, [scenario()], modality=TEXT, clock=common_pb2.CLOCK_KIND_REAL,
        inactivity_timeout_s=1, max_auto_retries=0,
    )  # fmt: skip
    agent = StepBot(
        bridge.address, AGENT, run_id, turns={0: "Trattoria Luca, <b>good</b> evening."}
    )
    user = StepBot(bridge.address, USER, run_id, reply="hello agent")
    _, _, events = await asyncio.gather(agent.run(), user.run(), watch(stub, run_id, 20))
    assert events[-1].status == bridge_pb2.RUN_STATUS_COMPLETED
    assert user.start.modality == TEXT and user.start.clock == common_pb2.CLOCK_KIND_REAL
    assert user.frames == [] and agent.frames == [] and user.ticks == [], "no audio, no ticks"
    assert [(t.text, t.sequence) for t in user.texts] == [
        ("Trattoria Luca, <b>good</b> evening.", 0)
    ]
    assert [t.text for t in agent.texts] == ["hello agent"]
    with RecordingReader(bridge.db_path) as reader:
        (s,) = reader.sessions(run_id)
        assert reader.session_mode(s.session_id).modality == "text"
        said = [(side, text) for side, text, _ in transcripts(reader, s.session_id)]
        assert said == [
            (Side.AGENT, "Trattoria Luca, <b>good</b> evening."),
            (Side.USER, "hello agent"),
        ]
        payload = next(
            e.payload for e in reader.events(s.session_id) if e.kind is EventKind.TRANSCRIPT
        )
        assert (payload["kind"], payload["is_final"], payload["source"]) == (
            "spoken",
            True,
            "text_turn",
        )
        assert (s.agent_turns, s.user_turns) == (1, 1)
        # Nobody spoke for the inactivity timeout after that: the call ended as in audio.
        assert s.stop_reason == "inactivity_timeout"
        assert 1.0 <= (s.ended_ns - s.started_ns) / 1e9 < 5


def agent_fmt() -> common_pb2.AudioFormat:
    return common_pb2.AudioFormat(
        encoding=common_pb2.AUDIO_ENCODING_PCM16LE, sample_rate_hz=16000, channels=1
    )


async def test_text_on_the_virtual_clock_times_turns_by_their_speaking_time(
    bridge: BridgeServer, stub: bridge_pb2_grpc.BridgeServiceStub
) -> None:
    """Each turn reaches the peer when "spoken"; a silent line jumps to its inactivity end."""
    run_id = await start_run(
        stub, [scenario()], modality=TEXT, clock=VIRTUAL, inactivity_timeout_s=4
    )
    # The agent greets at step 0 (6 words: 2 s at 180 words a minute); the user answers
    # at the next step, when the greeting reached it (3 words: 1 s).
    agent = StepBot(bridge.address, AGENT, run_id, turns={0: "SkyJet support, how can I help?"})
    user = StepBot(bridge.address, USER, run_id, turns={1: "Hi, a bag."})
    _, _, events = await asyncio.gather(agent.run(), user.run(), watch(stub, run_id, 20))
    assert events[-1].status == bridge_pb2.RUN_STATUS_COMPLETED
    assert [(t.text, t.session_ms) for t in user.texts] == [
        ("SkyJet support, how can I help?", 2000)
    ]
    assert [(t.text, t.session_ms) for t in agent.texts] == [("Hi, a bag.", 3000)]
    assert [t.session_ms for t in user.ticks][:2] == [0, 2000]
    with RecordingReader(bridge.db_path) as reader:
        (s,) = reader.sessions(run_id)
        # Recorded when each turn began, on the session clock.
        assert transcripts(reader, s.session_id) == [
            (Side.AGENT, "SkyJet support, how can I help?", 0),
            (Side.USER, "Hi, a bag.", 2000),
        ]
        assert s.stop_reason == "inactivity_timeout"
        # The user's turn ended at 3 s; 4 s of nothing later the session ended, exactly.
        assert s.ended_ns - s.started_ns == 7000 * MS
        clock = reader.session_clock(s.session_id)
        assert clock is not None and clock["modality"] == "text" and clock["steps"] == 3


async def test_text_wake_up_and_end_of_call_on_the_virtual_clock(
    bridge: BridgeServer, stub: bridge_pb2_grpc.BridgeServiceStub
) -> None:
    """A bot's wake_at_ms gets it a tick; its last words reach the peer; the end tool ends it."""
    run_id = await start_run(stub, [scenario()], modality=TEXT, clock=VIRTUAL)
    agent = StepBot(
        bridge.address, AGENT, run_id, turns={1: "Goodbye now."}, end_at=1, wake_at_ms=500
    )
    user = StepBot(bridge.address, USER, run_id, turns={0: "Hello."})
    _, _, events = await asyncio.gather(agent.run(), user.run(), watch(stub, run_id, 20))
    assert events[-1].status == bridge_pb2.RUN_STATUS_COMPLETED
    assert [t.session_ms for t in agent.ticks] == [0, 333]  # woken when "Hello." arrived...
    # ... (the 500 ms wake-up was later than that): it said goodbye and ended at step 1.
    # Its last words (667 ms of speech) reached the user whole, within the end's grace
    # period (0.3 s in these tests): at 333 + 300 ms.
    assert [(t.text, t.session_ms) for t in user.texts] == [("Goodbye now.", 633)]
    with RecordingReader(bridge.db_path) as reader:
        (s,) = reader.sessions(run_id)
        assert (s.stop_reason, s.clean_exit) == ("end_tool", True)
        assert s.ended_ns - s.started_ns == 633 * MS


async def test_audio_in_a_text_session_and_text_in_an_audio_session_are_refused(
    bridge: BridgeServer, stub: bridge_pb2_grpc.BridgeServiceStub
) -> None:
    run_id = await start_run(stub, [scenario()], modality=TEXT, max_auto_retries=0)
    speaks = TestBot(
        bridge.address, USER, lambda b: b.speak(tone(0.1, 16000)), run_filter=run_id,
        join=bridge_pb2.BotMessage(join=bridge_pb2.Join(
            role=USER, send_format=agent_fmt(), receive_format=agent_fmt(), run_filter=run_id,
            supports_text=True)),
    )  # fmt: skip
    agent = StepBot(bridge.address, AGENT, run_id)
    got, _, _ = await asyncio.gather(speaks.run(), agent.run(), watch(stub, run_id))
    assert got.status == grpc.StatusCode.INVALID_ARGUMENT
    assert got.details.startswith("audio: audio is not valid in a text session")

    run_id = await start_run(stub, [scenario()], max_auto_retries=0)
    writes = TestBot(bridge.address, USER, lambda b: b.send(text_turn("hi")), run_filter=run_id)
    listens = TestBot(bridge.address, AGENT, lambda b: b.speak(tone(0.1, 16000)), run_filter=run_id)
    got, _, _ = await asyncio.gather(writes.run(), listens.run(), watch(stub, run_id))
    assert got.status == grpc.StatusCode.INVALID_ARGUMENT
    assert got.details.startswith("text: a TextTurn is only valid in a text session")
    with RecordingReader(bridge.db_path) as reader:
        assert {s.stop_reason for r in reader.list_runs() for s in reader.sessions(r.run_id)} == {
            "bot_error"
        }


async def test_an_empty_text_turn_is_refused(
    bridge: BridgeServer, stub: bridge_pb2_grpc.BridgeServiceStub
) -> None:
    run_id = await start_run(stub, [scenario()], modality=TEXT, max_auto_retries=0)
    user = StepBot(bridge.address, USER, run_id, extra={})
    agent = StepBot(bridge.address, AGENT, run_id, turns={0: "   "})
    await asyncio.gather(user.run(), agent.run(), watch(stub, run_id))
    assert agent.status == grpc.StatusCode.INVALID_ARGUMENT
    assert agent.details == "text.text: a text turn must not be empty"


@pytest.mark.parametrize(
    ("connector", "option", "words"),
    [
        ("twilio", "options.modality", "Twilio Media Streams carries only audio"),
        ("pipecat", "options.clock", "cannot follow the virtual clock"),
    ],
)
async def test_connectors_that_cannot_serve_the_tier_are_refused_at_start_run(
    stub: bridge_pb2_grpc.BridgeServiceStub, connector: str, option: str, words: str
) -> None:
    url = "twilio+ws://127.0.0.1:9/ws" if connector == "twilio" else "ws://127.0.0.1:9"
    cfg = bridge_pb2.ConnectorConfig(kind=connector, url=url)
    tier = {"modality": TEXT} if connector == "twilio" else {"clock": VIRTUAL}
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await start_run(stub, [scenario()], agent_connector=cfg, **tier)
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    details = err.value.details() or ""
    assert details.startswith(f"{option}: the agent side's {connector} connector cannot serve")
    assert words in details


async def test_start_run_refuses_text_when_the_waiting_bots_did_not_declare_it(
    bridge: BridgeServer, stub: bridge_pb2_grpc.BridgeServiceStub
) -> None:
    old = StepBot(bridge.address, USER, supports_text=False, name="audio-only")
    task = asyncio.create_task(old.run())
    try:
        await waiting(bridge, 1)
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await start_run(stub, [scenario()], modality=TEXT)
    finally:
        task.cancel()
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert (err.value.details() or "").startswith(
        "options.modality: the user bots waiting (audio-only 1) did not declare Join.supports_text"
    )


async def test_a_resume_keeps_its_runs_modality(
    bridge: BridgeServer, stub: bridge_pb2_grpc.BridgeServiceStub
) -> None:
    run_id = await start_run(stub, [scenario()], pairing_timeout_s=0.2, max_auto_retries=0)
    await watch(stub, run_id)
    request = bridge_pb2.StartRunRequest(
        resume=run_id, options=bridge_pb2.RunOptions(modality=TEXT)
    )
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await stub.StartRun(request)
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert err.value.details() == (
        f"options.modality: run {run_id} was recorded with modality audio; a resume keeps it "
        "(start a new run for modality text)"
    )
    with RecordingReader(bridge.db_path) as reader:
        run = reader.get_run(run_id)
        assert run is not None and json.dumps(run.options).count('"modality": "audio"') == 1


async def test_a_text_bot_that_stops_answering_ticks_stalls_its_session(
    bridge: BridgeServer, stub: bridge_pb2_grpc.BridgeServiceStub
) -> None:
    run_id = await start_run(
        stub, [scenario()], modality=TEXT, clock=VIRTUAL, inactivity_timeout_s=1,
        max_auto_retries=0,
    )  # fmt: skip
    agent = StepBot(bridge.address, AGENT, run_id, turns={0: "Hello there."})
    user = StepBot(bridge.address, USER, run_id, stall_after=1)
    _, _, events = await asyncio.gather(agent.run(), user.run(), watch(stub, run_id, 20))
    assert events[-1].status == bridge_pb2.RUN_STATUS_COMPLETED
    with RecordingReader(bridge.db_path) as reader:
        (s,) = reader.sessions(run_id)
    assert s.stop_reason == "clock_stalled"
    assert s.stop_detail.startswith(
        "the user bot answered no step of the virtual clock for 1 s of wall time (step 1, at "
        "0.667 s of session time)"
    )
    assert s.ended_ns - s.started_ns == 667 * MS  # the clock stood at the greeting's end
