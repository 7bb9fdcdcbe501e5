"""The virtual clock for audio: lock-step, session time, limits, a bot that stops answering.

Real bridge, real gRPC bots (tests/bridge_service/lockstep_bots.py) that follow
the lock-step protocol exactly as docs/contract.md specifies it.
"""

from __future__ import annotations

import asyncio
import time

import grpc
import numpy as np
import pytest

from tests.bridge_service.bots import TestBot, tone
from tests.bridge_service.conftest import scenario, start_run, watch
from tests.bridge_service.lockstep_bots import StepBot, waiting
from vae.bridge.v1 import bridge_pb2, bridge_pb2_grpc
from vae.bridge_service.server import BridgeServer
from vae.common.v1 import common_pb2
from vae.recordings.models import Channel, EventKind
from vae.recordings.read.reader import RecordingReader

USER, AGENT = common_pb2.ROLE_USER, common_pb2.ROLE_AGENT
VIRTUAL = common_pb2.CLOCK_KIND_VIRTUAL
NS = 1_000_000_000


async def test_a_30_s_call_ends_at_30_s_of_session_time_in_well_under_30_s(
    bridge: BridgeServer, stub: bridge_pb2_grpc.BridgeServiceStub
) -> None:
    """Max duration on the session clock: exactly 30 s, recorded with a real call's shape."""
    run_id = await start_run(stub, [scenario(max_duration=30)], clock=VIRTUAL)
    # The agent greets (so the first speaker is not silent); then nobody speaks for
    # 28 s: only the maximum duration (30 s < the 120 s inactivity timeout) ends it.
    user = StepBot(bridge.address, USER, run_id, log_at=100)
    agent = StepBot(bridge.address, AGENT, run_id, speak_steps=range(0, 60))
    started = time.monotonic()
    _, _, events = await asyncio.gather(user.run(), agent.run(), watch(stub, run_id, 60))
    wall = time.monotonic() - started
    assert events[-1].status == bridge_pb2.RUN_STATUS_COMPLETED
    assert wall < 15, f"{wall:.1f} s of wall time for 30 s of session time"
    with RecordingReader(bridge.db_path) as reader:
        (s,) = reader.sessions(run_id)
        assert s.stop_reason == "max_duration"
        assert "30 s of session time (virtual clock)" in s.stop_detail
        assert s.ended_ns - s.started_ns == 30 * NS  # exactly, on the step at 30 s
        assert reader.session_mode(s.session_id).clock == "virtual"
        assert (s.agent_turns, s.user_turns) == (1, 0)
        step = user.start.frame_ms * user.start.frames_per_message
        assert user.start.clock == VIRTUAL and step == 16  # the bots asked for 1 frame a message
        # Every channel is 30 s long at its rate: the shape of a real-time recording.
        for channel in Channel:
            audio = reader.read_channel(s.session_id, channel)
            assert len(audio.samples) == 30 * 16000, channel
        # The agent's tone reached the user bit-exact after the 80 ms jitter buffer,
        # placed on the sample clock exactly.
        heard = reader.read_channel(s.session_id, Channel.TO_USER).samples
        said = reader.read_channel(s.session_id, Channel.AGENT).samples
        spoken = 60 * 256
        assert np.abs(said[:spoken]).max() > 3000 and not said[spoken:].any()
        assert np.array_equal(heard[80 * 16 : 80 * 16 + spoken], said[:spoken])
        assert not heard[: 80 * 16].any() and not heard[80 * 16 + spoken :].any()
        # An event sent while answering step 100 is stamped with step 100's session time.
        (log,) = [
            e
            for e in reader.events(s.session_id)
            if e.kind is EventKind.LOG and e.payload.get("message") == "step 100"
        ]
        assert log.bridge_ns - s.started_ns == 100 * step * 1_000_000
        clock = reader.session_clock(s.session_id)
        assert clock is not None and clock["clock"] == "virtual"
        assert clock["steps"] == 30_000 // step and clock["speed"] > 2  # steps played


async def test_a_bot_that_stops_answering_ends_its_session_and_the_run_goes_on(
    bridge: BridgeServer, stub: bridge_pb2_grpc.BridgeServiceStub
) -> None:
    docs = [scenario("a_stalls"), scenario("b_fine")]
    run_id = await start_run(
        stub, docs, clock=VIRTUAL, concurrency=1, inactivity_timeout_s=1.0, max_auto_retries=0
    )
    stalled = StepBot(
        bridge.address, USER, run_id, stall_after=20, speak_steps=range(10), name="staller"
    )
    bots = [
        stalled,
        StepBot(bridge.address, USER, run_id, speak_steps=range(10), name="fine"),
        StepBot(bridge.address, AGENT, run_id, speak_steps=range(5), end_at=40),
        StepBot(bridge.address, AGENT, run_id, speak_steps=range(5), end_at=40),
    ]
    started = time.monotonic()
    *_, events = await asyncio.gather(*(b.run() for b in bots), watch(stub, run_id, 30))
    assert time.monotonic() - started < 10
    assert events[-1].status == bridge_pb2.RUN_STATUS_COMPLETED
    with RecordingReader(bridge.db_path) as reader:
        by_user = {str(s.user_bot["name"]): s for s in reader.sessions(run_id)}
    a, b = by_user["staller"], by_user["fine"]
    assert a.stop_reason == "clock_stalled", a.stop_detail
    assert "the user bot answered no step of the virtual clock for 1 s of wall time" in (
        a.stop_detail
    )
    assert "(step 20, at 0.320 s of session time)" in a.stop_detail
    # The clock stood still while it waited: the session lasted 20 steps of 16 ms.
    assert a.ended_ns - a.started_ns == 20 * 16 * 1_000_000
    assert b.stop_reason == "end_tool" and b.clean_exit
    assert stalled.ending.reason == bridge_pb2.STOP_REASON_CLOCK_STALLED


async def test_answers_out_of_step_are_refused(
    bridge: BridgeServer, stub: bridge_pb2_grpc.BridgeServiceStub
) -> None:
    """A ClockAck for a step not being played ends the session bot_error, naming the field."""
    run_id = await start_run(stub, [scenario()], clock=VIRTUAL, max_auto_retries=0)
    bad = bridge_pb2.BotMessage(clock_ack=bridge_pb2.ClockAck(step=7))
    user = StepBot(bridge.address, USER, run_id, extra={3: bad})
    agent = StepBot(bridge.address, AGENT, run_id)
    await asyncio.gather(user.run(), agent.run(), watch(stub, run_id))
    assert user.status == grpc.StatusCode.INVALID_ARGUMENT
    assert user.details.startswith("clock_ack.step: step 7 is not the step being played (4)")
    with RecordingReader(bridge.db_path) as reader:
        (s,) = reader.sessions(run_id)
    assert s.stop_reason == "bot_error" and "clock_ack.step" in s.stop_detail


async def test_a_clock_ack_on_the_real_clock_is_refused(
    bridge: BridgeServer, stub: bridge_pb2_grpc.BridgeServiceStub
) -> None:
    run_id = await start_run(stub, [scenario()], max_auto_retries=0)

    async def acks(bot: TestBot) -> None:
        await bot.send(bridge_pb2.BotMessage(clock_ack=bridge_pb2.ClockAck(step=0)))

    user = TestBot(bridge.address, USER, acks, run_filter=run_id)
    agent = TestBot(bridge.address, AGENT, lambda b: b.speak(tone(0.2, 16000)), run_filter=run_id)
    got, _, _ = await asyncio.gather(user.run(), agent.run(), watch(stub, run_id))
    assert got.status == grpc.StatusCode.INVALID_ARGUMENT
    assert "only valid on the virtual clock (SessionStart.clock is real)" in got.details


async def test_start_run_refuses_a_virtual_run_its_waiting_bots_cannot_follow(
    bridge: BridgeServer, stub: bridge_pb2_grpc.BridgeServiceStub
) -> None:
    """Bots waiting at StartRun that did not declare it: INVALID_ARGUMENT naming the field."""
    old = StepBot(bridge.address, AGENT, supports_virtual_clock=False, name="old-agent")
    task = asyncio.create_task(old.run())
    try:
        await waiting(bridge, 1)
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await start_run(stub, [scenario()], clock=VIRTUAL)
        assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        details = err.value.details() or ""
        assert details.startswith("options.clock: the agent bots waiting (old-agent 1)")
        assert "did not declare Join.supports_virtual_clock" in details
        with RecordingReader(bridge.db_path) as reader:
            assert reader.list_runs() == [], "nothing was recorded"
        # The same run on the real clock is served by that bot.
        assert await start_run(stub, [scenario()], inactivity_timeout_s=0.5, max_auto_retries=0)
    finally:
        task.cancel()


async def test_bots_joining_later_are_checked_at_pairing(
    bridge: BridgeServer, stub: bridge_pb2_grpc.BridgeServiceStub
) -> None:
    """Nobody waits at StartRun; then only a bot without the support comes: bot_unsupported."""
    run_id = await start_run(
        stub, [scenario()], clock=VIRTUAL, pairing_timeout_s=1.0, max_auto_retries=0
    )
    user = StepBot(bridge.address, USER, run_id)
    old = StepBot(bridge.address, AGENT, run_id, supports_virtual_clock=False, name="old-agent")
    tasks = [asyncio.create_task(b.run()) for b in (user, old)]
    try:
        events = await watch(stub, run_id, 20)
    finally:
        for t in tasks:
            t.cancel()
    assert events[-1].status == bridge_pb2.RUN_STATUS_FAILED
    with RecordingReader(bridge.db_path) as reader:
        (s,) = reader.sessions(run_id)
    assert s.stop_reason == "bot_unsupported"
    assert s.stop_detail == (
        "no agent bot that can follow this run joined within 1 s (the agent bots waiting "
        "(old-agent 1) did not declare Join.supports_virtual_clock)"
    )
    assert old.start is None, "the bot was never given a session it cannot follow"
