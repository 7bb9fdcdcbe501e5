"""The line transform on its own: loss rates and bursts over many packets, mu-law, parsing."""

from __future__ import annotations

import numpy as np
import pytest

from bridge_service.line import LineTransform, mulaw_roundtrip
from recordings.scenarios.line import LineConditions, describe, line_from_dict, merge, parse_option

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


def test_a_clean_line_is_clean_and_described() -> None:
    assert LineConditions().clean
    assert describe(None) == "clean"
    line = {"codec": "mulaw8k", "packet_loss": 0.1, "packet_loss_burst": 3, "jitter_ms": 20}
    assert describe(line) == "mulaw8k loss 10% (burst 3) jitter 20ms"


def test_run_option_text_and_merge() -> None:
    assert parse_option("codec=mulaw8k, packet_loss=0.1,clipping=none") == {
        "codec": "mulaw8k", "packet_loss": 0.1, "clipping": None,
    }  # fmt: skip
    merged = merge(LineConditions(codec="mulaw8k", gain_db=3), {"packet_loss": 0.2})
    assert (merged.codec, merged.gain_db, merged.packet_loss) == ("mulaw8k", 3, 0.2)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("packet_loss=1.5", "packet_loss: must be 0..1, got 1.5"),
        ("packet_loss=-0.1", "packet_loss: must be 0..1"),
        ("codec=gsm", "codec: 'gsm' is not one of: pcm, mulaw8k"),
        ("loss=0.1", "loss: unknown field"),
        ("packet_loss", "expected FIELD=VALUE"),
        ("jitter_ms=fast", "jitter_ms: 'fast' is not a number"),
    ],
)
def test_bad_run_options_name_the_field(text: str, problem: str) -> None:
    with pytest.raises(ValueError) as caught:
        parse_option(text)
    assert problem in str(caught.value)


def test_a_burst_too_short_for_the_rate_is_refused() -> None:
    with pytest.raises(ValueError, match="packet_loss_burst"):
        line_from_dict({"packet_loss": 0.9, "packet_loss_burst": 2})
