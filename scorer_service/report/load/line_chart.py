"""Line charts for the load report: series over concurrency or time, with marked x positions.

In the manner of :mod:`vae.scorer_service.report.svg`: plain markup, no
script, every text escaped, every number formatted with fixed precision.
Each point is a ``circle.pt`` carrying its series and values in ``data-*``
attributes and a ``<title>`` (hover text), each marker (the knee, a
harness-limited step) a ``line.marker`` with ``data-x``, so a reader sees
the figure without JavaScript and a test can find what it shows.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from html import escape

from vae.scorer_service.report.svg import text_width


@dataclass(frozen=True)
class Series:
    name: str
    colour: str
    #: (x, y); a None y breaks the line there.
    points: Sequence[tuple[float, float | None]]
    dashed: bool = False


@dataclass(frozen=True)
class Marker:
    """A vertical line at ``x`` with a label above the plot."""

    x: float
    label: str
    css_class: str
    colour: str


@dataclass(frozen=True)
class Threshold:
    """A horizontal dashed line at ``y`` with a label at its right end."""

    y: float
    label: str
    colour: str = "#555"


@dataclass(frozen=True)
class Axes:
    x_label: str
    y_label: str
    x_text: Callable[[float], str] = field(default=lambda x: f"{x:g}")
    y_text: Callable[[float], str] = field(default=lambda y: f"{y:g}")
    #: Tick positions on x (default: every point's x).
    x_ticks: Sequence[float] | None = None
    #: Fixed y range (default: 0 to the highest value, thresholds included).
    y_range: tuple[float, float] | None = None


def _f(x: float) -> str:
    return f"{x:.1f}"


def _nice_max(value: float) -> float:
    if value <= 0:
        return 1.0
    exp = 10.0 ** math.floor(math.log10(value))
    for step in (1.0, 2.0, 2.5, 5.0, 10.0):
        if value <= step * exp:
            return step * exp
    return 10.0 * exp  # pragma: no cover


def line_chart(
    series: Sequence[Series],
    *,
    title: str,
    axes: Axes,
    markers: Sequence[Marker] = (),
    threshold: Threshold | None = None,
    css_class: str = "chart line",
    width: int = 600,
    height: int = 280,
) -> str:
    """An SVG line chart of ``series`` (see the module)."""
    left, right, top, bottom = 58, 120, 58, 42
    plot_w, plot_h = width - left - right, height - top - bottom
    xs = [x for s in series for x, _ in s.points] + [m.x for m in markers]
    ys = [y for s in series for _, y in s.points if y is not None]
    if threshold is not None:
        ys.append(threshold.y)
    x_lo, x_hi = (min(xs), max(xs)) if xs else (0.0, 1.0)
    if math.isclose(x_lo, x_hi):
        x_lo, x_hi = x_lo - 1, x_hi + 1
    y_lo, y_hi = axes.y_range or (0.0, _nice_max(max(ys, default=1.0) * 1.08))

    def px(x: float) -> float:
        return left + (x - x_lo) / (x_hi - x_lo) * plot_w

    def py(y: float) -> float:
        y = min(max(y, y_lo), y_hi)
        return top + plot_h - (y - y_lo) / (y_hi - y_lo) * plot_h

    parts = [
        f'<svg class="{escape(css_class)}" xmlns="http://www.w3.org/2000/svg" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="{escape(title)}" data-x-min="{x_lo:g}" data-x-max="{x_hi:g}" '
        f'data-left="{left}" data-width="{plot_w}">',
        f'<text x="4" y="16" class="title">{escape(title)}</text>',
        f'<line x1="{left}" y1="{top + plot_h}" x2="{left + plot_w}" y2="{top + plot_h}" '
        f'stroke="#555"/>',
        f'<line x1="{left}" y1="{top}" x2="{left}" y2="{top + plot_h}" stroke="#555"/>',
    ]
    for i in range(5):
        y = y_lo + (y_hi - y_lo) * i / 4
        parts.append(
            f'<line x1="{left}" y1="{_f(py(y))}" x2="{left + plot_w}" y2="{_f(py(y))}" '
            f'stroke="#eee"/><text x="{left - 4}" y="{_f(py(y) + 4)}" text-anchor="end">'
            f"{escape(axes.y_text(y))}</text>"
        )
    ticks = axes.x_ticks if axes.x_ticks is not None else sorted(set(xs))
    for x in ticks:
        parts.append(
            f'<text class="xtick" x="{_f(px(x))}" y="{top + plot_h + 15}" text-anchor="middle">'
            f"{escape(axes.x_text(x))}</text>"
        )
    parts.append(
        f'<text x="{left + plot_w / 2:.1f}" y="{height - 6}" text-anchor="middle">'
        f"{escape(axes.x_label)}</text>"
        f'<text x="12" y="{top + plot_h / 2:.1f}" text-anchor="middle" '
        f'transform="rotate(-90 12 {top + plot_h / 2:.1f})">{escape(axes.y_label)}</text>'
    )
    if threshold is not None:
        ty = _f(py(threshold.y))
        parts.append(
            f'<line class="threshold" x1="{left}" y1="{ty}" x2="{left + plot_w}" y2="{ty}" '
            f'stroke="{threshold.colour}" stroke-dasharray="6 4"/>'
            f'<text x="{left + plot_w + 4}" y="{_f(py(threshold.y) + 4)}">'
            f"{escape(threshold.label)}</text>"
        )
    for m in markers:
        mx = _f(px(m.x))
        parts.append(
            f'<line class="marker {escape(m.css_class)}" data-x="{m.x:g}" x1="{mx}" '
            f'y1="{top - 4}" x2="{mx}" y2="{top + plot_h}" stroke="{m.colour}" stroke-width="2" '
            f'stroke-dasharray="4 3"/><text class="marker-label {escape(m.css_class)}" '
            f'x="{mx}" y="{top - 8}" text-anchor="middle" fill="{m.colour}">'
            f"{escape(m.label)}</text>"
        )
    for k, s in enumerate(series):
        runs: list[list[str]] = [[]]
        for vx, vy in s.points:
            if vy is None:
                runs.append([])
            else:
                runs[-1].append(f"{_f(px(vx))},{_f(py(vy))}")
        dash = ' stroke-dasharray="5 4"' if s.dashed else ""
        for run in runs:
            if len(run) > 1:
                parts.append(
                    f'<polyline fill="none" stroke="{s.colour}" stroke-width="2"{dash} '
                    f'points="{" ".join(run)}"/>'
                )
        for vx, vy in s.points:
            if vy is None:
                continue
            parts.append(
                f'<circle class="pt" data-series="{escape(s.name)}" data-x="{vx:g}" '
                f'data-y="{vy:.3f}" cx="{_f(px(vx))}" cy="{_f(py(vy))}" r="3.5" '
                f'fill="{s.colour}"><title>{escape(s.name)} at {escape(axes.x_text(vx))}: '
                f"{escape(axes.y_text(vy))}</title></circle>"
            )
        lx = left + sum(text_width(x.name) + 34 for x in series[:k])
        parts.append(
            f'<line x1="{_f(lx)}" y1="30" x2="{_f(lx + 16)}" y2="30" stroke="{s.colour}" '
            f'stroke-width="2"{dash}/><text x="{_f(lx + 20)}" y="34">{escape(s.name)}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)
