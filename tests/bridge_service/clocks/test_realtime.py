"""The bridge stays real-time: no session stalls another; frames as each bot asked.

Isolation: while one bot sends a large final state and another floods audio
far faster than real time, a third session's *recorded* clock statistics
(tick lateness, arrival gaps) stay within two frames and none of its audio is
dropped. Framing: every allowed frame length (and several frames per
message) is delivered as asked, carrying exactly the audio the 16 ms path
carries, sample for sample.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import grpc
import numpy as np
import pytest

from tests.bridge_service.bots import TestBot, fmt, never_zero
from tests.bridge_service.conftest import scenario, start_run, watch
from vae.bridge.v1 import bridge_pb2, bridge_pb2_grpc
from vae.bridge_service.audio.framing import ALLOWED_FRAME_MS
from vae.bridge_service.server import BridgeServer
from vae.common.v1 import common_pb2
from vae.recordings.models import EventKind
from vae.recordings.read.reader import RecordingReader

# Real-time delivery beside a load of its own: not beside other tests (see the Makefile).
pytestmark = pytest.mark.serial

USER, AGENT = common_pb2.ROLE_USER, common_pb2.ROLE_AGENT
RATE = 16000
FRAME_MS = 16
ROOT = Path(__file__).resolve().parents[3]


def _signal(seconds: float, seed: int = 1) -> np.ndarray:
    return never_zero(seconds, RATE, seed)


# ---------------------------------------------------------------- isolation
async def test_a_large_final_state_and_a_flooder_do_not_stall_another_session(
    bridge: BridgeServer, stub: bridge_pb2_grpc.BridgeServiceStub
) -> None:
    options = {"max_auto_retries": 0, "inactivity_timeout_s": 30}
    calm = await start_run(stub, [scenario("calm")], **options)
    flood = await start_run(stub, [scenario("flood")], **options)
    heavy = await start_run(stub, [scenario("heavy")], **options)
    # The disruptive bots run in a process of their own, as real bots would.
    others = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "tests.bridge_service.disruptive_bots",
        bridge.address, heavy, flood, "16",
        cwd=ROOT, stdout=asyncio.subprocess.PIPE,
    )  # fmt: skip
    assert others.stdout is not None
    assert await asyncio.wait_for(others.stdout.readline(), 60) == b"ready\n"

    async def calm_user(bot: TestBot) -> None:
        await bot.speak(_signal(4.0), chunk_ms=20)

    async def calm_agent(bot: TestBot) -> None:
        await bot.speak(_signal(3.5, seed=3), chunk_ms=20)
        await bot.end(common_pb2.END_KIND_AGENT_END_TOOL, "done")

    bots = [
        TestBot(bridge.address, USER, calm_user, run_filter=calm),
        TestBot(bridge.address, AGENT, calm_agent, run_filter=calm),
    ]
    got = await asyncio.wait_for(asyncio.gather(*(b.run() for b in bots)), 60)
    statuses, _ = await asyncio.wait_for(others.communicate(), 60)
    for run_id in (calm, flood, heavy):
        await watch(stub, run_id)
    assert all(g.status == grpc.StatusCode.OK for g in got)
    assert json.loads(statuses) == ["StatusCode.OK"] * 4

    with RecordingReader(bridge.db_path) as reader:
        (session,) = reader.sessions(calm)
        (flooded,) = reader.sessions(flood)
        (heavy_session,) = reader.sessions(heavy)
        assert session.ended_ns is not None and flooded.ended_ns is not None
        # The disruption happened while the calm session ran.
        assert flooded.started_ns < session.ended_ns and flooded.ended_ns > session.started_ns
        (final,) = reader.final_states(heavy_session.session_id).values()
        assert session.started_ns < final.received_ns < session.ended_ns
        assert len(final.state["rows"]) > 100_000
        assert reader.events(flooded.session_id, [EventKind.AUDIO_DROPPED]), "flood is dropped"

        assert session.stop_reason == "end_tool"
        clock = reader.session_clock(session.session_id)
        assert clock is not None
        two_frames = 2 * FRAME_MS
        assert clock["tick_late"]["ticks"] > 300
        assert clock["tick_late"]["max_ms"] <= two_frames, clock
        assert clock["skipped_ticks"] == 0
        for side, gap in clock["arrival_gap_max_ms"].items():
            assert gap <= two_frames, (side, clock)
        assert not reader.events(session.session_id, [EventKind.AUDIO_DROPPED])
        assert clock["dropped_samples"] == {"to_agent": 0, "to_user": 0}


# ---------------------------------------------------------------- framing
async def test_each_frame_length_is_delivered_as_asked_with_the_same_audio(
    bridge: BridgeServer, stub: bridge_pb2_grpc.BridgeServiceStub
) -> None:
    asks = [(ms, 1) for ms in ALLOWED_FRAME_MS] + [(20, 3), (0, 0)]
    sent = _signal(0.7)
    docs = [scenario(f"f{i}") for i in range(len(asks))]
    run_id = await start_run(
        stub, docs, concurrency=len(asks), max_auto_retries=0, inactivity_timeout_s=30
    )

    async def user(bot: TestBot) -> None:
        await bot.speak(sent)
        await bot.end(common_pb2.END_KIND_USER_HANG_UP, "bye")

    def agent(frame_ms: int, per_message: int) -> TestBot:
        join = bridge_pb2.BotMessage(
            join=bridge_pb2.Join(
                role=AGENT,
                bot=common_pb2.BotInfo(name=f"agent{frame_ms}x{per_message}", version="1"),
                send_format=fmt(RATE),
                receive_format=fmt(RATE),
                run_filter=run_id,
                frame_ms=frame_ms,
                frames_per_message=per_message,
            )
        )
        return TestBot(bridge.address, AGENT, None, join=join)

    agents = [agent(ms, k) for ms, k in asks]
    users = [TestBot(bridge.address, USER, user, run_filter=run_id) for _ in asks]
    got = await asyncio.wait_for(asyncio.gather(*(b.run() for b in agents + users)), 60)
    heard: dict[tuple[int, int], np.ndarray] = {}
    for (ms, k), received in zip(asks, got[: len(agents)], strict=True):
        want_ms, want_k = ms or FRAME_MS, max(1, k)
        assert received.joined.frame_ms == want_ms
        assert received.start.frame_ms == want_ms
        assert received.start.frames_per_message == want_k
        samples = RATE * want_ms // 1000 * want_k
        assert received.frames and {len(f.pcm) // 2 for f in received.frames} == {samples}
        assert [f.sequence for f in received.frames] == list(range(len(received.frames)))
        assert [f.sample_offset for f in received.frames[:3]] == [0, samples, 2 * samples]
        pcm = received.pcm()
        heard[(ms, k)] = pcm[pcm != 0]
    reference = heard[(16, 1)]
    assert np.array_equal(reference, sent), "the 16 ms path carries the audio bit-exact"
    for ask, audio in heard.items():
        assert np.array_equal(audio, reference), f"frame_ms, frames_per_message = {ask}"
    with RecordingReader(bridge.db_path) as reader:
        framings = {
            json.dumps(s.audio["frames_to"]["agent"], sort_keys=True)
            for s in reader.sessions(run_id)
        }
    assert len(framings) == len({(ms or FRAME_MS, max(1, k)) for ms, k in asks})


@pytest.mark.parametrize(
    ("frame_ms", "per_message", "field", "allowed"),
    [
        (25, 1, "join.frame_ms", "10, 16, 20, 32, 40, 60"),
        (20, 11, "join.frames_per_message", "1..10"),
    ],
)
async def test_an_unsupported_framing_is_refused_naming_the_allowed_values(
    bridge: BridgeServer, frame_ms: int, per_message: int, field: str, allowed: str
) -> None:
    join = bridge_pb2.BotMessage(
        join=bridge_pb2.Join(
            role=AGENT,
            send_format=fmt(RATE),
            receive_format=fmt(RATE),
            frame_ms=frame_ms,
            frames_per_message=per_message,
        )
    )
    got = await TestBot(bridge.address, AGENT, None, join=join).run()
    assert got.status == grpc.StatusCode.INVALID_ARGUMENT
    assert field in got.details and allowed in got.details
    assert got.joined is None
