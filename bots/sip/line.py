"""One SIP call seen as a Converse stream, read and written by :class:`~vae.bots.client.BotStream`.

In (:meth:`SipLine.read`): the bridge's control messages arrive as INFO of
the ``vae-bridge`` package (``BridgeMessage`` protobuf JSON); the call's RTP
leaves the jitter buffer every 20 ms, resampled from 8 kHz to the rate the
session asked for, as ``audio`` messages; a key pressed at the far end
(RFC 4733) is a ``dtmf`` message; the far end's BYE ends the stream.

Out (:meth:`SipLine.pump_out`, reading the stream's outbox): ``audio``
resampled to 8 kHz goes out as G.711 RTP (the voice paces it); ``event`` and
``final_state`` go out as INFO of the ``vae-bot`` package, the final state
cut into chunks small enough for a datagram (:data:`vae.sip.info.MAX_CHUNK`).
Text turns and clock answers never occur: a call is audio on the real clock.
"""

from __future__ import annotations

import asyncio
import time

import numpy as np
import soxr
from google.protobuf import json_format

from vae.bridge.v1 import bridge_pb2
from vae.common.v1 import common_pb2
from vae.sip.call import Call, Hangup, Info
from vae.sip.info import BOT_PACKAGE, BRIDGE_PACKAGE, CONTENT_TYPE, MAX_CHUNK
from vae.sip.media import MediaNotice

LINE_RATE = 8000
FRAME = 160
FRAME_S = FRAME / LINE_RATE


class SipLine:
    def __init__(self, call: Call) -> None:
        self.call = call
        self.outbox: asyncio.Queue[bridge_pb2.BotMessage | None] = asyncio.Queue()
        self._inbox: asyncio.Queue[bridge_pb2.BridgeMessage | None] = asyncio.Queue()
        self._up: soxr.ResampleStream | None = None
        self._down: soxr.ResampleStream | None = None
        self._down_rate = 0
        self.ended = False

    # ----------------------------------------------------------------- inbound
    async def read(self) -> bridge_pb2.BridgeMessage | None:
        """The next message for the stream (None: the call is over)."""
        return await self._inbox.get()

    async def pump_in(self, receive_rate: asyncio.Future[int]) -> None:
        """Every 20 ms: the call's events, then a frame of its audio once the rate is known."""
        loop = asyncio.get_running_loop()
        rate: int | None = None
        t0, n = loop.time(), 0
        while not self.ended:
            while not self.call.events.empty():
                self._event(self.call.events.get_nowait())
            if self.ended:
                break
            if rate is None and receive_rate.done():
                rate = receive_rate.result()
                self._up = soxr.ResampleStream(LINE_RATE, rate, 1, dtype="int16")
                t0, n = loop.time(), 0
            due = t0 + n * FRAME_S
            if loop.time() < due:
                await asyncio.sleep(due - loop.time())  # the line's own 20 ms clock
                continue
            if rate is not None:
                self._audio(n, rate)
            n += 1
        self._inbox.put_nowait(None)

    def _audio(self, n: int, rate: int) -> None:
        assert self._up is not None
        pcm = np.frombuffer(self.call.media.pop(FRAME), dtype="<i2")
        up = self._up.resample_chunk(pcm)
        chunk = common_pb2.AudioChunk(sequence=n, sample_offset=n * FRAME * rate // LINE_RATE,
                                      pcm=up.astype("<i2").tobytes(),
                                      sent_unix_nanos=time.time_ns())  # fmt: skip
        self._inbox.put_nowait(bridge_pb2.BridgeMessage(audio=chunk))

    def _event(self, event: object) -> None:
        if isinstance(event, Info) and event.package == BRIDGE_PACKAGE:
            try:
                msg = json_format.Parse(event.body.decode("utf-8"), bridge_pb2.BridgeMessage())
            except (json_format.ParseError, UnicodeDecodeError):
                return  # not from a bridge we can follow: ignored, the call goes on
            self._inbox.put_nowait(msg)
        elif isinstance(event, MediaNotice) and event.kind == "digit":
            self._inbox.put_nowait(bridge_pb2.BridgeMessage(dtmf=common_pb2.Dtmf(digits=event.key)))
        elif isinstance(event, Hangup):
            self.ended = True

    # ---------------------------------------------------------------- outbound
    async def pump_out(self) -> None:
        """Send what the stream puts in its outbox until it puts None."""
        while (msg := await self.outbox.get()) is not None:
            which = msg.WhichOneof("message")
            if which == "audio":
                self._send_audio(msg.audio.pcm)
            elif which == "event":
                await self._info(bridge_pb2.BotMessage(event=msg.event))
            elif which == "final_state":
                for part in _small_chunks(msg.final_state):
                    await self._info(bridge_pb2.BotMessage(final_state=part))

    def set_send_rate(self, rate: int) -> None:
        self._down = soxr.ResampleStream(rate, LINE_RATE, 1, dtype="int16")
        self._down_rate = rate

    def _send_audio(self, pcm: bytes) -> None:
        if self._down is None or self.call.hangup is not None:
            return
        out = self._down.resample_chunk(np.frombuffer(pcm, dtype="<i2"))
        self.call.media.send_pcm(out.astype("<i2").tobytes())

    async def _info(self, msg: bridge_pb2.BotMessage) -> None:
        if self.call.hangup is None:
            body = json_format.MessageToJson(msg, indent=None).encode()
            await self.call.info(BOT_PACKAGE, body, CONTENT_TYPE)


def _small_chunks(final: bridge_pb2.FinalState) -> list[bridge_pb2.FinalState]:
    """One FinalState cut so that no chunk's data exceeds MAX_CHUNK bytes."""
    name = "state" if final.HasField("state") else "context" if final.HasField("context") else ""
    if not name:
        return [final]
    chunk: common_pb2.JsonChunk = getattr(final, name)
    data = chunk.data
    pieces = [data[i : i + MAX_CHUNK] for i in range(0, len(data), MAX_CHUNK)] or [b""]
    out = []
    for i, piece in enumerate(pieces):
        last = i == len(pieces) - 1
        part = common_pb2.JsonChunk(offset=chunk.offset + i * MAX_CHUNK, data=piece,
                                    last=chunk.last and last)  # fmt: skip
        out.append(bridge_pb2.FinalState(**{name: part}, done=final.done and last))
    return out
