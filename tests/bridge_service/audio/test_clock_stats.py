"""Clock statistics: bounded histogram percentiles and arrival gaps beyond real time."""

from __future__ import annotations

from vae.bridge_service.audio.clock_stats import ArrivalGaps, LatenessHistogram


def test_lateness_percentiles_and_maximum() -> None:
    h = LatenessHistogram()
    assert h.summary() == {"ticks": 0, "p50_ms": 0.0, "p99_ms": 0.0, "max_ms": 0.0}
    for _ in range(98):
        h.add(250_000)  # 0.25 ms
    h.add(12_300_000)  # 12.3 ms
    h.add(2_500_000_000)  # 2.5 s: the overflow bin
    s = h.summary()
    assert s["ticks"] == 100
    assert s["p50_ms"] == 0.3  # the upper edge of the 0.2-0.3 ms bin
    assert s["p99_ms"] == 13.0  # the 12-13 ms bin
    assert s["max_ms"] == 2500.0
    h.add(-5)  # a tick run before its deadline counts as on time
    assert h.count == 101


def test_arrival_gaps_measure_delay_beyond_the_previous_chunk() -> None:
    g = ArrivalGaps()
    t = 1_000_000_000
    for i in range(5):  # 20 ms chunks, on time (1 ms jitter)
        g.add(t + i * 20_000_000 + (i % 2) * 1_000_000, 320, 16000)
    assert g.max_ns == 1_000_000
    g.add(t + 4 * 20_000_000 + 20_000_000 + 45_000_000, 320, 16000)  # 45 ms late
    assert g.max_ns == 45_000_000
    g.add(t + 200_000_000, 320, 16000)  # a burst after a stall is early, not a gap
    assert g.max_ns == 45_000_000 and g.chunks == 7
