"""Small SVG plots for the HTML report: bar charts, a histogram, a timeline.

Hand-written rather than a plotting library so the report stays one
self-contained file with no scripts or fonts to fetch, and so every figure is
plain markup a test can inspect. All text is escaped; all numbers are
formatted with fixed precision so the output is deterministic.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

PASS = "#2e7d32"
FAIL = "#c62828"
NEUTRAL = "#9e9e9e"
USER = "#1565c0"
AGENT = "#ef6c00"
TOOL = "#6a1b9a"
OVERLAP = "#d81b60"


def _f(x: float) -> str:
    return f"{x:.1f}"


@dataclass(frozen=True)
class Bar:
    label: str
    #: A rate in 0..1, or None when nothing was decided.
    value: float | None
    note: str = ""


def bar_chart(
    bars: Sequence[Bar], *, title: str, width: int = 520, css_class: str = "chart"
) -> str:
    """Horizontal bars of rates (0..1), one per label, with the percentage printed."""
    label_w, row_h, top = 190, 24, 28
    plot_w = width - label_w - 70
    height = top + row_h * max(1, len(bars)) + 8
    parts = [
        f'<svg class="{escape(css_class)}" xmlns="http://www.w3.org/2000/svg" '
        f'width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="{escape(title)}">',
        f'<text x="4" y="16" class="title">{escape(title)}</text>',
    ]
    for i, bar in enumerate(bars):
        y = top + i * row_h
        parts.append(
            f'<text x="{label_w - 6}" y="{y + 15}" text-anchor="end">{escape(bar.label)}</text>'
        )
        parts.append(
            f'<rect x="{label_w}" y="{y + 3}" width="{plot_w}" height="{row_h - 8}" '
            f'fill="#eeeeee"/>'
        )
        if bar.value is None:
            text = "n/a"
        else:
            v = min(1.0, max(0.0, bar.value))
            color = PASS if v >= 0.5 else FAIL
            parts.append(
                f'<rect class="bar" x="{label_w}" y="{y + 3}" width="{_f(plot_w * v)}" '
                f'height="{row_h - 8}" fill="{color}"><title>{escape(bar.label)}: '
                f"{v:.0%} {escape(bar.note)}</title></rect>"
            )
            text = f"{v:.0%}"
        note = f" {bar.note}" if bar.note else ""
        parts.append(f'<text x="{label_w + plot_w + 6}" y="{y + 15}">{escape(text + note)}</text>')
    parts.append("</svg>")
    return "".join(parts)


def histogram_bins(values: Sequence[float], bins: int = 12) -> tuple[list[int], float, float]:
    """Counts per equal-width bin over [lo, hi]; the last bin includes hi."""
    if not values:
        return [0] * bins, 0.0, 1.0
    lo, hi = min(values), max(values)
    if math.isclose(lo, hi):
        lo, hi = lo - 0.5, hi + 0.5
    counts = [0] * bins
    width = (hi - lo) / bins
    for v in values:
        counts[min(bins - 1, int((v - lo) / width))] += 1
    return counts, lo, hi


def histogram(values: Sequence[float], *, title: str, unit: str = "s", bins: int = 12) -> str:
    """A histogram of ``values`` with its range on the axis and the count over each bar."""
    width, height, left, bottom, top = 520, 200, 36, 30, 26
    counts, lo, hi = histogram_bins(values, bins)
    plot_w, plot_h = width - left - 10, height - top - bottom
    peak = max(counts) or 1
    bar_w = plot_w / bins
    parts = [
        f'<svg class="chart histogram" xmlns="http://www.w3.org/2000/svg" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="{escape(title)}">',
        f'<text x="4" y="16" class="title">{escape(title)}</text>',
        f'<line x1="{left}" y1="{top + plot_h}" x2="{left + plot_w}" y2="{top + plot_h}" '
        f'stroke="#555"/>',
    ]
    for i, c in enumerate(counts):
        h = plot_h * c / peak
        x = left + i * bar_w
        parts.append(
            f'<rect class="bar" x="{_f(x + 1)}" y="{_f(top + plot_h - h)}" '
            f'width="{_f(bar_w - 2)}" height="{_f(h)}" fill="{USER}">'
            f"<title>{lo + i * (hi - lo) / bins:.2f}–{lo + (i + 1) * (hi - lo) / bins:.2f} "
            f"{escape(unit)}: {c}</title></rect>"
        )
        if c:
            parts.append(
                f'<text x="{_f(x + bar_w / 2)}" y="{_f(top + plot_h - h - 3)}" '
                f'text-anchor="middle">{c}</text>'
            )
    parts.append(f'<text x="{left}" y="{height - 10}">{lo:.2f} {escape(unit)}</text>')
    parts.append(
        f'<text x="{left + plot_w}" y="{height - 10}" text-anchor="end">'
        f"{hi:.2f} {escape(unit)}</text>"
    )
    if not values:
        parts.append(f'<text x="{left + 10}" y="{top + 30}">no responses measured</text>')
    parts.append("</svg>")
    return "".join(parts)


@dataclass(frozen=True)
class Marker:
    t_s: float
    kind: str  # "tool", "barge_in", "interruption", "end"
    label: str


def timeline(
    duration_s: float,
    user: Sequence[tuple[float, float]],
    agent: Sequence[tuple[float, float]],
    markers: Sequence[Marker] = (),
    *,
    width: int = 900,
) -> str:
    """Both speakers' speech as lanes on one time axis, with tool calls and
    interruptions marked and overlapping speech shaded."""
    left, lane_h, top = 60, 22, 8
    plot_w = width - left - 10
    height = top + lane_h * 2 + 46
    scale = plot_w / max(duration_s, 1e-6)

    def x(t: float) -> str:
        return _f(left + min(max(t, 0.0), duration_s) * scale)

    parts = [
        f'<svg class="timeline" xmlns="http://www.w3.org/2000/svg" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="speech timeline">',
    ]
    for row, (name, spans, color) in enumerate((("user", user, USER), ("agent", agent, AGENT))):
        y = top + row * lane_h
        parts.append(f'<text x="4" y="{y + 15}">{name}</text>')
        for s, e in spans:
            parts.append(
                f'<rect class="speech {name}" x="{x(s)}" y="{y + 3}" '
                f'width="{_f(max(1.0, (e - s) * scale))}" height="{lane_h - 6}" fill="{color}">'
                f"<title>{name} {s:.2f}–{e:.2f} s</title></rect>"
            )
    for s, e in _overlaps(user, agent):
        parts.append(
            f'<rect class="overlap" x="{x(s)}" y="{top}" width="{_f(max(1.0, (e - s) * scale))}" '
            f'height="{lane_h * 2}" fill="{OVERLAP}" fill-opacity="0.25">'
            f"<title>overlap {s:.2f}–{e:.2f} s</title></rect>"
        )
    axis_y = top + lane_h * 2 + 6
    parts.append(
        f'<line x1="{left}" y1="{axis_y}" x2="{left + plot_w}" y2="{axis_y}" stroke="#555"/>'
    )
    step = _tick_step(duration_s)
    t = 0.0
    while t <= duration_s + 1e-9:
        parts.append(f'<text x="{x(t)}" y="{axis_y + 14}" text-anchor="middle">{t:g}s</text>')
        t += step
    colors = {"tool": TOOL, "barge_in": OVERLAP, "interruption": FAIL, "end": "#333"}
    for m in markers:
        color = colors.get(m.kind, "#333")
        parts.append(
            f'<g class="marker {escape(m.kind)}"><line x1="{x(m.t_s)}" y1="{top}" '
            f'x2="{x(m.t_s)}" y2="{axis_y + 20}" stroke="{color}" stroke-width="2"/>'
            f'<circle cx="{x(m.t_s)}" cy="{axis_y + 24}" r="4" fill="{color}"/>'
            f"<title>{m.t_s:.2f} s {escape(m.kind)}: {escape(m.label)}</title></g>"
        )
    parts.append("</svg>")
    return "".join(parts)


def _overlaps(
    a: Sequence[tuple[float, float]], b: Sequence[tuple[float, float]]
) -> list[tuple[float, float]]:
    out = []
    for s1, e1 in a:
        for s2, e2 in b:
            s, e = max(s1, s2), min(e1, e2)
            if e > s:
                out.append((s, e))
    return out


def _tick_step(duration_s: float) -> float:
    for step in (1, 2, 5, 10, 15, 30, 60, 120, 300):
        if duration_s / step <= 12:
            return float(step)
    return 600.0
