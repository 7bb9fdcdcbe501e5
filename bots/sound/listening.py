"""Hearing the peer: energy-based detection of its speech on the received audio.

A reference bot takes turns the way a phone caller does without
understanding words — it waits until the line has been quiet for a while
after the peer spoke. The bridge delivers the peer's audio continuously on
its open-mic clock (silence when the peer is quiet), so the received sample
count is a clock and every boundary is placed on it. A bot that transcribes
the peer (``vae bot --llm ... --asr ENGINE``) has the listener keep the
received audio (:meth:`PeerListener.keep_audio`) and cuts each turn from it.

In a text session there is nothing to detect: :class:`PeerTexts` counts the
peer's whole text turns with the same counters, so a brain takes its turns
the same way in both.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class ListenSettings:
    #: Frames louder than this (RMS, dBFS) count as speech.
    threshold_dbfs: float = -38.0
    #: Speech must last this long before it counts (ignores clicks).
    min_speech_ms: float = 60.0
    #: Quiet this long after speech ends the peer's turn.
    end_silence_ms: float = 500.0


def rms_dbfs(pcm: np.ndarray) -> float:
    if len(pcm) == 0:
        return -120.0
    x = pcm.astype(np.float64) / 32768.0
    return float(10.0 * np.log10(np.mean(x * x) + 1e-12))


class PeerListener:
    """Tracks the peer's speech segments; coroutines wait on its counters.

    ``starts`` counts the peer's speech onsets and ``ends`` its completed
    turns (speech followed by ``end_silence_ms`` of quiet); ``completed_turn``
    is the onset number of the latest completed turn. Waiters compare against
    a value they noted earlier, so no boundary is missed between a check and a
    wait.
    """

    def __init__(self, sample_rate: int, settings: ListenSettings | None = None) -> None:
        self.sample_rate = sample_rate
        self.settings = settings or ListenSettings()
        self.samples_heard = 0
        self.starts = 0
        self.ends = 0
        self.completed_turn = 0
        self.speaking = False
        #: Received-sample offsets of the latest onset and turn end.
        self.last_start_offset = -1
        self.last_end_offset = -1
        self._loud_run = 0
        self._quiet_run = 0
        self._candidate_start = 0
        self._changed = asyncio.Condition()
        #: Received-sample offsets of every onset, in order.
        self.onsets: list[int] = []
        #: Received audio kept from ``_kept_from`` on (None: not kept).
        self._kept: bytearray | None = None
        self._kept_from = 0

    def keep_audio(self) -> None:
        """Keep what is received from now on, for :meth:`audio`."""
        if self._kept is None:
            self._kept, self._kept_from = bytearray(), self.samples_heard

    def audio(self, start: int, end: int) -> np.ndarray:
        """Received samples ``[start, end)`` (offsets on the received clock) that were kept."""
        if self._kept is None:
            return np.zeros(0, dtype=np.int16)
        a = max(0, start - self._kept_from) * 2
        b = max(0, end - self._kept_from) * 2
        return np.frombuffer(bytes(self._kept[a:b]), dtype="<i2")

    def forget_before(self, offset: int) -> None:
        """Drop kept audio before ``offset`` (a turn already transcribed)."""
        if self._kept is not None and offset > self._kept_from:
            cut = min(len(self._kept), (offset - self._kept_from) * 2)
            del self._kept[:cut]
            self._kept_from += cut // 2

    async def feed(self, pcm: bytes) -> None:
        """Process one received frame (PCM16 LE mono) and wake the waiters."""
        self.hear(pcm)
        # Always wake waiters: clock waits (wait_heard) advance on every frame.
        async with self._changed:
            self._changed.notify_all()

    def hear(self, pcm: bytes) -> None:
        """Process one received frame (PCM16 LE mono); waiters are not woken."""
        samples = np.frombuffer(pcm, dtype="<i2")
        n = len(samples)
        if self._kept is not None:
            self._kept += pcm
        loud = rms_dbfs(samples) > self.settings.threshold_dbfs
        offset = self.samples_heard
        self.samples_heard += n
        if loud:
            if self._loud_run == 0:
                self._candidate_start = offset
            self._loud_run += n
            self._quiet_run = 0
            if not self.speaking and self._ms(self._loud_run) >= self.settings.min_speech_ms:
                self.speaking = True
                self.starts += 1
                self.last_start_offset = self._candidate_start
                self.onsets.append(self._candidate_start)
        else:
            self._loud_run = 0
            self._quiet_run += n
            if self.speaking and self._ms(self._quiet_run) >= self.settings.end_silence_ms:
                self.speaking = False
                self.ends += 1
                self.completed_turn = self.starts
                self.last_end_offset = self.samples_heard - self._quiet_run

    def _ms(self, samples: int) -> float:
        return samples * 1000.0 / self.sample_rate

    async def wait_turn_end(self, after_start: int) -> None:
        """Wait until a peer turn that began after onset ``after_start`` is complete.

        Turns that began earlier (speech we talked over, or that we already
        answered) do not count, so a barge-in never answers itself.
        """
        async with self._changed:
            await self._changed.wait_for(lambda: self.completed_turn > after_start)

    async def wait_speech_start(self, after: int) -> None:
        """Wait until the peer has started speaking more than ``after`` times."""
        async with self._changed:
            await self._changed.wait_for(lambda: self.starts > after)

    async def wait_heard(self, samples: int) -> None:
        """Wait until ``samples`` more samples have been received (a clock wait)."""
        target = self.samples_heard + samples
        async with self._changed:
            await self._changed.wait_for(lambda: self.samples_heard >= target)


class PeerTexts:
    """The peer's whole turns in a text session, with :class:`PeerListener`'s counters.

    Each turn is an onset and a completed turn at once (``speaking`` is never
    true: a text turn cannot be talked over). There is no received audio, so
    the sample positions stay -1.
    """

    sample_rate = 1000
    samples_heard = 0
    speaking = False
    last_start_offset = -1
    last_end_offset = -1

    def __init__(self) -> None:
        self.starts = 0
        self.ends = 0
        self.completed_turn = 0
        self.texts: list[str] = []

    def hear(self, text: str) -> None:
        self.texts.append(text)
        self.starts += 1
        self.ends += 1
        self.completed_turn = self.starts
