"""Keypad tones (DTMF): the standard frequency pairs, generated and detected.

Why in the contract-side package: three parts need the same definition of a
keypad tone and must agree on it exactly. The bridge *generates* the tones
it carries to an agent in-band when the caller presses keys
(``BotEvent.dtmf``); the reference agent *detects* them in what it hears and
reports the digits; tests and benchmarks decode the audio the bridge
delivered (``to_agent``) with it. (The scorer does not: an agent that
reports no digits is ``unscored``, never judged from the audio.) Bots import only
``vae``, services import ``vae``: so it lives here, with no I/O.

Each key is the sum of one low-group and one high-group sine (ITU-T Q.23)::

            1209  1336  1477  1633 Hz
      697     1     2     3     A
      770     4     5     6     B
      852     7     8     9     C
      941     *     0     #     D

Timing follows common practice: 100 ms of tone and 100 ms of silence per key
by default (ITU-T Q.24 asks a receiver to accept tones of 40 ms and more and
reject those under 23 ms; :class:`Detector` does). Levels: the low tone at
-10 dBFS, the high one 2 dB louder (the usual pre-emphasis, "twist").

Detection uses the Goertzel power of the eight key frequencies over
overlapping blocks of 25.6 ms (205 samples at 8 kHz, half a block apart).
The Goertzel recurrence computes one DFT bin at an arbitrary frequency; here
the eight bins of a block are one product with a precomputed matrix of the
same coefficients — the same value, vectorised. A block holds a key when the
strongest bin of each group dominates the others of its group by 6 dB, the
two are within 8 dB of each other (twist) and above -40 dBFS, and together
they hold at least 60 % of the block's energy (speech, spread over many
frequencies, does not); a key is reported once it holds for two blocks in a
row, and ends after two blocks without it.
"""

from __future__ import annotations

import math

import numpy as np

LOW = (697.0, 770.0, 852.0, 941.0)
HIGH = (1209.0, 1336.0, 1477.0, 1633.0)
KEYS = ("123A", "456B", "789C", "*0#D")
#: Every key, in keypad order.
DIGITS = "".join(KEYS)
MAX_DIGITS = 64
DEFAULT_TONE_MS = 100
DEFAULT_GAP_MS = 100
MIN_MS = 20
MAX_MS = 2000
LOW_DBFS = -10.0
HIGH_DBFS = -8.0
_RAMP_S = 0.002
_PAIRS = {KEYS[r][c]: (LOW[r], HIGH[c]) for r in range(4) for c in range(4)}


def problem(digits: str) -> str:
    """Why ``digits`` is not a string of keys ("" when it is)."""
    if not digits:
        return "must not be empty"
    bad = sorted({ch for ch in digits if ch not in DIGITS})
    if bad:
        shown = ", ".join(repr(ch) for ch in bad[:5])
        return f"has {shown}: keys are 0-9, *, #, A-D"
    if len(digits) > MAX_DIGITS:
        return f"{len(digits)} keys, at most {MAX_DIGITS} at once"
    return ""


def valid(digits: str) -> bool:
    """A string of keys (what ``BotEvent.dtmf.digits`` and a script's ``dtmf`` hold)."""
    return not problem(digits)


def frequencies(key: str) -> tuple[float, float]:
    """The low and high frequency of one key."""
    return _PAIRS[key]


def tone(key: str, rate: int, start: int, n: int, length: int) -> np.ndarray:
    """Samples ``[start, start + n)`` of one key's tone ``length`` samples long (int16 units).

    Positions beyond ``length`` are silence; the first and last 2 ms are
    faded in and out (no clicks). Generating by position lets a caller cut
    the tone into frames of any size and get exactly the samples of one
    tone generated whole.
    """
    low, high = _PAIRS[key]
    idx = np.arange(start, start + n, dtype=np.float64)
    inside = idx < length
    t = idx / rate
    a_low = 10 ** (LOW_DBFS / 20) * 32767
    a_high = 10 ** (HIGH_DBFS / 20) * 32767
    out = a_low * np.sin(2 * math.pi * low * t) + a_high * np.sin(2 * math.pi * high * t)
    ramp = max(1, int(rate * _RAMP_S))
    edge = np.minimum(idx, length - 1 - idx) / ramp
    out *= np.clip(edge, 0.0, 1.0) * inside
    return out


def tones(
    digits: str, rate: int, tone_ms: int = DEFAULT_TONE_MS, gap_ms: int = DEFAULT_GAP_MS
) -> np.ndarray:
    """The whole sequence of ``digits`` (tone then gap per key), float64 in int16 units."""
    on, off = rate * tone_ms // 1000, rate * gap_ms // 1000
    parts = [np.concatenate([tone(k, rate, 0, on, on), np.zeros(off)]) for k in digits]
    return np.concatenate(parts) if parts else np.zeros(0)


class Detector:
    """Streaming DTMF detection at one sample rate (see the module doc)."""

    def __init__(self, rate: int) -> None:
        self.rate = rate
        self.block = max(64, round(rate * 205 / 8000))
        self.hop = self.block // 2
        n = np.arange(self.block)
        freqs = np.array(LOW + HIGH)
        self._basis = np.exp(-2j * np.pi * np.outer(freqs, n) / rate)
        self._buffer = np.zeros(0, dtype=np.float64)
        self._candidate = ""
        self._held = 0
        self._current = ""
        self._missing = 0
        #: Samples consumed so far (the position of the next sample fed).
        self.position = 0
        #: Positions (sample offsets) at which each reported key was confirmed.
        self.at: list[int] = []
        # The quietest tone that counts: -40 dBFS, as the bin power of a pure sine.
        self._floor = (10 ** (-40 / 20) * 32767 * self.block / 2) ** 2

    def feed(self, samples: np.ndarray) -> str:
        """Consume PCM samples (int16 units); return the keys confirmed in them, in order."""
        self._buffer = np.concatenate([self._buffer, samples.astype(np.float64)])
        found = ""
        start = 0
        while start + self.block <= len(self._buffer):
            key = self._classify(self._buffer[start : start + self.block])
            end = self.position + start + self.block
            found += self._step(key, end)
            start += self.hop
        self._buffer = self._buffer[start:]
        self.position += start
        return found

    def _classify(self, x: np.ndarray) -> str:
        power = np.abs(self._basis @ x) ** 2
        lo, hi = power[:4], power[4:]
        i, j = int(np.argmax(lo)), int(np.argmax(hi))
        p_lo, p_hi = lo[i], hi[j]
        if p_lo < self._floor or p_hi < self._floor:
            return ""
        if np.partition(lo, 2)[2] * 4 > p_lo or np.partition(hi, 2)[2] * 4 > p_hi:
            return ""  # another bin of the group within 6 dB
        if max(p_lo, p_hi) > min(p_lo, p_hi) * 10**0.8:
            return ""  # twist beyond 8 dB
        energy = float(np.dot(x, x)) * self.block / 2
        if energy <= 0 or (p_lo + p_hi) < 0.6 * energy:
            return ""  # not pure enough: speech or noise
        return KEYS[i][j]

    def _step(self, key: str, end: int) -> str:
        if self._current:
            if key == self._current:
                self._missing = 0
                return ""
            self._missing += 1
            if self._missing < 2:
                return ""
            self._current, self._missing = "", 0
        if key and key == self._candidate:
            self._held += 1
        else:
            self._candidate, self._held = key, 1 if key else 0
        if key and self._held >= 2:
            self._current, self._candidate, self._held = key, "", 0
            self.at.append(end)
            return key
        return ""


def detect(samples: np.ndarray, rate: int) -> str:
    """Every key in a whole recording, in order."""
    return Detector(rate).feed(samples)
