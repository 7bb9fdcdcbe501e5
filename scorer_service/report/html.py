"""The report as ONE self-contained HTML file: inline CSS, SVG and script; audio
inline as ``data:`` URIs or, for large runs, as files in a folder beside it.

Order answers "what failed and why" first: the scorecard, the failing sessions
with their one-line reasons, the comparison with a baseline run or another
scoring, the latency distribution, then every session (filterable, sortable),
and the run's metadata and options collapsed at the end. Nothing is fetched
when the file is viewed; every value from the store is escaped, including the
data handed to the inline script.
"""

from __future__ import annotations

import json
from html import escape
from typing import Any

from vae.scorer_service.report.scorecard import failing_list, scorecard, trials_table
from vae.scorer_service.report.script import SCRIPT, script_json
from vae.scorer_service.report.sections.compare import baseline_section, diff_section
from vae.scorer_service.report.sections.extras import cost_section, traces_section
from vae.scorer_service.report.sections.labels import labels_section
from vae.scorer_service.report.sections.redaction import redaction_section
from vae.scorer_service.report.session_html import session_block
from vae.scorer_service.report.style import CSS
from vae.scorer_service.report.svg import histogram


def clock_phrase(clock: str, session_clocks: list[str]) -> str:
    """``the real clock``; for ``--clock auto``, the clock(s) its sessions took."""
    if clock != "auto":
        return f"the {clock} clock"
    took = sorted({c for c in session_clocks if c in ("real", "virtual")})
    if len(took) == 1:
        return f"the {took[0]} clock (auto)"
    counts = ", ".join(f"{session_clocks.count(c)} {c}" for c in took)
    return f"the auto clock ({counts})" if counts else "the auto clock"


def _subtitle(data: dict[str, Any]) -> str:
    run, scoring = data["run"], data["scoring"]
    agent = run["bots"].get("agent") or "unknown agent"
    shown = (
        f"scored {escape(scoring['created'])}"
        + (f" ({escape(str(scoring['label']))})" if scoring.get("label") else "")
        if scoring
        else "not scored yet"
    )
    if scoring and scoring.get("status") != "complete":
        # A failed, interrupted or running scoring: its verdicts are not the whole run.
        error = data["summary"].get("error") if isinstance(data.get("summary"), dict) else None
        shown += (
            f' · <span class="scoring-status">scoring {escape(str(scoring.get("status")))}'
            + (f": {escape(str(error))}" if error else "")
            + "</span>"
        )
    clocks = [str(s.get("clock")) for s in data["sessions"]]
    mode = f"{run.get('modality', 'audio')} on {clock_phrase(run.get('clock', 'real'), clocks)}"
    return (
        f'<div class="sub">agent {escape(agent)} · {run["scenarios"]} scenarios · '
        f"{escape(mode)} · recorded {escape(run['created'])} · {shown} · "
        '<a href="#metadata">run details</a></div>'
    )


def _options(values: list[str], label: str, ident: str) -> str:
    opts = "".join(f'<option value="{escape(v)}">{escape(v)}</option>' for v in values)
    return (
        f'<label>{label} <select id="{ident}"><option value="">all</option>{opts}</select></label>'
    )


def _controls(sessions: list[dict[str, Any]]) -> str:
    verdicts = sorted({s["verdict"] for s in sessions})
    domains = sorted({s["domain"] for s in sessions})
    failing = sorted({f for s in sessions for f in s["failing_signals"]})
    tags = sorted({t for s in sessions for t in s["tags"]})
    return (
        '<div class="controls" id="controls" hidden>'
        '<label><input type="checkbox" id="f-failing"> failing only</label>'
        + _options(verdicts, "verdict", "f-verdict")
        + _options(domains, "domain", "f-domain")
        + _options(failing, "failing signal", "f-signal")
        + _options(tags, "tag", "f-tag")
        + '<label>sort <select id="f-sort"><option value="">failing first</option>'
        '<option value="latency">latency p50 (slowest first)</option>'
        '<option value="duration">duration (longest first)</option>'
        '<option value="name">name</option></select></label>'
        '<button type="button" id="expand-all">expand all</button>'
        '<button type="button" id="collapse-all">collapse all</button>'
        '<span class="small" id="f-count"></span></div>'
    )


def _index(sessions: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "sessions": [
            {"idx": i, "name": s["scenario_name"], "verdict": s["verdict"],
             "domain": s["domain"], "tags": s["tags"], "failing_signals": s["failing_signals"],
             "latency": s["latency_p50_s"], "duration": s["duration_s"]}
            for i, s in enumerate(sessions)
        ]
    }  # fmt: skip


def _metadata(data: dict[str, Any]) -> str:
    run, scoring = data["run"], data["scoring"]
    rows = [
        ("run", run["run_id"]), ("status", run["status"]), ("source", run["source"]),
        ("created", run["created"]), ("finished", run["finished"]),
        ("recorded with vae", run["recorded_with"]), ("tags", ", ".join(run["tags"]) or "none"),
        ("agent bot", run["bots"].get("agent") or "-"),
        ("user bot", run["bots"].get("user") or "-"),
        ("replayed from", run.get("replayed_from") or "-"),
        ("modality", run.get("modality", "audio")), ("clock", run.get("clock", "real")),
        ("report", f"generated {data['generated_at']} by vae {data['vae_version']}"),
    ]  # fmt: skip
    if scoring:
        rows += [
            ("scoring", scoring["scoring_id"]), ("scored", scoring["created"]),
            ("scoring status", f"{scoring['status']} ({scoring['mode']})"),
            ("judge", f"{scoring['judge_model'] or 'none'} "
                      f"(prompt {scoring['prompt_hash'] or '-'})"),
        ]  # fmt: skip
    table = "".join(f"<tr><td>{escape(k)}</td><td>{escape(str(v))}</td></tr>" for k, v in rows)
    config = scoring.get("config", {}) if scoring else {}
    return (
        '<details class="meta" id="metadata"><summary>Run details, options and scoring '
        f'configuration</summary><table class="meta">{table}</table><h3>Run options</h3>'
        f"<pre>{escape(json.dumps(run['options'], indent=1, ensure_ascii=False))}</pre>"
        f"<h3>Scoring configuration</h3>"
        f"<pre>{escape(json.dumps(config, indent=1, ensure_ascii=False))}</pre></details>"
    )


def render(data: dict[str, Any]) -> str:
    title = f"vae report — {data['run']['run_id']}"
    sessions = data["sessions"]
    parts = [
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(title)}</title><style>{CSS}</style></head><body>"
        f"<h1>{escape(title)}</h1>",
        _subtitle(data),
        scorecard(data),
        failing_list(sessions) if data["summary"] else "",
    ]
    if data.get("baseline"):
        parts.append(baseline_section(data["baseline"]))
    parts.append(trials_table(data["summary"]))
    if data.get("compare"):
        parts.append(diff_section(data))
    if data["summary"]:
        parts.append(
            "<h2>Agent response latency</h2>"
            + histogram(data["latencies"], title="end of user speech → first agent audio")
        )
    parts.append(traces_section(data.get("traces")))
    parts.append(cost_section(data.get("cost"), sessions))
    if data.get("labels"):
        parts.append(labels_section(data["labels"]))
    parts.append(redaction_section(data.get("redaction"), {"summary": data["summary"]}))
    parts.append(f"<h2>Sessions <span class=small>({len(sessions)})</span></h2>")
    parts.append(_controls(sessions))
    parts.append('<div id="sessions">')
    parts.extend(session_block(i, s) for i, s in enumerate(sessions))
    parts.append("</div>")
    parts.append(_metadata(data))
    parts.append(
        f'<script type="application/json" id="vae-data">{script_json(_index(sessions))}</script>'
        f"<script>{SCRIPT}</script></body></html>"
    )
    return "".join(parts)
