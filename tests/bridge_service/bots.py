"""Small test bots written against the generated stubs (a bot is a gRPC client).

A :class:`TestBot` joins, waits for SessionStart, runs its ``behaviour``
(speak PCM in real time, send events, end the call, or misbehave), answers
SessionEnding with its final state, and keeps everything the bridge sent:
frames, notices, peer events, state syncs, the ending, the final status.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import grpc
import numpy as np

from vae.bridge.v1 import bridge_pb2, bridge_pb2_grpc
from vae.common.v1 import common_pb2

Behaviour = Callable[["TestBot"], Awaitable[None]]


def fmt(rate: int, encoding: int = common_pb2.AUDIO_ENCODING_PCM16LE, channels: int = 1) -> Any:
    return common_pb2.AudioFormat(encoding=encoding, sample_rate_hz=rate, channels=channels)  # type: ignore[arg-type]


@dataclass
class Received:
    joined: Any = None
    start: Any = None
    frames: list[Any] = field(default_factory=list)
    notices: list[Any] = field(default_factory=list)
    peer_events: list[Any] = field(default_factory=list)
    state_syncs: list[Any] = field(default_factory=list)
    ending: Any = None
    ended: Any = None
    wait_timeout: Any = None
    #: A Redirect to a worker (bridges started with --workers N).
    redirect: Any = None
    status: grpc.StatusCode | None = None
    details: str = ""

    def pcm(self) -> np.ndarray:
        return np.frombuffer(b"".join(f.pcm for f in self.frames), dtype="<i2")


class TestBot:
    __test__ = False  # not a pytest class

    def __init__(
        self,
        address: str,
        role: int,
        behaviour: Behaviour | None = None,
        *,
        name: str = "testbot",
        send_rate: int = 16000,
        receive_rate: int = 16000,
        run_filter: str = "",
        final_state: Any = None,
        context_history: Any = None,
        final_chunk: int = 7,
        answer_ending: bool = True,
        metadata: list[tuple[str, str]] | None = None,
        join: Any = None,
        stall_s: float = 0.0,
        channel_options: list[tuple[str, Any]] | None = None,
    ) -> None:
        self.address = address
        self.role = role
        self.behaviour = behaviour
        self.name = name
        self.send_rate = send_rate
        self.receive_rate = receive_rate
        self.run_filter = run_filter
        self.final_state = final_state
        self.context_history = context_history
        self.final_chunk = final_chunk
        self.answer_ending = answer_ending
        self.metadata = metadata
        self.join_message = join
        self.stall_s = stall_s
        self.channel_options = channel_options
        self.got = Received()
        self.started = asyncio.Event()
        self.ending = asyncio.Event()
        self._out: asyncio.Queue[Any] = asyncio.Queue()
        self._seq = 0
        self._offset = 0
        self.sent_pcm = bytearray()

    # ------------------------------------------------------------ sending
    async def send(self, msg: Any) -> None:
        await self._out.put(msg)

    async def speak(self, samples: np.ndarray, chunk_ms: int = 20, realtime: bool = True) -> None:
        """Send PCM in chunks, paced in real time like a real bot's TTS."""
        pcm = samples.astype("<i2").tobytes()
        n = self.send_rate * chunk_ms // 1000 * 2
        t0 = time.monotonic()
        for i, start in enumerate(range(0, len(pcm), n)):
            if self.ending.is_set():
                return
            if realtime:
                await asyncio.sleep(max(0.0, t0 + i * chunk_ms / 1000 - time.monotonic()))
            await self.audio(pcm[start : start + n])

    async def audio(self, pcm: bytes, sequence: int | None = None) -> None:
        seq = self._seq if sequence is None else sequence
        await self.send(
            bridge_pb2.BotMessage(
                audio=common_pb2.AudioChunk(
                    sequence=seq,
                    sample_offset=self._offset,
                    pcm=pcm,
                    sent_unix_nanos=time.time_ns(),
                )
            )
        )
        self.sent_pcm += pcm
        self._seq = seq + 1
        self._offset += len(pcm) // 2

    async def event(self, **kwargs: Any) -> None:
        ev = common_pb2.BotEvent(bot_unix_nanos=time.time_ns(), **kwargs)
        await self.send(bridge_pb2.BotMessage(event=ev))

    async def end(self, kind: int, reason: str = "") -> None:
        await self.event(end_conversation=common_pb2.EndConversation(kind=kind, reason=reason))  # type: ignore[arg-type]

    async def hang_up_stream(self) -> None:
        await self._out.put(None)

    # ------------------------------------------------------------ the stream
    async def _requests(self) -> AsyncIterator[Any]:
        if self.join_message is not None:
            yield self.join_message
        else:
            yield bridge_pb2.BotMessage(
                join=bridge_pb2.Join(
                    role=self.role,  # type: ignore[arg-type]
                    bot=common_pb2.BotInfo(name=self.name, version="1.0", labels={"test": "yes"}),
                    send_format=fmt(self.send_rate),
                    receive_format=fmt(self.receive_rate),
                    run_filter=self.run_filter,
                )
            )
        while True:
            msg = await self._out.get()
            if msg is None:
                return
            yield msg

    async def _final_state(self) -> None:
        parts: list[tuple[str, bytes]] = []
        for name, value in (("state", self.final_state), ("context", self.context_history)):
            if value is not None:
                parts.append((name, json.dumps(value).encode()))
        if not parts:
            await self.send(bridge_pb2.BotMessage(final_state=bridge_pb2.FinalState(done=True)))
            return
        for name, data in parts:
            for off in range(0, len(data), self.final_chunk):
                piece = common_pb2.JsonChunk(
                    offset=off,
                    data=data[off : off + self.final_chunk],
                    last=off + self.final_chunk >= len(data),
                )
                await self.send(
                    bridge_pb2.BotMessage(final_state=bridge_pb2.FinalState(**{name: piece}))
                )
        await self.send(bridge_pb2.BotMessage(final_state=bridge_pb2.FinalState(done=True)))

    async def run(self) -> Received:
        channel = grpc.aio.insecure_channel(self.address, options=self.channel_options)
        stub = bridge_pb2_grpc.BridgeServiceStub(channel)
        call = stub.Converse(self._requests(), metadata=self.metadata)
        task: asyncio.Task[None] | None = None
        try:
            async for msg in call:
                which = msg.WhichOneof("message")
                if which == "joined":
                    self.got.joined = msg.joined
                elif which == "session_start":
                    self.got.start = msg.session_start
                    self.started.set()
                    if self.behaviour is not None:
                        task = asyncio.create_task(self.behaviour(self))
                elif which == "audio":
                    self.got.frames.append(msg.audio)
                    if self.stall_s:
                        # A bot that stops reading for a while (its own behaviour).
                        stall, self.stall_s = self.stall_s, 0.0
                        await asyncio.sleep(stall)
                elif which == "notice":
                    self.got.notices.append(msg.notice)
                elif which == "peer_event":
                    self.got.peer_events.append(msg.peer_event)
                elif which == "state_sync":
                    self.got.state_syncs.append(msg.state_sync)
                elif which == "session_ending":
                    self.got.ending = msg.session_ending
                    self.ending.set()
                    if self.answer_ending:
                        await self._final_state()
                elif which == "session_ended":
                    self.got.ended = msg.session_ended
                elif which == "wait_timeout":
                    self.got.wait_timeout = msg.wait_timeout
                elif which == "redirect":
                    self.got.redirect = msg.redirect
                    await self._out.put(None)  # half-close, as the contract asks
            self.got.status = grpc.StatusCode.OK
        except grpc.aio.AioRpcError as exc:
            self.got.status = exc.code()
            self.got.details = exc.details() or ""
        finally:
            self.ending.set()
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
            await self._out.put(None)
            await channel.close()
        return self.got


def tone(seconds: float, rate: int, freq: float = 440.0, amp: float = 0.3) -> np.ndarray:
    t = np.arange(int(seconds * rate)) / rate
    return (np.sin(2 * np.pi * freq * t) * amp * 32767).astype(np.int16)


def never_zero(seconds: float, rate: int = 16000, seed: int = 1) -> np.ndarray:
    """Audible PCM with no zero sample: zeros in what a bot hears are the bridge's silence."""
    n = int(seconds * rate)
    values = (np.arange(n, dtype=np.int64) * 7919 + seed * 104729) % 20000 + 500
    return values.astype(np.int16)
