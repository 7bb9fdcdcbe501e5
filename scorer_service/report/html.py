"""The report as ONE self-contained HTML file: inline CSS, inline SVG, data: audio.

No scripts, fonts or images are fetched when the file is viewed, so it can be
mailed, archived with the run, or opened offline. Every value from the store
is escaped.
"""

from __future__ import annotations

import json
from html import escape
from typing import Any

from scorer_service import signals
from scorer_service.report.svg import Bar, Marker, bar_chart, histogram, timeline

CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:24px;color:#222;max-width:1100px}
h1{font-size:22px}h2{font-size:18px;margin-top:32px;border-bottom:1px solid #ddd}
h3{font-size:15px;margin-bottom:4px}
table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #ddd;padding:3px 8px;
text-align:left;vertical-align:top}th{background:#f5f5f5}
.meta td:first-child{font-weight:600;white-space:nowrap}
.badge{display:inline-block;padding:1px 8px;border-radius:9px;color:#fff;font-size:12px}
.passed{background:#2e7d32}.failed{background:#c62828}.not_applicable,.notscored{background:#9e9e9e}
.unscored{background:#f9a825}
.charts{display:flex;flex-wrap:wrap;gap:16px}
.chart text,.timeline text,.histogram text{font-size:11px}
.title{font-weight:600;font-size:13px}
.session{border:1px solid #e0e0e0;border-radius:6px;padding:8px 14px;margin:16px 0}
.reasons{margin:0;padding-left:18px}.small{color:#666;font-size:12px}
pre{white-space:pre-wrap;background:#fafafa;padding:6px;border:1px solid #eee}
"""


def _badge(verdict: str) -> str:
    cls = verdict.replace(" ", "")
    return f'<span class="badge {escape(cls)}">{escape(verdict)}</span>'


def _rate_bars(block: dict[str, Any]) -> list[Bar]:
    sig = block.get("signals", {}) if isinstance(block.get("signals"), dict) else {}
    bars = []
    for name in signals.SUCCESS_SIGNALS:
        counts = sig.get(name, {})
        if not isinstance(counts, dict):
            continue
        decided = int(counts.get("passed", 0)) + int(counts.get("failed", 0))
        note = f"({counts.get('passed', 0)}/{decided})" if decided else ""
        bars.append(Bar(name, counts.get("rate"), note))
    return bars


def _success_bars(summary: dict[str, Any]) -> list[Bar]:
    def bar(label: str, block: dict[str, Any]) -> Bar:
        counts = block.get(signals.IS_SUCCESSFUL, {})
        decided = int(counts.get("passed", 0)) + int(counts.get("failed", 0))
        note = f"({counts.get('passed', 0)}/{decided})" if decided else ""
        return Bar(label, block.get("success_rate"), note)

    bars = [bar("all scenarios", summary)]
    domains = summary.get("domains", {})
    for name, block in sorted(domains.items() if isinstance(domains, dict) else []):
        if isinstance(block, dict):
            bars.append(bar(name, block))
    return bars


def _header(data: dict[str, Any]) -> str:
    run, scoring = data["run"], data["scoring"]
    bots = run["bots"]
    rows = [
        ("Run", run["run_id"]),
        ("Created", run["created"]),
        ("Finished", run["finished"] or "—"),
        ("Status", run["status"]),
        ("Replayed from", run.get("replayed_from") or "—"),
        ("Scenarios", str(run["scenarios"])),
        ("User bots", ", ".join(bots["user"]) or "—"),
        ("Agent bots", ", ".join(bots["agent"]) or "—"),
        ("Options", json.dumps(run["options"], sort_keys=True)),
        ("Recorded with", f"vae {run['recorded_with']}"),
        ("Scoring", scoring["scoring_id"] if scoring else "not scored yet"),
    ]
    if scoring:
        rows.append(("Judge", scoring["judge_model"] or "none"))
        rows.append(("Scored", scoring["created"]))
    rows.append(("Report", f"vae {data['vae_version']}, {data['generated_at']}"))
    body = "".join(f"<tr><td>{escape(k)}</td><td>{escape(v)}</td></tr>" for k, v in rows)
    return f'<table class="meta">{body}</table>'


def _summary(data: dict[str, Any]) -> str:
    summary = data["summary"]
    if not summary:
        return "<p>This run has no scoring yet: run <code>vae rescore</code> first.</p>"
    lat = summary.get("latency", {}) if isinstance(summary.get("latency"), dict) else {}

    def sec(key: str) -> str:
        v = lat.get(key)
        return "—" if v is None else f"{v:.2f} s"

    stalled = ", ".join(summary.get("stalled", [])) or "none"
    return (
        '<div class="charts">'
        + bar_chart(
            _success_bars(summary), title="Success rate (is_successful)", css_class="chart success"
        )
        + bar_chart(_rate_bars(summary), title="Per-signal pass rate", css_class="chart signals")
        + histogram(data["latencies"], title="Agent response latency")
        + "</div>"
        + f"<p>Response latency p50 {sec('p50_s')}, p90 {sec('p90_s')}, p95 {sec('p95_s')} "
        f"over {lat.get('count', 0)} responses. Stalled: {escape(stalled)}.</p>"
    )


def _session_table(sessions: list[dict[str, Any]]) -> str:
    head = (
        "<tr><th>Scenario</th><th>Domain</th><th>Result</th><th>Stop reason</th>"
        "<th>Duration</th><th>Turns (user/agent)</th><th>Failing signals and why</th></tr>"
    )
    rows = []
    for i, s in enumerate(sessions):
        why = "".join(
            f"<li><b>{escape(f['signal'])}</b> {_badge(f['verdict'])}"
            + ("" if f["gating"] else " <span class='small'>(not gating)</span>")
            + "<ul class='reasons'>"
            + "".join(f"<li>{escape(r)}</li>" for r in f["reasons"])
            + "</ul></li>"
            for f in s["failing"]
        )
        rows.append(
            f'<tr class="session-row"><td><a href="#s{i}">{escape(s["scenario_name"])}</a></td>'
            f"<td>{escape(s['domain'])}</td><td>{_badge(s['verdict'])}</td>"
            f"<td>{escape(s['stop_reason'])}</td><td>{s['duration_s']:.1f} s</td>"
            f"<td>{s['user_turns']}/{s['agent_turns']}</td>"
            f"<td><ul class='reasons'>{why}</ul></td></tr>"
        )
    return f'<table class="sessions">{head}{"".join(rows)}</table>'


def _session_detail(i: int, s: dict[str, Any]) -> str:
    spans = s["spans"]
    end = max([s["duration_s"], *(e for side in spans.values() for _, e in side)])
    markers = [Marker(m["t_s"], m["kind"], m["label"]) for m in s["markers"]]
    svg = timeline(end or 1.0, spans["user"], spans["agent"], markers)
    audio = (
        f'<audio controls preload="metadata" src="{s["audio"]}"></audio>'
        '<div class="small">stereo: user left, agent right</div>'
        if s["audio"]
        else '<p class="small">no audio recorded</p>'
    )
    lines = "".join(
        f"<tr><td>{t['t_s']:.1f} s</td><td>{escape(t['side'])}</td>"
        f"<td>{escape(t['text'])}</td></tr>"
        for t in s["transcript"]
    )
    sigs = "".join(
        f"<tr><td>{escape(name)}{' (gating)' if row['gating'] else ''}</td>"
        f"<td>{_badge(row['verdict'])}</td>"
        f"<td>{_num(row['value'])}</td>"
        f"<td>{escape('; '.join(row['reasons']))}</td></tr>"
        for name, row in s["signals"].items()
    )
    return (
        f'<section class="session" id="s{i}"><h3>{escape(s["scenario_name"])} '
        f"{_badge(s['verdict'])}</h3>"
        f'<div class="small">{escape(s["session_id"])} · attempt {s["attempt"]} · '
        f"{escape(s['domain'])}</div>{svg}{audio}"
        f'<table class="transcript"><tr><th>t</th><th>side</th><th>said</th></tr>{lines}</table>'
        f'<table class="signals"><tr><th>signal</th><th>verdict</th><th>value</th>'
        f"<th>why</th></tr>{sigs}</table></section>"
    )


def _diff(cmp: dict[str, Any]) -> str:
    rates = "".join(
        f"<tr><td>{escape(k)}</td><td>{_num(v.get('a'))}</td><td>{_num(v.get('b'))}</td>"
        f"<td>{_num(v.get('change'), signed=True)}</td></tr>"
        for k, v in cmp.get("rates", {}).items()
    )
    flips = "".join(
        f"<tr><td>{escape(f['scenario_name'])}</td><td>{escape(f['signal'])}</td>"
        f"<td>{_badge(f['a'])}</td><td>{_badge(f['b'])}</td></tr>"
        for f in cmp.get("flips", [])
    )
    return (
        f'<section class="diff"><h2>Comparison: {escape(cmp["scoring_a"])} → '
        f'{escape(cmp["scoring_b"])}</h2><table class="rates"><tr><th>rate</th><th>before</th>'
        f"<th>after</th><th>change</th></tr>{rates}</table>"
        f'<table class="flips"><tr><th>scenario</th><th>signal</th><th>before</th>'
        f"<th>after</th></tr>{flips or '<tr><td colspan=4>no verdict changed</td></tr>'}"
        "</table></section>"
    )


def _num(v: Any, signed: bool = False) -> str:
    if not isinstance(v, int | float):
        return "—"
    return f"{v:+.2f}" if signed else f"{v:.2f}"


def render(data: dict[str, Any]) -> str:
    title = f"vae report — {data['run']['run_id']}"
    parts = [
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{escape(title)}'
        f"</title><style>{CSS}</style></head><body><h1>{escape(title)}</h1>",
        _header(data),
        "<h2>Summary</h2>",
        _summary(data),
    ]
    if data.get("compare"):
        parts.append(_diff(data["compare"]))
    parts.append("<h2>Sessions</h2>")
    parts.append(_session_table(data["sessions"]))
    parts.extend(_session_detail(i, s) for i, s in enumerate(data["sessions"]))
    parts.append("</body></html>")
    return "".join(parts)
