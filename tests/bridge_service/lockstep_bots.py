"""Small bots that follow the virtual clock or talk in text, written against the stubs.

:class:`StepBot` is the lock-step protocol as docs/contract.md states it, with
nothing else: after each frame ``k`` it answers ``ClockAck(step=k)`` carrying
its own audio for the step (a tone for the steps in ``speak_steps``, silence
otherwise), can send an event or ``EndConversation`` at a given step, and can
stop answering after ``stall_after`` steps (a bot that hangs). In a text
session it answers ``ClockTick``\\ s the same way and sends scripted turns.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import grpc
import numpy as np

from tests.bridge_service.bots import fmt
from tests.helpers import wait_until
from vae.bridge.v1 import bridge_pb2, bridge_pb2_grpc
from vae.bridge_service.server import BridgeServer
from vae.common.v1 import common_pb2


@dataclass
class StepBot:
    address: str
    role: int
    run_filter: str = ""
    name: str = "stepbot"
    rate: int = 16000
    supports_text: bool = True
    supports_virtual_clock: bool = True
    #: Steps (frame sequences) during which it sends a loud tone instead of silence.
    speak_steps: range = range(0)
    #: Stop answering after this many steps (None: never).
    stall_after: int | None = None
    #: Step at which it sends an EndConversation (None: never).
    end_at: int | None = None
    #: Step at which it sends a Log event (to check event times on the session clock).
    log_at: int | None = None
    #: Text sessions: turns to send, by the tick step at which to send each.
    turns: dict[int, str] = field(default_factory=dict)
    #: Text sessions: ask to be woken at this session time (ms) at the first tick.
    wake_at_ms: int = 0
    #: Any other message to send after the answer of this step (bad input tests).
    extra: dict[int, Any] = field(default_factory=dict)
    #: Text on the real clock: the turn it answers the peer's first turn with.
    reply: str = ""
    #: What it received.
    frames: list[Any] = field(default_factory=list)
    ticks: list[Any] = field(default_factory=list)
    texts: list[Any] = field(default_factory=list)
    start: Any = None
    ending: Any = None
    ended: Any = None
    status: grpc.StatusCode | None = None
    details: str = ""

    def __post_init__(self) -> None:
        self._out: asyncio.Queue[Any] = asyncio.Queue()
        self._seq = 0
        self._offset = 0
        self._answered = 0
        self._tone_phase = 0

    async def _requests(self) -> AsyncIterator[Any]:
        yield bridge_pb2.BotMessage(
            join=bridge_pb2.Join(
                role=self.role,  # type: ignore[arg-type]
                bot=common_pb2.BotInfo(name=self.name, version="1"),
                send_format=fmt(self.rate),
                receive_format=fmt(self.rate),
                run_filter=self.run_filter,
                supports_text=self.supports_text,
                supports_virtual_clock=self.supports_virtual_clock,
            )
        )
        while (msg := await self._out.get()) is not None:
            yield msg

    def _pcm(self, n: int, loud: bool) -> bytes:
        if not loud:
            return bytes(2 * n)
        t = (np.arange(n) + self._tone_phase) / self.rate
        self._tone_phase += n
        return (np.sin(2 * np.pi * 300 * t) * 0.3 * 32767).astype("<i2").tobytes()

    def _event(self, **kwargs: Any) -> None:
        ev = common_pb2.BotEvent(bot_unix_nanos=time.time_ns(), **kwargs)
        self._out.put_nowait(bridge_pb2.BotMessage(event=ev))

    def _send_text(self, text: str) -> None:
        turn = bridge_pb2.TextTurn(text=text, sent_unix_nanos=time.time_ns())
        self._out.put_nowait(bridge_pb2.BotMessage(text=turn))

    def _before_answer(self, step: int) -> bool:
        """Events due at ``step``; False when the bot no longer answers."""
        if self.stall_after is not None and self._answered >= self.stall_after:
            return False
        if self.log_at == step:
            self._event(log=common_pb2.Log(level=common_pb2.LOG_LEVEL_INFO, message=f"step {step}"))
        if step in self.turns:
            self._send_text(self.turns[step])
        if self.end_at == step:
            kind = (
                common_pb2.END_KIND_AGENT_END_TOOL
                if self.role == common_pb2.ROLE_AGENT
                else common_pb2.END_KIND_USER_HANG_UP
            )
            self._event(end_conversation=common_pb2.EndConversation(kind=kind, reason="done"))
        return True

    def _after_answer(self, step: int) -> None:
        self._answered += 1
        if step in self.extra:
            self._out.put_nowait(self.extra[step])

    def _on_frame(self, frame: Any) -> None:
        step = frame.sequence
        if not self._before_answer(step):
            return
        n = len(frame.pcm) // 2  # it sends at the rate it receives: the step's samples
        chunk = common_pb2.AudioChunk(
            sequence=self._seq,
            sample_offset=self._offset,
            pcm=self._pcm(n, step in self.speak_steps),
            sent_unix_nanos=time.time_ns(),
        )
        self._seq += 1
        self._offset += n
        ack = bridge_pb2.ClockAck(step=step, audio=chunk)
        self._out.put_nowait(bridge_pb2.BotMessage(clock_ack=ack))
        self._after_answer(step)

    def _on_tick(self, tick: Any) -> None:
        if not self._before_answer(tick.step):
            return
        wake = self.wake_at_ms if tick.step == 0 else 0
        ack = bridge_pb2.ClockAck(step=tick.step, wake_at_ms=wake)
        self._out.put_nowait(bridge_pb2.BotMessage(clock_ack=ack))
        self._after_answer(tick.step)

    async def run(self) -> StepBot:
        channel = grpc.aio.insecure_channel(self.address)
        call = bridge_pb2_grpc.BridgeServiceStub(channel).Converse(self._requests())
        try:
            async for msg in call:
                which = msg.WhichOneof("message")
                if which == "session_start":
                    self.start = msg.session_start
                    real_text = (
                        self.start.modality == common_pb2.MODALITY_TEXT
                        and self.start.clock != common_pb2.CLOCK_KIND_VIRTUAL
                    )
                    if real_text and 0 in self.turns:  # no ticks on the real clock
                        self._send_text(self.turns[0])
                elif which == "audio":
                    self.frames.append(msg.audio)
                    self._on_frame(msg.audio)
                elif which == "clock_tick":
                    self.ticks.append(msg.clock_tick)
                    self._on_tick(msg.clock_tick)
                elif which == "text":
                    self.texts.append(msg.text)
                    if self.reply and len(self.texts) == 1:
                        self._send_text(self.reply)
                elif which == "session_ending":
                    self.ending = msg.session_ending
                    done = bridge_pb2.FinalState(done=True)
                    self._out.put_nowait(bridge_pb2.BotMessage(final_state=done))
                elif which == "session_ended":
                    self.ended = msg.session_ended
                    self._out.put_nowait(None)
            self.status = grpc.StatusCode.OK
        except grpc.aio.AioRpcError as exc:
            self.status, self.details = exc.code(), exc.details() or ""
        finally:
            self._out.put_nowait(None)
            with contextlib.suppress(Exception):
                await channel.close()
        return self


async def waiting(bridge: BridgeServer, n: int) -> None:
    """Until ``n`` bots wait in the pool (the pool has no event for an outsider)."""
    await wait_until(lambda: bridge.pool.waiting() >= n, 10, f"{n} waiting bots")
