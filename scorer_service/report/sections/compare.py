"""The comparison sections of the report: this run against a baseline run, and
this scoring against another scoring of the run.

Both come from :mod:`vae.scorer_service.compare.runs`: regressions first, in the
regression colour with a ▼, fixes in green with a ▲, each with the reasons of
its flip; then the rates side by side as percentages with their change; then
what differed in the configuration (bots, options, judge, prompt, overrides).
"""

from __future__ import annotations

from html import escape
from typing import Any

from vae.scorer_service.report.scorecard import badge, delta

_LABEL = {"regression": "▼ regression", "fix": "▲ fix", "unscored": "? unscored",
          "only_a": "only in baseline", "only_b": "new", "same": "same"}  # fmt: skip


def _verdict(v: Any, detail: Any) -> str:
    if v is None:
        return '<span class="small">—</span>'
    trials = ""
    if isinstance(detail, dict) and int(detail.get("trials", 1)) > 1:
        trials = f' <span class="small">{detail["passed"]}/{detail["passed"] + detail["failed"]}'
        trials += "</span>"
    return badge(str(v)) + trials


def _value(v: Any, unit: str) -> str:
    if not isinstance(v, int | float):
        return "n/a"
    if unit == "seconds":
        return f"{v:.2f} s"
    return f"{v:.2f}" if unit == "score" else f"{v * 100:.1f}%"


def comparison_body(cmp: dict[str, Any], a_name: str, b_name: str) -> str:
    counts = cmp["counts"]
    head = " · ".join(f"{n} {_LABEL[c]}" for c, n in counts.items() if n)
    rows = []
    for s in cmp["scenarios"]:
        reasons = "".join(f"<li>{escape(r)}</li>" for r in s["reasons"])
        rows.append(
            f'<tr class="{escape(s["change"])}"><td class="change">{_LABEL[s["change"]]}</td>'
            f"<td>{escape(s['scenario'])}</td><td>{_verdict(s['a'], s['detail_a'])}</td>"
            f"<td>{_verdict(s['b'], s['detail_b'])}</td><td><ul class=reasons>{reasons}</ul>"
            "</td></tr>"
        )
    rates = "".join(
        f"<tr><td>{escape(r['name'])}</td><td class=num>{_value(r['a'], r['unit'])}</td>"
        f"<td class=num>{_value(r['b'], r['unit'])}</td><td class=num>{delta(r)}</td>"
        f"<td class=num>{r['unscored_a']} → {r['unscored_b']}</td></tr>"
        for r in cmp["rates"]
    )
    config = "".join(
        f"<tr><td>{escape(c['key'])}</td><td>{escape(str(c['a']))}</td>"
        f"<td>{escape(str(c['b']))}</td></tr>"
        for c in cmp["config"]
    )
    warnings = "".join(f'<p class="why">warning: {escape(w)}</p>' for w in cmp["warnings"])
    return (
        f"{warnings}<p><b>{escape(head or 'no scenarios')}</b></p>"
        f'<table class="changes"><tr><th>change</th><th>scenario</th><th>{escape(a_name)}</th>'
        f"<th>{escape(b_name)}</th><th>why</th></tr>{''.join(rows)}</table>"
        f'<table class="rates"><tr><th>rate</th><th>{escape(a_name)}</th><th>{escape(b_name)}</th>'
        f"<th>change</th><th>unscored</th></tr>{rates}</table>"
        + (
            f'<table class="config"><tr><th>what differs</th><th>{escape(a_name)}</th>'
            f"<th>{escape(b_name)}</th></tr>{config}</table>"
            if config
            else '<p class="small">no configuration difference</p>'
        )
    )


def baseline_section(cmp: dict[str, Any]) -> str:
    return (
        f'<section class="baseline" id="baseline"><h2>Against the baseline run '
        f"{escape(cmp['run_a'])}</h2>" + comparison_body(cmp, "baseline", "this run") + "</section>"
    )


def _scoring_name(scoring: dict[str, Any] | None, fallback: str) -> str:
    if not scoring:
        return fallback
    label = scoring.get("label") or ""
    return f"{label} ({scoring.get('created', '')})" if label else str(scoring.get("created"))


def diff_section(data: dict[str, Any]) -> str:
    cmp = data["compare"]
    body = comparison_body(cmp["comparison"], "before", "after")
    flips = "".join(
        f"<tr><td>{escape(f['scenario_name'])}</td><td>{escape(f['signal'])}</td>"
        f"<td>{badge(f['a'])}</td><td>{badge(f['b'])}</td></tr>"
        for f in cmp.get("flips", [])
    )
    return (
        '<section class="diff" id="diff"><h2>What changed between two scorings of this run</h2>'
        f'<p class="small">before: scoring {escape(cmp["scoring_a"])} · after: '
        f"{escape(_scoring_name(data.get('scoring'), cmp['scoring_b']))} "
        f"({escape(cmp['scoring_b'])})</p>"
        + body
        + '<h3>Every signal that flipped</h3><table class="flips"><tr><th>scenario</th>'
        "<th>signal</th><th>before</th><th>after</th></tr>"
        + (flips or "<tr><td colspan=4>no verdict changed</td></tr>")
        + "</table></section>"
    )
