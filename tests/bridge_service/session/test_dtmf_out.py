"""The bridge carrying a caller's keys to a gRPC agent as in-band tones (lock-step bots)."""

from __future__ import annotations

import asyncio
import time

import numpy as np

from tests.bridge_service.conftest import scenario, start_run, watch
from tests.bridge_service.lockstep_bots import StepBot
from vae import dtmf
from vae.bridge.v1 import bridge_pb2, bridge_pb2_grpc
from vae.bridge_service.server import BridgeServer
from vae.common.v1 import common_pb2
from vae.recordings.models import Channel, EventKind, Side
from vae.recordings.read.reader import RecordingReader

USER, AGENT = common_pb2.ROLE_USER, common_pb2.ROLE_AGENT
VIRTUAL = common_pb2.CLOCK_KIND_VIRTUAL


def _press(digits: str, tone_ms: int = 0, gap_ms: int = 0) -> bridge_pb2.BotMessage:
    keys = common_pb2.Dtmf(digits=digits, tone_ms=tone_ms, gap_ms=gap_ms)
    return bridge_pb2.BotMessage(
        event=common_pb2.BotEvent(bot_unix_nanos=time.time_ns(), dtmf=keys)
    )


async def _call(
    bridge: BridgeServer,
    stub: bridge_pb2_grpc.BridgeServiceStub,
    presses: dict[int, bridge_pb2.BotMessage],
    user_side: dict[str, object] | None = None,
) -> tuple[list[dict[str, object]], dict[str, object], object, object]:
    doc = scenario(user=user_side or {"persona": {"name": "Ann"}})
    run_id = await start_run(stub, [doc], clock=VIRTUAL)
    user = StepBot(bridge.address, USER, run_id, end_at=250, extra=presses)
    agent = StepBot(bridge.address, AGENT, run_id, speak_steps=range(0, 30))
    await asyncio.gather(user.run(), agent.run(), watch(stub, run_id, 60))
    with RecordingReader(bridge.db_path) as reader:
        (s,) = reader.sessions(run_id)
        events = reader.events(s.session_id)
        to_agent = reader.read_channel(s.session_id, Channel.TO_AGENT)
        said = reader.read_channel(s.session_id, Channel.USER)
    keys = [e.payload for e in events if e.kind is EventKind.DTMF and e.side is Side.USER]
    bad = [e.payload for e in events if e.kind is EventKind.MALFORMED_EVENT]
    return keys, {"malformed": bad}, to_agent, said


async def test_keys_become_standard_tones_in_to_agent_only(
    bridge: BridgeServer, stub: bridge_pb2_grpc.BridgeServiceStub
) -> None:
    keys, _, to_agent, said = await _call(
        bridge, stub, {40: _press("159*"), 120: _press("0D", 60, 60)}
    )
    assert [(k["digits"], k["tone_ms"], k["gap_ms"]) for k in keys] == [
        ("159*", 100, 100),
        ("0D", 60, 60),
    ]
    assert all(k["carried_as"] == "in_band_tones" for k in keys)
    assert dtmf.detect(to_agent.samples, to_agent.sample_rate) == "159*0D"
    assert not said.samples.any()  # the caller's own channel: what its bot sent (silence)
    # The tones start right after the press's step: within one step and the jitter buffer.
    first = int(np.flatnonzero(np.abs(to_agent.samples) > 1000)[0])
    assert abs(first - 41 * 256) <= 256 + 80 * 16


async def test_keys_cross_the_phone_line_too(
    bridge: BridgeServer, stub: bridge_pb2_grpc.BridgeServiceStub
) -> None:
    line = {"line": {"codec": "mulaw8k", "gain_db": -6}}
    keys, _, to_agent, _ = await _call(bridge, stub, {40: _press("42#")}, line)
    assert [k["digits"] for k in keys] == ["42#"]
    assert dtmf.detect(to_agent.samples, to_agent.sample_rate) == "42#"
    peak = np.abs(to_agent.samples).max()
    assert peak < 0.6 * 32767  # 6 dB down from the tones' own peak (-10 and -8 dBFS)


async def test_bad_keys_are_a_malformed_event_and_nothing_is_carried(
    bridge: BridgeServer, stub: bridge_pb2_grpc.BridgeServiceStub
) -> None:
    keys, found, to_agent, _ = await _call(
        bridge, stub, {40: _press("12x"), 60: _press(""), 80: _press("1", 5, 100)}
    )
    assert keys == []
    problems = [str(p["problem"]) for p in found["malformed"]]  # type: ignore[union-attr]
    assert any("dtmf.digits has 'x'" in p for p in problems), problems
    assert any("dtmf.digits must not be empty" in p for p in problems), problems
    assert any("dtmf.tone_ms: 5 ms is outside 20..2000" in p for p in problems), problems
    assert not to_agent.samples.any()
