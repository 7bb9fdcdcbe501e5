"""The line transform on its own: loss rates and bursts over many packets, jitter, mu-law."""

from __future__ import annotations

import numpy as np

from vae.bridge_service.audio.line import LineTransform
from vae.bridge_service.audio.narrowband import lowpass_taps, mulaw_roundtrip
from vae.recordings.scenarios.line import LineConditions

RATE = 16000
FRAME = RATE * 16 // 1000  # frames of 16 ms over packets of 20 ms: the grid is the line's


def _run(line: LineConditions, seconds: float, seed: int = 1) -> tuple[np.ndarray, LineTransform]:
    t = LineTransform(line, RATE, seed)
    loud = (np.ones(FRAME) * 1000).astype("<i2").tobytes()
    out = b"".join(t.apply(loud) for _ in range(int(seconds * 1000 / 16)))
    return np.frombuffer(out, dtype="<i2"), t


def _lost(samples: np.ndarray) -> np.ndarray:
    n = len(samples) // 320
    return np.all(samples[: n * 320].reshape(n, 320) == 0, axis=1)


def test_independent_loss_rate_over_many_packets() -> None:
    out, t = _run(LineConditions(packet_loss=0.1), 400)  # 20 000 packets
    lost = _lost(out)
    assert abs(lost.mean() - 0.1) < 0.01  # sigma is 0.002
    assert abs(t.lost - int(lost.sum())) <= 1


def test_bursty_loss_keeps_the_rate_and_makes_bursts_of_the_mean_length() -> None:
    out, _ = _run(LineConditions(packet_loss=0.1, packet_loss_burst=4), 400)
    lost = _lost(out)
    assert abs(lost.mean() - 0.1) < 0.02
    edges = np.diff(np.concatenate([[0], lost.astype(int), [0]]))
    lengths = np.flatnonzero(edges == -1) - np.flatnonzero(edges == 1)
    assert 3.3 < lengths.mean() < 4.7


def test_jitter_beyond_the_playout_buffer_leaves_gaps() -> None:
    out, t = _run(LineConditions(jitter_ms=30), 100)
    # |N(0, 30 ms)| > 40 ms: 18 % of packets.
    assert 0.15 < _lost(out).mean() < 0.21 and t.late == int(_lost(out).sum())
    out, t = _run(LineConditions(jitter_ms=5), 20)
    assert not _lost(out).any() and t.late == 0


def test_mulaw_roundtrip_error_is_small_relative_to_the_level() -> None:
    x = np.random.default_rng(2).normal(0, 3000, 8000)
    err = mulaw_roundtrip(x) - x
    snr = 10 * np.log10(np.mean(x**2) / np.mean(err**2))
    assert 30 < snr < 45  # G.711 is about 38 dB


def _mulaw_by_formula(samples: np.ndarray) -> np.ndarray:
    """G.711 mu-law evaluated per sample: the definition the table must match."""
    mu = 255.0
    x = np.clip(samples / 32768.0, -1.0, 1.0)
    code = np.round(np.sign(x) * np.log1p(mu * np.abs(x)) / np.log1p(mu) * 127.0)
    z = code / 127.0
    out: np.ndarray = np.sign(z) * ((1.0 + mu) ** np.abs(z) - 1.0) / mu * 32768.0
    return out


def test_the_mulaw_table_gives_the_formulas_levels() -> None:
    rng = np.random.default_rng(4)
    x = np.concatenate([rng.normal(0, level, 200_000) for level in (100, 3000, 20000)])
    x = np.concatenate([x, [0.0, 32767.0, -32768.0, 40000.0, -1e-9]])
    assert np.array_equal(mulaw_roundtrip(x), _mulaw_by_formula(x))


def test_the_polyphase_narrowband_line_equals_filtering_at_the_full_rate() -> None:
    """Streamed in uneven chunks, the line's mulaw8k gives the samples of the textbook
    chain on the whole signal at once: low-pass at the full rate, keep every k-th
    sample, mu-law, put k - 1 zeros between them, low-pass again (times k)."""
    rng = np.random.default_rng(6)
    for rate in (16000, 24000, 48000):
        k = rate // 8000
        speech = np.clip(rng.normal(0, 3000, rate * 3), -32768, 32767).astype("<i2")
        taps = lowpass_taps(rate)
        down = np.convolve(speech.astype(np.float64), taps)[: len(speech)]
        kept = np.zeros(len(speech))
        kept[::k] = _mulaw_by_formula(down[::k])
        want = np.clip(np.rint(np.convolve(kept, taps * k)[: len(speech)]), -32768, 32767)
        line = LineTransform(LineConditions(codec="mulaw8k"), rate, 1)
        got, pos = [], 0
        while pos < len(speech):
            n = int(rng.choice([1, 7, rate * 16 // 1000, rate * 20 // 1000, rate * 40 // 1000]))
            got.append(np.frombuffer(line.apply(speech[pos : pos + n].tobytes()), dtype="<i2"))
            pos += n
        assert np.array_equal(np.concatenate(got), want.astype("<i2")), rate
