"""How a reference bot plays its side of the line in each tier: audio or text, real or virtual.

:class:`Line` holds what of a session depends on its modality and its clock,
so :mod:`vae.bots.client` only routes messages:

- audio on the real clock: each frame heard wakes the brain (the voice is
  paced by its own task);
- audio on the virtual clock: each frame is a step — hear it, let the brain
  settle (:meth:`vae.bots.brains.gate.Gate.settle`), speak the audio the step owes as one
  chunk, and answer ``ClockAck`` with the chunk inside it;
- text: the peer's whole turns are heard (and, as in audio, reach the
  history only when the run shares transcripts); seconds of the session are
  the tick's time on the virtual clock — answered with ``ClockAck`` carrying
  when the brain next wants to be woken — or the wall clock on the real one.
"""

from __future__ import annotations

import asyncio
import time

from vae.bots.brains.conversation import Conversation
from vae.bots.brains.keypad import KeypadEar
from vae.bots.sound.listening import PeerListener, PeerTexts
from vae.bridge.v1 import bridge_pb2
from vae.common.v1 import common_pb2

Outbox = asyncio.Queue[bridge_pb2.BotMessage | None]


class Line:
    """One session's line for a bot stream: what it hears, when, and its answers."""

    def __init__(self, conv: Conversation, outbox: Outbox) -> None:
        self.conv = conv
        self._outbox = outbox
        self._tick_ms = 0
        self._text_sequence = 0
        #: Virtual clock: the step's audio, sent inside its ClockAck.
        self._holding = False
        self._held: common_pb2.AudioChunk | None = None
        info, gate = conv.info, conv.gate
        #: The agent listens for keypad tones (vae.bots.brains.keypad) in what it hears.
        self.keypad = (
            KeypadEar(conv, conv.listener.sample_rate)
            if info.role == "agent" and isinstance(conv.listener, PeerListener)
            else None
        )
        if info.text and info.virtual:
            conv.clock_ms = lambda: self._tick_ms
        elif info.text:
            loop = asyncio.get_running_loop()
            t0 = loop.time()
            conv.clock_ms = lambda: int((loop.time() - t0) * 1000)

            def wake_at(at_ms: int) -> None:
                # 1 ms late on purpose: at the wake-up the clock has surely reached the target.
                loop.call_at(t0 + (at_ms + 1) / 1000, gate.poke)

            conv.wake_at = wake_at

    @property
    def paced(self) -> bool:
        """Whether the voice sends on its own, in real time (audio on the real clock)."""
        return not (self.conv.info.text or self.conv.info.virtual)

    def hold(self, chunk: common_pb2.AudioChunk) -> bool:
        """Keep ``chunk`` for the step's ClockAck; False: send it as it is."""
        if not self._holding or self._held is not None:
            return False
        self._held = chunk
        return True

    async def audio(self, frame: common_pb2.AudioChunk) -> None:
        if self.conv.info.virtual:
            await self._step(frame)
        elif isinstance(self.conv.listener, PeerListener):
            self.conv.listener.hear(frame.pcm)
            if self.keypad is not None:
                await self.keypad.hear(frame.pcm)
            self.conv.gate.poke()

    async def _step(self, frame: common_pb2.AudioChunk) -> None:
        """One step of the virtual clock (audio): hear, settle, speak what it owes, answer."""
        listener, voice, gate = self.conv.listener, self.conv.voice, self.conv.gate
        assert isinstance(listener, PeerListener)
        listener.hear(frame.pcm)
        if self.keypad is not None:
            await self.keypad.hear(frame.pcm)
        await gate.settle()
        # The step ends where the frame ends, on the session's clock: owe that much audio,
        # as one chunk carried in the answer (one message a step).
        end = frame.sample_offset + len(frame.pcm) // 2
        owed = end * voice.sample_rate // listener.sample_rate - voice.samples_sent
        self._holding = True
        try:
            if owed > 0:
                await voice.step(owed)
                await gate.settle()
        finally:
            self._holding = False
        audio, self._held = self._held, None
        self._ack(frame.sequence, 0, audio)

    async def text(self, turn: bridge_pb2.TextTurn) -> None:
        """The peer's whole turn in a text session."""
        conv = self.conv
        assert isinstance(conv.listener, PeerTexts)
        self._tick_ms = max(self._tick_ms, turn.session_ms)
        conv.listener.hear(turn.text)
        await conv.peer.add(turn.text)
        # As in audio, where the peer's words reach the history only as shared transcripts.
        if conv.info.share_transcripts and conv.record_history:
            conv.history.append({"role": "user", "content": turn.text})
        if not conv.info.virtual:
            conv.gate.poke()  # on the virtual clock the tick that follows wakes the brain

    async def keys(self, digits: str) -> None:
        """Text session: the caller pressed keys (BridgeMessage.dtmf); the agent reports them."""
        if self.conv.info.role == "agent":
            await self.conv.emit(dtmf=common_pb2.Dtmf(digits=digits))

    async def tick(self, tick: bridge_pb2.ClockTick) -> None:
        """Text on the virtual clock: the session's time moved; settle, then answer."""
        self._tick_ms = tick.session_ms
        await self.conv.gate.settle()
        self._ack(tick.step, self.conv.gate.wake_at_ms or 0)

    async def send_text(self, text: str) -> None:
        turn = bridge_pb2.TextTurn(
            text=text, sequence=self._text_sequence, sent_unix_nanos=time.time_ns()
        )
        self._text_sequence += 1
        self._outbox.put_nowait(bridge_pb2.BotMessage(text=turn))

    def _ack(self, step: int, wake_at_ms: int, audio: common_pb2.AudioChunk | None = None) -> None:
        ack = bridge_pb2.ClockAck(step=step, wake_at_ms=wake_at_ms, audio=audio)
        self._outbox.put_nowait(bridge_pb2.BotMessage(clock_ack=ack))
