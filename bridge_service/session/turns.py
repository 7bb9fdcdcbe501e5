"""Turn counting from the audio the bridge received (never from token usage).

A cheap energy detector with hangover: a chunk is voiced when its RMS is above
a threshold (dBFS); a talk spurt starts after ``min_speech_s`` of voiced audio
and ends after ``hangover_s`` of unvoiced audio. Audio is counted by samples,
so arrival jitter never splits a spurt. A sender that stops sending between
turns (pipecat bots do; the open mic then fills silence) is silent for as long
as its audio ran out: the time between when its previous audio would have
finished playing and when the next chunk arrived counts as unvoiced audio —
unless that gap is within ``jitter_tolerance_s`` (arrival jitter of a sender
that is still talking, e.g. 40 ms chunks arriving 32–48 ms apart, or a loaded
machine), which must never split a spurt.
Each spurt is one turn of that side; the session records ``user_turns``/``agent_turns``
and uses the last voiced time for the inactivity timeout.
"""

from __future__ import annotations

import math

import numpy as np


class TalkSpurtCounter:
    def __init__(
        self,
        rate: int,
        *,
        threshold_dbfs: float = -45.0,
        hangover_s: float = 0.5,
        min_speech_s: float = 0.06,
        jitter_tolerance_s: float = 0.1,
    ) -> None:
        self._threshold_sq = (10 ** (threshold_dbfs / 20) * 32768) ** 2
        self._hangover = int(hangover_s * rate)
        self._min_speech = max(1, int(min_speech_s * rate))
        self.turns = 0
        self.in_spurt = False
        self._voiced_run = 0
        self._silent_run = 0
        #: Bridge time (ns) of the last voiced chunk; 0 if none yet.
        self.last_voiced_ns = 0
        self._rate = rate
        self._tolerance = int(jitter_tolerance_s * rate)
        #: Bridge time (ns) at which the audio received so far has played out.
        self._playout_end_ns = 0

    def add(self, pcm: bytes, arrival_ns: int) -> bool:
        """Feed one chunk; return True when it started a new turn."""
        n = len(pcm) // 2
        if n == 0:
            return False
        if self._playout_end_ns and arrival_ns > self._playout_end_ns:
            gap = round((arrival_ns - self._playout_end_ns) * self._rate / 1e9)
            if gap > self._tolerance:
                self._silence(gap)
        start = max(self._playout_end_ns, arrival_ns)
        self._playout_end_ns = start + round(n * 1e9 / self._rate)
        samples = np.frombuffer(pcm, dtype="<i2").astype(np.float32)
        voiced = float(np.dot(samples, samples)) / n > self._threshold_sq
        started = False
        if voiced:
            self.last_voiced_ns = arrival_ns
            self._silent_run = 0
            self._voiced_run += n
            if not self.in_spurt and self._voiced_run >= self._min_speech:
                self.in_spurt = True
                self.turns += 1
                started = True
        else:
            self._silence(n)
        return started

    def _silence(self, samples: int) -> None:
        self._voiced_run = 0
        if self.in_spurt:
            self._silent_run += samples
            if self._silent_run >= self._hangover:
                self.in_spurt = False


def dbfs(pcm: bytes) -> float:
    """RMS level of PCM16 audio in dBFS (-inf for silence)."""
    samples = np.frombuffer(pcm, dtype="<i2").astype(np.float64)
    if not len(samples):
        return -math.inf
    rms = math.sqrt(float(np.mean(samples * samples)))
    return -math.inf if rms == 0 else 20 * math.log10(rms / 32768)


class TextTurnCounter:
    """Turns of one side of a text session, in the audio counter's shape.

    ``turns`` (one per text turn) and ``last_voiced_ns`` (the end of the
    latest turn, on the session's clock) are what the session reads from a
    :class:`TalkSpurtCounter`.
    """

    __slots__ = ("last_voiced_ns", "turns")

    def __init__(self) -> None:
        self.turns = 0
        self.last_voiced_ns = 0

    def count(self, end_ns: int) -> None:
        self.turns += 1
        self.last_voiced_ns = max(self.last_voiced_ns, end_ns)
