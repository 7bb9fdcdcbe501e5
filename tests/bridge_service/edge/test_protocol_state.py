"""The Converse state machine and the bridge's limits, from a client's side.

While waiting, a second Join, audio or an undecodable message ends the stream
with INVALID_ARGUMENT naming the state and the message (never OK with no
message); in a session, undecodable bytes end the session with ``bot_error``
and the peer is told. Each limit refusal is RESOURCE_EXHAUSTED naming the limit.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import grpc
import pytest

from tests.bridge_service.bots import TestBot, fmt, tone
from tests.bridge_service.conftest import run_pair, scenario, start_run, watch
from vae.bridge.v1 import bridge_pb2, bridge_pb2_grpc
from vae.bridge_service.server import BridgeServer
from vae.common.v1 import common_pb2
from vae.recordings.read.reader import RecordingReader

USER, AGENT = common_pb2.ROLE_USER, common_pb2.ROLE_AGENT
CONVERSE = "/vae.bridge.v1.BridgeService/Converse"


def join_bytes(role: int = USER, run_filter: str = "") -> bytes:
    return bridge_pb2.BotMessage(
        join=bridge_pb2.Join(
            role=role,  # type: ignore[arg-type]
            send_format=fmt(16000),
            receive_format=fmt(16000),
            run_filter=run_filter,
        )
    ).SerializeToString()


def bad_utf8() -> bytes:
    """A BotMessage whose Log.message holds invalid UTF-8 (framing intact)."""
    good = bridge_pb2.BotMessage(
        event=common_pb2.BotEvent(log=common_pb2.Log(message="Z"))
    ).SerializeToString()
    return good.replace(b"Z", b"\xff")


class RawBot:
    """A Converse client sending raw bytes (identity serializer), as a hostile client can."""

    def __init__(self, address: str) -> None:
        self.channel = grpc.aio.insecure_channel(address)
        self.queue: asyncio.Queue[bytes | None] = asyncio.Queue()
        self.received: list[bridge_pb2.BridgeMessage] = []
        self.status: grpc.StatusCode | None = None
        self.details = ""
        self.started = asyncio.Event()
        self.joined = asyncio.Event()

    async def _requests(self) -> AsyncIterator[bytes]:
        while (item := await self.queue.get()) is not None:
            yield item

    async def run(self) -> None:
        call = self.channel.stream_stream(
            CONVERSE,
            request_serializer=lambda b: b,
            response_deserializer=bridge_pb2.BridgeMessage.FromString,
        )(self._requests())
        try:
            async for msg in call:
                self.received.append(msg)
                which = msg.WhichOneof("message")
                if which == "joined":
                    self.joined.set()
                elif which == "session_start":
                    self.started.set()
            self.status = grpc.StatusCode.OK
        except grpc.aio.AioRpcError as exc:
            self.status, self.details = exc.code(), exc.details() or ""
        finally:
            await self.channel.close()


async def _raw_waiting(bridge: BridgeServer, then: bytes) -> RawBot:
    bot = RawBot(bridge.address)
    task = asyncio.create_task(bot.run())
    await bot.queue.put(join_bytes())
    await asyncio.wait_for(bot.joined.wait(), 5)
    await bot.queue.put(then)
    await asyncio.wait_for(task, 10)
    return bot


async def test_second_join_while_waiting(bridge: BridgeServer) -> None:
    bot = await _raw_waiting(bridge, join_bytes())
    assert bot.status == grpc.StatusCode.INVALID_ARGUMENT
    assert "Join must be the first message" in bot.details and "state waiting" in bot.details
    assert bridge.pool.waiting() == 0


async def test_audio_before_session_start(bridge: BridgeServer) -> None:
    audio = bridge_pb2.BotMessage(audio=common_pb2.AudioChunk(pcm=bytes(640)))
    bot = await _raw_waiting(bridge, audio.SerializeToString())
    assert bot.status == grpc.StatusCode.INVALID_ARGUMENT
    assert "audio is not valid in state waiting" in bot.details
    assert bridge.pool.waiting() == 0


async def test_undecodable_bytes_while_waiting_and_first(bridge: BridgeServer) -> None:
    bot = await _raw_waiting(bridge, b"\xff\xff\xff")
    assert bot.status == grpc.StatusCode.INVALID_ARGUMENT
    assert "could not be decoded as a BotMessage" in bot.details
    first = RawBot(bridge.address)
    task = asyncio.create_task(first.run())
    await first.queue.put(bad_utf8())
    await asyncio.wait_for(task, 10)
    assert first.status == grpc.StatusCode.INVALID_ARGUMENT
    assert "could not be decoded" in first.details


async def test_undecodable_bytes_in_a_session_end_it_with_bot_error(
    bridge: BridgeServer, stub: bridge_pb2_grpc.BridgeServiceStub
) -> None:
    run_id = await start_run(stub, [scenario("raw")], max_auto_retries=0)
    raw = RawBot(bridge.address)
    raw_task = asyncio.create_task(raw.run())
    await raw.queue.put(join_bytes(USER, run_id))

    async def agent(bot: TestBot) -> None:
        await bot.speak(tone(3.0, 16000, 500))

    peer = TestBot(bridge.address, AGENT, agent, run_filter=run_id)
    peer_task = asyncio.create_task(peer.run())
    await asyncio.wait_for(raw.started.wait(), 10)
    chunk = common_pb2.AudioChunk(sequence=0, sample_offset=0, pcm=tone(0.1, 16000).tobytes())
    await raw.queue.put(bridge_pb2.BotMessage(audio=chunk).SerializeToString())
    await raw.queue.put(bad_utf8())
    await asyncio.wait_for(asyncio.gather(raw_task, peer_task), 20)
    await watch(stub, run_id)
    assert raw.status == grpc.StatusCode.INVALID_ARGUMENT, raw.details
    assert "could not be decoded as a BotMessage" in raw.details
    assert peer.got.ending.reason == bridge_pb2.STOP_REASON_BOT_ERROR
    with RecordingReader(bridge.db_path) as reader:
        (s,) = reader.sessions(run_id)
        assert s.stop_reason == "bot_error" and not s.clean_exit
        errors = [e.payload for e in reader.events(s.session_id) if e.kind == "session_error"]
        assert any("could not be decoded" in str(p) for p in errors), errors


async def test_waiting_streams_are_capped(make_bridge: Any) -> None:
    bridge = await make_bridge(settings={"max_waiting_streams": 2})
    waiting = [RawBot(bridge.address) for _ in range(2)]
    tasks = [asyncio.create_task(b.run()) for b in waiting]
    for b in waiting:
        await b.queue.put(join_bytes())
        await asyncio.wait_for(b.joined.wait(), 5)
    third = RawBot(bridge.address)
    third_task = asyncio.create_task(third.run())
    await third.queue.put(join_bytes())
    await asyncio.wait_for(third_task, 5)
    assert third.status == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert "max_waiting_streams" in third.details
    for b in waiting:
        await b.queue.put(None)
    await asyncio.wait_for(asyncio.gather(*tasks), 5)


async def test_max_receive_message_size(make_bridge: Any) -> None:
    bridge = await make_bridge(settings={"max_receive_message_bytes": 64 * 1024})
    async with grpc.aio.insecure_channel(bridge.address) as channel:
        stub = bridge_pb2_grpc.BridgeServiceStub(channel)
        big = json.dumps([scenario("big", description="x" * 100_000)])
        try:
            await stub.StartRun(
                bridge_pb2.StartRunRequest(sources=[bridge_pb2.ScenarioSource(inline=big)])
            )
        except grpc.aio.AioRpcError as exc:
            assert exc.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        else:
            raise AssertionError("a 100 KB request passed a 64 KB limit")


async def good_user(bot: TestBot) -> None:
    await bot.speak(tone(0.4, 16000, 300))


async def good_agent(bot: TestBot) -> None:
    await bot.speak(tone(0.4, 16000, 500))
    await bot.end(common_pb2.END_KIND_AGENT_END_TOOL)


async def test_final_state_chunk_over_the_limit_is_refused_and_recorded(make_bridge: Any) -> None:
    bridge = await make_bridge(settings={"max_final_state_chunk_bytes": 1000})
    async with grpc.aio.insecure_channel(bridge.address) as channel:
        stub = bridge_pb2_grpc.BridgeServiceStub(channel)
        state = {"rows": ["x" * 50] * 100}
        _got_u, got_a, _events, run_id = await run_pair(
            bridge,
            stub,
            good_user,
            good_agent,
            agent_kwargs={"final_state": state, "final_chunk": 4000},
            user_kwargs={"final_state": {"ok": True}},
        )
    assert got_a.status == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert "max_final_state_chunk_bytes" in got_a.details
    with RecordingReader(bridge.db_path) as reader:
        (s,) = reader.sessions(run_id)
        assert s.stop_reason == "end_tool"
        finals = reader.final_states(s.session_id)
        assert "agent" not in {str(k) for k in finals}  # nothing cut short is kept
        assert finals and all(str(k) == "user" for k in finals)
        errors = [e.payload for e in reader.events(s.session_id) if e.kind == "session_error"]
        assert any("max_final_state_chunk_bytes" in str(p) for p in errors)


async def test_final_state_that_is_not_an_object_is_not_kept(
    bridge: BridgeServer, stub: bridge_pb2_grpc.BridgeServiceStub
) -> None:
    _u, got_a, _events, run_id = await run_pair(
        bridge, stub, good_user, good_agent, agent_kwargs={"final_state": [1, 2, 3]}
    )
    assert got_a.status == grpc.StatusCode.OK
    with RecordingReader(bridge.db_path) as reader:
        (s,) = reader.sessions(run_id)
        assert not reader.final_states(s.session_id)
        problems = [e.payload for e in reader.events(s.session_id) if e.kind == "malformed_event"]
        assert any("must be a JSON object, got list" in str(p) for p in problems), problems


def test_the_event_limit_holds_in_every_sliding_second() -> None:
    """A burst straddling a second's edge is refused (a fixed window let 2x through)."""
    from vae.bridge_service.connectors.base import BotLimitError
    from vae.bridge_service.edge.protocol_state import ProtocolState, StreamState

    now = [0]
    state = ProtocolState(max_events_per_s=3, clock=lambda: now[0])
    state.state = StreamState.IN_SESSION
    event = bridge_pb2.BotMessage(event=common_pb2.BotEvent())
    for t_ms in (500, 900, 950):
        now[0] = t_ms * 1_000_000
        assert state.check(event)
    now[0] = 1_050 * 1_000_000  # a new fixed second, but 4 events within 550 ms
    with pytest.raises(BotLimitError, match="max_events_per_s"):
        state.check(event)
    now[0] = 1_501 * 1_000_000  # the oldest kept event is now over a second old
    assert state.check(event)
