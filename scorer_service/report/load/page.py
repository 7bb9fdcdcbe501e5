"""The load report: latency and success against concurrency, the knee, the soak over time.

One self-contained HTML file (``vae load … --report FILE``), written from
the same :class:`~vae.scorer_service.load.result.LoadResult` that
``vae load --json`` prints. Everything is markup and inline SVG: it reads
without JavaScript (it has none). The knee is a red dashed line at its step
(``line.marker.knee`` with ``data-x``), harness-limited steps grey ones, the
p95 threshold a dashed horizontal line; each step's run is named with the
command that opens its own report. Every text that came from outside
(suite path, run ids, stop reasons, reasons) is escaped.
"""

from __future__ import annotations

from html import escape

from vae.scorer_service.load.result import LoadResult, SoakResult, StepResult
from vae.scorer_service.report.load.line_chart import Axes, Marker, Series, Threshold, line_chart
from vae.scorer_service.report.load.soak import soak_section
from vae.scorer_service.report.style import AGENT, BAD, CSS, GOOD, NEUTRAL, USER, WARN

_EXTRA_CSS = """
.verdict{font-size:22px;font-weight:700;margin:8px 0 2px}.verdict.none{color:#2e7d32}
.verdict.found{color:#c62828}.verdict.undecided{color:#e08a00}
tr.limited td{background:#f3f3f3;color:#555}tr.kneerow td{background:#fdecea}
ul.advice li{margin:2px 0}.charts{display:flex;flex-wrap:wrap;gap:8px 24px}
"""


def _ms(value: float | None) -> str:
    return "–" if value is None else f"{value:.0f}"


def _ms1(value: float | None) -> str:
    return "–" if value is None else f"{value:.1f}"


def _rate(value: float | None) -> str:
    return "–" if value is None else f"{value:.1%}"


def _pct(rate: float | None) -> float | None:
    return None if rate is None else 100 * rate


def _headline(result: LoadResult) -> str:
    knee = result.knee
    if not result.steps:
        return '<p class="verdict undecided" id="knee">no step ran</p>'
    if knee is None or not knee.decided:
        why = "" if knee is None else knee.reason
        return (
            f'<p class="verdict undecided" id="knee">knee: could not be decided</p>'
            f'<p class="sub">{escape(why)}</p>'
        )
    if knee.concurrency is None:
        return (
            f'<p class="verdict none" id="knee" data-knee="">no knee: the agent held every '
            f"step measured honestly (up to {knee.held} calls at once)</p>"
            f'<p class="sub">{escape(knee.reason)}</p>'
        )
    return (
        f'<p class="verdict found" id="knee" data-knee="{knee.concurrency}">knee at '
        f"{knee.concurrency} concurrent calls; the agent held {knee.held}</p>"
        f'<p class="sub">{escape(knee.reason)}</p>'
    )


def _markers(result: LoadResult) -> list[Marker]:
    out = []
    for s in result.steps:
        if s.harness_limited:
            out.append(Marker(s.concurrency, "harness-limited", "limited", NEUTRAL))
        elif s.partial:
            out.append(Marker(s.concurrency, "partial", "partial", NEUTRAL))
    knee = result.knee
    if knee is not None and knee.concurrency is not None:
        out.append(Marker(knee.concurrency, f"knee: {knee.concurrency}", "knee", BAD))
    return out


def _load_charts(result: LoadResult) -> str:
    steps = result.steps
    conc = [float(s.concurrency) for s in steps]
    axes = Axes(
        "calls at once",
        "latency, ms",
        x_text=lambda x: f"{x:g}",
        y_text=lambda y: f"{y:.0f}",
        x_ticks=conc,
    )
    lat = [
        Series(
            name,
            colour,
            [(x, getattr(s.figures.latency_ms, name)) for x, s in zip(conc, steps, strict=True)],
            dashed=name == "p99",
        )
        for name, colour in (("p50", USER), ("p95", AGENT), ("p99", BAD))
    ]
    knee = result.knee
    limit = None if knee is None or knee.max_p95_ms is None else knee.max_p95_ms
    latency = line_chart(
        lat,
        title="Agent response latency against concurrency",
        axes=axes,
        markers=_markers(result),
        threshold=None if limit is None else Threshold(limit, f"p95 limit {limit:.0f} ms"),
        css_class="chart line latency",
    )
    rates = [
        Series(
            "success",
            GOOD,
            [(x, _pct(s.figures.success_rate)) for x, s in zip(conc, steps, strict=True)],
        )
    ]
    floor = None if knee is None or knee.min_success_rate is None else knee.min_success_rate
    success = line_chart(
        rates,
        title="Success rate against concurrency",
        axes=Axes(
            "calls at once",
            "success, %",
            y_text=lambda y: f"{y:.0f}%",
            x_ticks=conc,
            y_range=(0.0, 100.0),
        ),
        markers=_markers(result),
        threshold=None
        if floor is None
        else Threshold(100 * max(floor, 0.0), f"floor {max(floor, 0.0):.0%}", WARN),
        css_class="chart line success",
    )
    return f'<div class="charts">{latency}{success}</div>'


def _step_row(s: StepResult, knee: int | None) -> str:
    f = s.figures
    css = "limited" if s.harness_limited else ("kneerow" if s.concurrency == knee else "")
    notes = []
    if s.harness_limited:
        notes.append("harness-limited: " + "; ".join(s.headroom.reasons))
    if s.partial:
        notes.append("partial (cancelled midway)")
    if s.ran_out:
        notes.append("ran out of planned calls before its time")
    stops = ", ".join(f"{k} {v}" for k, v in f.stop_reasons.items())
    errors = ", ".join(f"{k} {v}" for k, v in f.errors.items()) or "none"
    cells = [
        f'<td class="num">{s.index}</td>',
        f'<td class="num">{s.concurrency}</td>',
        f"<td><code>{escape(s.run_id)}</code></td>",
        f'<td class="num">{f.calls}</td>',
        f'<td class="num">{_rate(f.success_rate)} <span class=small>({f.passed} passed, '
        f"{f.failed} failed, {f.unscored} unscored)</span></td>",
        *(f'<td class="num">{_ms(getattr(f.latency_ms, k))}</td>' for k in ("p50", "p95", "p99")),
        f'<td class="num">{_ms(f.ttfa_ms.p50)} / {_ms(f.ttfa_ms.p95)}</td>',
        f"<td>{escape(stops)}</td>",
        f"<td>{escape(errors)}</td>",
        f"<td>{escape('; '.join(notes))}</td>",
    ]
    return f'<tr class="{css}" data-concurrency="{s.concurrency}">{"".join(cells)}</tr>'


def _steps_table(result: LoadResult) -> str:
    knee = result.knee.concurrency if result.knee is not None else None
    head = (
        "<tr><th>step</th><th>calls at once</th><th>run</th><th>calls</th><th>success</th>"
        "<th>p50 ms</th><th>p95 ms</th><th>p99 ms</th><th>time to first audio p50 / p95 ms</th>"
        "<th>stop reasons</th><th>errors</th><th>notes</th></tr>"
    )
    rows = "".join(_step_row(s, knee) for s in result.steps)
    return f'<table id="steps">{head}{rows}</table>'


def _harness_table(rows: list[tuple[str, StepResult | SoakResult]]) -> str:
    head = (
        "<tr><th>step</th><th>process</th><th>role</th><th>CPU, cores</th>"
        "<th>loop lag median / p99 / max, ms</th><th>dropped frames</th><th>sessions</th></tr>"
    )
    body = []
    for label, item in rows:
        for p in item.headroom.processes:
            cpu = "–" if p.cpu is None else f"{p.cpu:.2f}"
            body.append(
                f"<tr><td>{escape(label)}</td><td>{escape(p.name)}</td><td>{escape(p.role)}</td>"
                f'<td class="num">{cpu}</td><td class="num">{_ms1(p.lag_p50_ms)} / '
                f"{_ms(p.lag_p99_ms)} / "
                f'{_ms(p.lag_max_ms)}</td><td class="num">{p.dropped_frames} '
                f'({p.dropped_share:.1%})</td><td class="num">{p.sessions}</td></tr>'
            )
    return f'<table id="harness">{head}{"".join(body)}</table>'


def render(result: LoadResult) -> str:
    """The load report as one HTML document."""
    title = f"vae load — {result.load_id}"
    sub = (
        f"suite {result.suite} · agent {result.agent} · {result.clock} clock · "
        f"{result.workers} bridge worker{'s' if result.workers != 1 else ''} · "
        f"database {result.database}"
    )
    parts = [
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(title)}</title><style>{CSS}{_EXTRA_CSS}</style></head><body>"
        f"<h1>{escape(title)}</h1><p class=sub>{escape(sub)}</p>",
    ]
    if result.interrupted:
        parts.append(
            '<p class="scoring-status">interrupted: the step under way is partial, '
            "later steps never ran</p>"
        )
    if result.steps:
        parts.append("<h2>Steps</h2>" + _headline(result))
        if result.gate is not None:
            parts.append(f'<p id="gate">gate: {escape(result.gate.line)}</p>')
        parts.append(_load_charts(result))
        parts.append(_steps_table(result))
    if result.soak is not None:
        parts.append(soak_section(result.soak))
    if result.advice:
        items = "".join(f"<li>{escape(a)}</li>" for a in result.advice)
        parts.append(f'<h2>To measure higher</h2><ul class="advice">{items}</ul>')
    harness: list[tuple[str, StepResult | SoakResult]] = [
        (f"{s.index} ({s.concurrency})", s) for s in result.steps
    ]
    if result.soak is not None:
        harness.append(("soak", result.soak))
    parts.append(
        "<h2>Harness headroom</h2><p class=sub>the bridge's event-loop lag, CPU and dropped "
        "frames per process; a step over a limit is harness-limited and never the knee</p>"
        + _harness_table(harness)
    )
    runs = [s.run_id for s in result.steps]
    if result.soak is not None:
        runs += result.soak.run_ids or [result.soak.run_id]
    if runs:
        cmds = "".join(
            f"<li><code>vae report {escape(r)} --db {escape(result.database)}</code></li>"
            for r in runs
        )
        parts.append(f"<h2>Each step's calls</h2><ul>{cmds}</ul>")
    parts.append(
        f"<p class=\"small\">latency: the agent's reply onset after the caller's end of turn, on "
        f"the recorded audio, every reply pooled; nearest-rank percentiles "
        f"({escape(_note(result))})</p></body></html>"
    )
    return "".join(parts)


def _note(result: LoadResult) -> str:
    parts = []
    if result.steps:
        replies = sum(s.figures.latency_ms.count for s in result.steps)
        parts.append(f"{replies} replies over {len(result.steps)} steps")
    if result.soak is not None:
        parts.append(f"{result.soak.soak.overall.latency_ms.count} replies in the soak")
    return "; ".join(parts) or "no replies"
