"""The phone line on the user -> agent direction: gain, clipping, codec, loss, jitter.

Why here, frame by frame: :class:`~vae.bridge_service.audio.path.Direction` hands
out one frame per tick of whichever clock drives the session (the open-mic
clock in real time, ``lockstep`` on the virtual clock), and applies the
scenario's noise to it; the line follows the noise on the same frame, so it
holds for every user bot (gRPC or connector) and on both clocks. The frames
are recorded as ``to_agent`` after it; ``user`` stays what the bot sent.

In order, as a phone call degrades a caller's voice (docs/scenarios.md, "The line"):

1. ``gain_db``, then hard ``clipping`` at a level in dBFS (the caller's handset);
2. ``codec: mulaw8k``: resampled to 8 kHz (a streaming polyphase FIR
   resampler, band-limited below 4 kHz), mu-law companded (G.711: encoded to
   8 bits and decoded), and resampled back to the agent's rate. FIR filters
   give one sample out per sample in, so every frame is full and the agent
   hears the caller a fixed 10 ms later (at 16 kHz). Not soxr's streams here:
   fed 16 ms frames they answer in blocks of about 100 ms, which would leave
   gaps or add that much delay;
3. 20 ms packets on a position grid from the session's first frame: each lost
   with ``packet_loss`` (independently, or in bursts of mean
   ``packet_loss_burst`` packets: a two-state Gilbert model with the same
   average rate), or late by more than the far end's 40 ms playout buffer
   with a delay variation of ``jitter_ms`` (the delay of a packet is
   ``|N(0, jitter_ms)|``). A lost or late packet is played as silence (zeros).

Everything random draws from one generator seeded by the session's seed
(``SessionStart.seed``: the run's ``--seed`` and the scenario name), so the
same seed gives the same ``to_agent`` sample for sample.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from vae.recordings.scenarios.line import (
    PACKET_MS,
    PLAYOUT_MS,
    LineConditions,
    line_from_dict,
    merge,
)
from vae.recordings.scenarios.model import NoiseConfig, Scenario

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


class _Narrowband:
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


class LineTransform:
    """One session's line on frames at the agent's receive rate (PCM16 LE in, out)."""

    def __init__(self, line: LineConditions, rate: int, seed: int) -> None:
        self.line = line
        self.rate = rate
        self._rng = np.random.default_rng([seed, 0x11E])
        self._gain = 10 ** (line.gain_db / 20)
        self._clip = None if line.clipping is None else 10 ** (line.clipping / 20) * 32767
        self._codec = _Narrowband(rate) if line.codec == "mulaw8k" else None
        self.packet_samples = rate * PACKET_MS // 1000
        self._position = 0
        self._packet = -1
        self._packet_lost = False
        self._bad = False  # the Gilbert model's state (in a burst)
        #: Packets decided so far, and how many of them were lost or late.
        self.packets = 0
        self.lost = 0
        self.late = 0

    def apply(self, pcm: bytes) -> bytes:
        """The frame as the agent receives it over this line."""
        x = np.frombuffer(pcm, dtype="<i2").astype(np.float64)
        if self._gain != 1.0:
            x = x * self._gain
        if self._clip is not None:
            x = np.clip(x, -self._clip, self._clip)
        if self._codec is not None:
            x = self._codec.process(x)
        if self.line.packet_loss > 0 or self.line.jitter_ms > 0:
            x = self._packets(x)
        out: bytes = np.clip(np.rint(x), -32768, 32767).astype("<i2").tobytes()
        return out

    def _packets(self, x: np.ndarray) -> np.ndarray:
        """Zero the lost and late packets' samples in ``x`` (apply's own array: in place)."""
        start = self._position
        end = start + len(x)
        pos = start
        while pos < end:
            packet = pos // self.packet_samples
            if packet != self._packet:
                self._packet = packet
                self._packet_lost = self._decide()
            stop = min(end, (packet + 1) * self.packet_samples)
            if self._packet_lost:
                x[pos - start : stop - start] = 0.0
            pos = stop
        self._position = end
        return x

    def _decide(self) -> bool:
        """Whether the next packet is lost or late: a loss draw, then (with jitter) a delay."""
        line = self.line
        p = line.packet_loss
        u = float(self._rng.random())
        if line.packet_loss_burst is None or p in (0.0, 1.0):
            lost = u < p
        else:
            leave = 1.0 / line.packet_loss_burst  # bad -> good
            enter = p * leave / (1.0 - p)  # good -> bad: the stationary rate is p
            self._bad = u >= leave if self._bad else u < enter
            lost = self._bad
        delay = abs(float(self._rng.normal(0.0, line.jitter_ms))) if line.jitter_ms > 0 else 0.0
        late = not lost and delay > PLAYOUT_MS
        self.packets += 1
        self.lost += lost
        self.late += late
        return lost or late

    def stats(self) -> dict[str, int]:
        return {"packets": self.packets, "lost": self.lost, "late": self.late}


def session_line(
    scenario: Scenario, overrides: dict[str, Any]
) -> tuple[LineConditions | None, NoiseConfig | None]:
    """A session's line (the scenario's ``user.line`` with the run's ``--line`` over it).

    None when neither sets one. The line's ``white_noise_db`` replaces the
    white-noise level of the scenario's noise (its noise files stay); the
    noise returned is the one to add.
    """
    stated = scenario.user.extras.get("line")
    if stated is None and not overrides:
        return None, scenario.noise
    line = merge(line_from_dict(stated), overrides)
    noise = scenario.noise
    if line.white_noise_db is not None:
        noise = replace(noise or NoiseConfig(), white_noise_db=line.white_noise_db)
    return line, noise


def check_lines(scenarios: list[Scenario], overrides: dict[str, Any]) -> None:
    """Refuse a run whose ``--line`` makes a scenario's line impossible (ValueError naming it)."""
    if not overrides:
        return
    for sc in scenarios:
        try:
            session_line(sc, overrides)
        except ValueError as exc:
            raise ValueError(f"options.line with scenario {sc.name!r}: {exc}") from None
