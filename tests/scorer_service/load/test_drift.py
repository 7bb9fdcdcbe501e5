"""Drift: the least-squares slope in ms per hour, and whether its 95 % CI excludes 0."""

from __future__ import annotations

import random

import pytest

from vae.scorer_service.load.drift import drift, t95


def test_t_quantiles_match_the_table_and_tend_to_the_normal() -> None:
    assert t95(1) == 12.706 and t95(10) == 2.228 and t95(30) == 2.042
    assert 2.086 > t95(22) > 2.060
    assert t95(10_000) == pytest.approx(1.960, abs=0.001)
    with pytest.raises(ValueError):
        t95(0)


def test_a_steady_rise_is_a_significant_positive_drift() -> None:
    rng = random.Random(1)
    points = [(t, 800 + 0.5 * t + rng.gauss(0, 20)) for t in range(0, 600, 10)]
    d = drift(points)
    assert d is not None and d.significant
    assert d.drift_ms_per_hour == pytest.approx(0.5 * 3600, rel=0.25)
    assert d.ci_low > 0 and d.ci_low < d.drift_ms_per_hour < d.ci_high


def test_noise_alone_is_not_significant_and_constant_latency_has_no_trend() -> None:
    rng = random.Random(2)
    d = drift([(t, 800 + rng.gauss(0, 50)) for t in range(0, 600, 10)])
    assert d is not None and not d.significant and d.ci_low < 0 < d.ci_high
    flat = drift([(t, 748.0) for t in range(0, 60, 5)])
    assert flat is not None and not flat.significant and flat.drift_ms_per_hour == 0


def test_too_few_points_or_one_instant_give_no_drift() -> None:
    assert drift([(0.0, 1.0), (1.0, 2.0)]) is None
    assert drift([(5.0, 1.0), (5.0, 2.0), (5.0, 3.0)]) is None
