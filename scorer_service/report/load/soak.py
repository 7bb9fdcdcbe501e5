"""The soak's part of the load report: p95, success and failures per window, the drift.

Markup and inline SVG like the rest of the report
(:mod:`vae.scorer_service.report.load.page`): the windows over the soak's
clock (minutes once the soak is three or more), the least-squares trend of
every reply as a dashed line, the drift with its 95 % interval and whether
it is significant, and the windows' table.
"""

from __future__ import annotations

from html import escape

from vae.scorer_service.load.result import SoakResult
from vae.scorer_service.report.load.line_chart import Axes, Series, line_chart
from vae.scorer_service.report.style import AGENT, BAD, GOOD, NEUTRAL


def _ms(value: float | None) -> str:
    return "–" if value is None else f"{value:.0f}"


def _rate(value: float | None) -> str:
    return "–" if value is None else f"{value:.1%}"


def soak_section(soak: SoakResult) -> str:
    s = soak.soak
    mid = [(w.start_s + w.end_s) / 2 for w in s.windows]
    minutes = s.duration_s >= 180
    unit, div = ("min", 60.0) if minutes else ("s", 1.0)
    axes = Axes(
        f"soak time, {unit}",
        "p95 latency, ms",
        x_text=lambda x: f"{x / div:.1f}",
        y_text=lambda y: f"{y:.0f}",
    )
    series = [
        Series(
            "p95 per window", AGENT, [(m, w.p95_ms) for m, w in zip(mid, s.windows, strict=True)]
        )
    ]
    d = s.drift
    if d is not None:
        ends = (0.0, s.windows[-1].end_s if s.windows else s.duration_s)
        series.append(
            Series(
                "trend (all replies)",
                NEUTRAL,
                [(t, d.intercept_ms + d.drift_ms_per_hour * t / 3600) for t in ends],
                dashed=True,
            )
        )
    p95 = line_chart(series, title="Latency over the soak", axes=axes, css_class="chart line soak")
    rates = line_chart(
        [
            Series(
                "success",
                GOOD,
                [
                    (m, None if w.figures.success_rate is None else 100 * w.figures.success_rate)
                    for m, w in zip(mid, s.windows, strict=True)
                ],
            ),
            Series(
                "failures (calls)",
                BAD,
                [(m, float(w.failures)) for m, w in zip(mid, s.windows, strict=True)],
            ),
        ],
        title="Success rate and failures over the soak",
        axes=Axes(
            f"soak time, {unit}",
            "success, % / failures",
            x_text=lambda x: f"{x / div:.1f}",
            y_text=lambda y: f"{y:.0f}",
            y_range=(0.0, max([100.0] + [float(w.failures) for w in s.windows])),
        ),
        css_class="chart line soak-success",
    )
    if d is None:
        drift = "drift: too few replies to fit a trend"
    else:
        verdict = "significant" if d.significant else "not significant (within noise)"
        drift = (
            f"drift {d.drift_ms_per_hour:+.0f} ms per hour (95% CI {d.ci_low:+.0f} to "
            f"{d.ci_high:+.0f}), {verdict}, over {d.samples} replies"
        )
    rows = "".join(
        f'<tr><td class="num">{w.start_s / div:.1f}–{w.end_s / div:.1f}</td>'
        f'<td class="num">{w.figures.calls}</td><td class="num">{_rate(w.figures.success_rate)}'
        f'</td><td class="num">{_ms(w.p95_ms)}</td><td class="num">{w.replies}</td>'
        f'<td class="num">{w.failures}</td></tr>'
        for w in s.windows
    )
    table = (
        f'<table id="windows"><tr><th>window, {unit}</th><th>calls started</th><th>success</th>'
        f"<th>p95 ms</th><th>replies</th><th>failures</th></tr>{rows}</table>"
    )
    overall = s.overall
    return (
        f'<h2 id="soak">Soak: {soak.concurrency} calls at once for {s.duration_s / div:.1f} '
        f"{unit}</h2>"
        f'<p class="sub">run <code>{escape(", ".join(soak.run_ids or [soak.run_id]))}</code>: '
        f"{overall.calls} calls, success "
        f"{_rate(overall.success_rate)}, p95 {_ms(overall.latency_ms.p95)} ms"
        f"{' — partial (cancelled)' if soak.partial else ''}</p>"
        f'<p id="drift" class="verdict {"found" if d is not None and d.significant else "none"}"'
        f">{escape(drift)}</p>"
        f'<div class="charts">{p95}{rates}</div>{table}'
    )
