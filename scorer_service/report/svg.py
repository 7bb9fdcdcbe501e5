"""Small SVG plots for the HTML report: rate bar charts and a histogram.

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

from vae.scorer_service.report.style import RATE_BANDS, USER, rate_colour


def _f(x: float) -> str:
    return f"{x:.1f}"


@dataclass(frozen=True)
class Bar:
    label: str
    #: A rate in 0..1, or None when nothing was decided.
    value: float | None
    note: str = ""


#: Approximate width of one character of the 11 px chart font, for layout.
CHAR_W = 6.6


def text_width(text: str) -> float:
    return len(text) * CHAR_W


def bar_chart(
    bars: Sequence[Bar], *, title: str, plot_w: int = 260, css_class: str = "chart"
) -> str:
    """Horizontal bars of rates (0..1), one per label, coloured by value, with the
    percentage and note printed after the bar. The SVG is as wide as its longest
    label and note, so no text is ever clipped."""
    row_h, top = 24, 28
    label_w = int(max([text_width(b.label) for b in bars] or [40.0]) + 12)
    note_w = int(max([text_width(f"100% {b.note}") for b in bars] or [40.0]) + 12)
    width = max(label_w + plot_w + note_w, int(text_width(title) * 1.2) + 8)
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
            parts.append(
                f'<rect class="bar" x="{label_w}" y="{y + 3}" width="{_f(plot_w * v)}" '
                f'height="{row_h - 8}" fill="{rate_colour(v)}"><title>{escape(bar.label)}: '
                f"{v:.1%} {escape(bar.note)}</title></rect>"
            )
            text = f"{v:.1%}"
        note = f" {bar.note}" if bar.note else ""
        parts.append(f'<text x="{label_w + plot_w + 6}" y="{y + 15}">{escape(text + note)}</text>')
    parts.append("</svg>")
    return "".join(parts)


def rate_legend() -> str:
    """The legend of the bar colours (HTML)."""
    items = "".join(
        f'<span><i class="sw" style="background:{c}"></i>{escape(t)}</span>'
        for _, c, t in RATE_BANDS
    )
    return f'<div class="legend">Bars: {items}<span>(n/a: nothing decided)</span></div>'


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
