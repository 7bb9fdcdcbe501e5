"""Latency drift over a soak: the trend in ms per hour, and whether it is more than noise.

Every agent reply of the soak is one point (its time on the soak's clock,
its latency); the drift is the least-squares slope through them, in
milliseconds of latency per hour of soak, with a 95 % confidence interval
from Student's t on the slope's standard error. The drift is *significant*
when that interval excludes 0: the agent got slower (or faster) by more
than its replies scatter. Pooling every reply, not window percentiles,
keeps the estimate's degrees of freedom honest and its noise visible. The
points of one call are not independent, so the interval is somewhat
narrow when calls differ a lot; windows (:mod:`vae.scorer_service.load.soak`)
show the shape beside the one number.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

#: Two-sided 95 % quantiles of Student's t by degrees of freedom; between rows the
#: quantile is interpolated in 1/df, beyond the last it tends to the normal 1.960.
_T95 = (
    (1, 12.706), (2, 4.303), (3, 3.182), (4, 2.776), (5, 2.571), (6, 2.447), (7, 2.365),
    (8, 2.306), (9, 2.262), (10, 2.228), (12, 2.179), (15, 2.131), (20, 2.086),
    (25, 2.060), (30, 2.042), (40, 2.021), (60, 2.000), (120, 1.980),
)  # fmt: skip
_Z95 = 1.960


def t95(df: int) -> float:
    """The two-sided 95 % quantile of Student's t with ``df`` degrees of freedom."""
    if df < 1:
        raise ValueError("at least one degree of freedom")
    rows = [*_T95, (math.inf, _Z95)]
    for (d0, t0), (d1, t1) in itertools.pairwise(rows):
        if df == d0:
            return t0
        if d0 < df < d1:
            w = (1 / d0 - 1 / df) / (1 / d0 - (0 if d1 == math.inf else 1 / d1))
            return t0 + (t1 - t0) * w
    return _Z95  # pragma: no cover - the last row is infinite


@dataclass(frozen=True)
class Drift:
    drift_ms_per_hour: float
    ci_low: float
    ci_high: float
    significant: bool
    samples: int
    #: The fitted latency at the soak's start, ms (to draw the trend).
    intercept_ms: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "drift_ms_per_hour": round(self.drift_ms_per_hour, 1),
            "ci95_ms_per_hour": [round(self.ci_low, 1), round(self.ci_high, 1)],
            "significant": self.significant,
            "samples": self.samples,
        }


def drift(points: Sequence[tuple[float, float]]) -> Drift | None:
    """The trend of ``points`` (seconds into the soak, latency in ms); None below 3 points
    or when they all fall at one time (no trend can be fitted)."""
    n = len(points)
    if n < 3:
        return None
    ts = [t / 3600.0 for t, _ in points]
    ys = [y for _, y in points]
    t_mean, y_mean = sum(ts) / n, sum(ys) / n
    sxx = sum((t - t_mean) ** 2 for t in ts)
    if sxx <= 0:
        return None
    sxy = sum((t - t_mean) * (y - y_mean) for t, y in zip(ts, ys, strict=True))
    slope = sxy / sxx
    intercept = y_mean - slope * t_mean
    residual = sum((y - intercept - slope * t) ** 2 for t, y in zip(ts, ys, strict=True))
    se = math.sqrt(residual / (n - 2) / sxx)
    half = t95(n - 2) * se
    low, high = slope - half, slope + half
    # Identical latencies fit exactly: a slope of float rounding is no trend.
    significant = (low > 0 or high < 0) and abs(slope) > 1e-6
    return Drift(slope, low, high, significant, n, intercept)
