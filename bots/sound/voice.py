"""The bot's mouth: real-time PCM16 in 20 ms chunks on its own sample clock.

The sender is paced by the event loop's clock, not by sleeps between
utterances: chunk ``k`` leaves at ``t0 + k * 20 ms``, silence when nothing is
being said, so the bot's sample clock advances exactly with real time (as a
phone line's does) and every speech boundary is a sample offset on it. A late
loop catches up by sending the overdue chunks at once instead of drifting.

On the virtual clock nothing is paced: the bot calls :meth:`Voice.step` for
each chunk it owes the step it answers (docs/contract.md, "The virtual clock"),
so its sample clock is the session's. ``changed`` is called whenever an
utterance starts or ends (the brain waits on those).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import numpy as np

CHUNK_MS = 20


@dataclass
class Utterance:
    samples: np.ndarray
    pos: int = 0
    start_offset: int = -1
    end_offset: int = -1
    #: Wall time of the first sample sent, unix nanos.
    start_ns: int = 0
    done: asyncio.Event = field(default_factory=asyncio.Event)
    started: asyncio.Event = field(default_factory=asyncio.Event)
    truncated: bool = False

    @property
    def fraction(self) -> float:
        return self.pos / len(self.samples) if len(self.samples) else 1.0


SendAudio = Callable[[int, int, bytes, int], Awaitable[None]]
Boundary = Callable[[str, int], Awaitable[None]]


class Voice:
    """Queues utterances and streams them (or silence) chunk by chunk."""

    def __init__(
        self,
        sample_rate: int,
        send: SendAudio,
        boundary: Boundary,
        changed: Callable[[], None] | None = None,
    ) -> None:
        self.sample_rate = sample_rate
        self.chunk = sample_rate * CHUNK_MS // 1000
        self._send = send
        self._boundary = boundary
        self._changed = changed or (lambda: None)
        self._current: Utterance | None = None
        self._closed = asyncio.Event()
        self._silence = np.zeros(self.chunk, dtype=np.int16)
        self.samples_sent = 0
        self.chunks_sent = 0

    @property
    def speaking(self) -> bool:
        return self._current is not None

    def start(self, samples: np.ndarray) -> Utterance:
        """Queue an utterance to start on the next chunk (one at a time)."""
        if self._current is not None:
            raise RuntimeError("already speaking")
        utt = Utterance(samples.astype(np.int16, copy=False))
        self._current = utt
        return utt

    def stop(self) -> None:
        """Cut the current utterance short at the next chunk (a yield)."""
        if self._current is not None:
            self._current.truncated = True

    def close(self) -> None:
        self.stop()
        self._closed.set()

    async def finish(self) -> None:
        """End the current utterance where it is (a voice driven by ``step``, at the end)."""
        await self._finish_current()

    async def run(self) -> None:
        """Send one chunk per ``CHUNK_MS`` of wall clock until closed (the real clock)."""
        loop = asyncio.get_running_loop()
        t0 = loop.time()
        while not self._closed.is_set():
            delay = t0 + self.chunks_sent * CHUNK_MS / 1000 - loop.time()
            if delay > 0:
                try:
                    await asyncio.wait_for(self._closed.wait(), delay)
                    break
                except TimeoutError:
                    pass
            await self.step()
        await self._finish_current()

    async def step(self, samples: int = 0) -> None:
        """Send the next chunk now (``samples`` long, default one chunk): speech or silence."""
        if samples and samples != self.chunk:
            pcm = await self._next_chunk(np.zeros(samples, dtype=np.int16))
        else:
            pcm = await self._next_chunk(self._silence)
        await self._send(self.chunks_sent, self.samples_sent, pcm.tobytes(), time.time_ns())
        self.samples_sent += len(pcm)
        self.chunks_sent += 1

    async def _next_chunk(self, silence: np.ndarray) -> np.ndarray:
        """The next ``len(silence)`` samples: the utterance's, padded with ``silence``."""
        utt = self._current
        if utt is None:
            return silence
        if utt.truncated:
            await self._finish_current()
            return silence
        if utt.pos == 0:
            utt.start_offset = self.samples_sent
            utt.start_ns = time.time_ns()
            utt.started.set()
            self._changed()
            await self._boundary("started", utt.start_offset)
        size = len(silence)
        piece = utt.samples[utt.pos : utt.pos + size]
        spoken = len(piece)
        utt.pos += spoken
        if spoken < size:
            piece = np.concatenate([piece, silence[: size - spoken]])
        if utt.pos >= len(utt.samples):
            utt.end_offset = self.samples_sent + spoken
            self._current = None
            await self._boundary("stopped", utt.end_offset)
            utt.done.set()
            self._changed()
        return piece

    async def _finish_current(self) -> None:
        utt = self._current
        if utt is None:
            return
        self._current = None
        utt.truncated = utt.truncated or utt.pos < len(utt.samples)
        utt.end_offset = self.samples_sent
        if utt.pos > 0:
            await self._boundary("stopped", utt.end_offset)
        utt.done.set()
        self._changed()
