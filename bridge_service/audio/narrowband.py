"""The narrowband codec of the phone line: a polyphase FIR resampler and G.711 mu-law.

Why apart from ``line`` (which decides what happens to each frame of a
session: gain, clipping, codec, loss, jitter): this is the signal arithmetic
of ``codec: mulaw8k`` alone — band-limit, resample to 8 kHz and back, and
compand — which changes only when its filters or its speed do
(``benchmarks/line.py``). Streaming, one sample out per sample in, so frames of
any size give full frames and a fixed delay.
"""

from __future__ import annotations

import numpy as np

_MU = 255.0
_NARROW_RATE = 8000
#: The narrowband low-pass's cutoff: the telephone band (up to 3.4 kHz) passes.
_CUTOFF_HZ = 3600.0


def _mulaw_tables() -> tuple[np.ndarray, np.ndarray]:
    """G.711 mu-law's 8-bit code as decision levels, and each code's decoded level.

    The code of a level ``x`` (int16 units) is ``round(127 * log1p(mu |x| / 32768) /
    log1p(mu))`` with its sign: code ``c`` starts where that expression reaches ``c -
    1/2``. Decoded: ``((1 + mu) ** (c / 127) - 1) / mu * 32768``.
    """
    starts = np.arange(1, 128) - 0.5
    levels = 32768.0 * np.expm1(starts / 127.0 * np.log1p(_MU)) / _MU
    decoded = ((1.0 + _MU) ** (np.arange(128) / 127.0) - 1.0) / _MU * 32768.0
    return levels, decoded


_MULAW_LEVELS, _MULAW_DECODED = _mulaw_tables()


def mulaw_roundtrip(samples: np.ndarray) -> np.ndarray:
    """G.711 mu-law: compand to 8 bits and back (float64 in int16 units).

    By table: the code from the decision levels (one binary search per sample), the
    level from the code — the same values as evaluating the log and the power per
    sample (checked on 20 million samples; only a level within a few units in the last
    place of a decision level can round the other way), at a quarter of the cost.
    """
    code = np.searchsorted(_MULAW_LEVELS, np.abs(samples), side="right")
    out: np.ndarray = np.sign(samples) * _MULAW_DECODED[code]
    return out


class _Fir:
    """A streaming FIR filter: exactly one output sample per input sample, any chunk size."""

    def __init__(self, taps: np.ndarray) -> None:
        self.taps = taps
        self._history = np.zeros(len(taps) - 1)

    def __call__(self, x: np.ndarray) -> np.ndarray:
        joined = np.concatenate([self._history, x])
        self._history = joined[len(joined) - len(self.taps) + 1 :]
        out: np.ndarray = np.convolve(joined, self.taps, mode="valid")
        return out


def lowpass_taps(rate: int, cutoff_hz: float = _CUTOFF_HZ) -> np.ndarray:
    """A Blackman-windowed sinc low-pass: about 74 dB down past ``cutoff + 5.5 rate / taps``."""
    n = rate // 100 + 1  # 161 taps at 16 kHz: the transition is about 550 Hz wide
    k = np.arange(n) - (n - 1) / 2
    taps = 2 * cutoff_hz / rate * np.sinc(2 * cutoff_hz / rate * k) * np.blackman(n)
    out: np.ndarray = taps / taps.sum()
    return out


class _Decimator:
    """The streaming FIR low-pass, computed only at the samples kept (every ``k``-th).

    A polyphase decimator: the taps split by index modulo ``k``, each part run over
    the matching every-``k``-th input samples (``np.convolve``), the parts summed —
    the same sums as filtering every sample and keeping every ``k``-th, ``1/k`` of the
    work. The kept samples are those whose index since the stream's start is a
    multiple of ``k``.
    """

    def __init__(self, taps: np.ndarray, k: int) -> None:
        self.k = k
        self.span = len(taps)
        self.parts = [taps[p::k].copy() for p in range(k)]
        self._history = np.zeros(len(taps) - 1)
        self._at = 0  # samples seen so far

    def __call__(self, x: np.ndarray) -> np.ndarray:
        k = self.k
        joined = np.concatenate([self._history, x])
        self._history = joined[len(x) :]
        first = (-self._at) % k  # the first kept sample of this chunk
        self._at += len(x)
        count = len(range(first, len(x), k))
        out = np.zeros(count)
        if count == 0:
            return out
        for p, part in enumerate(self.parts):
            # Output t is sum_q part[q] * joined[first + t*k + span-1 - (q*k + p)].
            begin = first + self.span - 1 - p - (len(part) - 1) * k
            seq = joined[begin::k][: count + len(part) - 1]
            out += np.convolve(seq, part, mode="valid")
        return out


class _Interpolator:
    """Puts ``k - 1`` zeros after each kept sample and low-passes (times ``k``), streaming.

    A polyphase interpolator: the outputs ``r`` samples after a kept one come from the
    taps whose index is ``r`` modulo ``k`` run over the kept samples alone — the same
    sums as filtering the zero-stuffed stream, ``1/k`` of the work. One sample out per
    sample of the full-rate stream, whatever the chunk size.
    """

    def __init__(self, taps: np.ndarray, k: int) -> None:
        self.k = k
        self.depth = -(-len(taps) // k)  # kept samples one output can reach
        padded = np.zeros(self.depth * k)
        padded[: len(taps)] = taps * k
        self.parts = [padded[r::k].copy() for r in range(k)]
        self._kept = np.zeros(self.depth)  # the last kept samples before this chunk
        self._at = 0  # full-rate samples so far

    def __call__(self, kept: np.ndarray, n: int) -> np.ndarray:
        """``n`` full-rate samples from the ``kept`` samples that fall among them."""
        k = self.k
        joined = np.concatenate([self._kept, kept])
        before = -(-self._at // k)  # kept samples before this chunk
        out = np.empty(n)
        for r, part in enumerate(self.parts):
            first = (r - self._at) % k  # this chunk's first output r after a kept sample
            if first >= n:
                continue
            count = len(range(first, n, k))
            # Output at index g (g % k == r) is conv(joined, part)[g // k - before + 1].
            t = (self._at + first) // k - before + 1
            conv = np.convolve(joined[t : t + count + self.depth - 1], part, mode="valid")
            out[first::k] = conv
        self._at += n
        self._kept = joined[len(joined) - self.depth :]
        return out


class Narrowband:
    """Band-limit to 8 kHz sampling, mu-law at 8 kHz, and back to the agent's rate, streaming.

    At a rate that is a multiple of 8 kHz (16, 24, 32, 48 kHz) this is a
    polyphase resampler: the low-pass computed only at every k-th sample (the
    ones kept), mu-law on those, then k - 1 zeros between them low-passed
    again (times k), computing only the taps that meet a kept sample — the
    same sums as filtering at the full rate, 1/k of the work. FIR filters give
    one sample out per sample in, whatever the frame size, so the agent hears
    the caller a fixed (taps - 1) samples later (10 ms at 16 kHz) and never a
    gap. At 8 kHz it is the mu-law alone after the low-pass; at other rates
    (11.025, 22.05, 44.1 kHz) the band limit and the mu-law apply at the
    agent's rate.
    """

    def __init__(self, rate: int) -> None:
        self.rate = rate
        self.factor = rate // _NARROW_RATE if rate % _NARROW_RATE == 0 else 0
        taps = lowpass_taps(rate)
        if self.factor > 1:
            self._decimate = _Decimator(taps, self.factor)
            self._interpolate = _Interpolator(taps, self.factor)
        else:
            self._down = _Fir(taps)
            self._up = _Fir(taps)

    def process(self, samples: np.ndarray) -> np.ndarray:
        if self.factor > 1:
            kept = mulaw_roundtrip(self._decimate(samples))
            return self._interpolate(kept, len(samples))
        x = self._down(samples)
        return mulaw_roundtrip(x) if self.factor == 1 else self._up(mulaw_roundtrip(x))
