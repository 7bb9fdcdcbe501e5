"""The report's traces and cost sections (HTML). Every text from the store is escaped."""

from __future__ import annotations

from html import escape
from typing import Any

from vae.scorer_service.report.traces_data import METHOD_TEXT


def usd(value: Any) -> str:
    """A cost: "?" when unknown, never 0 for unknown."""
    if not isinstance(value, int | float):
        return "?"
    return f"${value:.4f}" if value < 1 else f"${value:.2f}"


def traces_section(traces: dict[str, Any] | None) -> str:
    if not traces or (not traces["spans"] and not traces["exports"]):
        return ""
    rows = "".join(
        f"<li>{n} by {escape(METHOD_TEXT.get(rule, rule))}</li>"
        for rule, n in traces["matched_by"].items()
    )
    exports = "".join(
        f"<li>vae's trace ({'scoring ' + escape(e['scoring_id']) if e['scoring_id'] else 'run'})"
        f" to {escape(e['endpoint'])}: {e['spans']} spans, "
        + (f"<b>{e['dropped']} dropped</b> ({escape(e['error'])})" if e["dropped"] else
           "all delivered")
        + "</li>"
        for e in traces["exports"]
    )  # fmt: skip
    body = ""
    if traces["spans"]:
        body += (f"<p>{traces['spans']} spans received from the agent, tied to sessions:</p>"
                 f"<ul>{rows}</ul>")  # fmt: skip
        if traces["unmatched"]:
            body += (f'<p class="small">{traces["unmatched"]} spans could not be tied to one '
                     "session (kept under the run, not guessed).</p>")  # fmt: skip
    if exports:
        body += f"<p>OpenTelemetry export:</p><ul>{exports}</ul>"
    return f"<h2>Agent traces</h2>{body}"


def cost_section(cost: dict[str, Any] | None, sessions: list[dict[str, Any]]) -> str:
    if not cost:
        return ""
    run = cost["run"]
    unknown = (f" — <b>{run['unknown_parts']} of {run['parts']} sessions unknown</b> "
               f"({run['unknown_items']} items without a price; known part "
               f"{usd(run['known_usd'])})") if run["unknown_parts"] else ""  # fmt: skip
    rows = "".join(
        f"<tr><td>{escape(s['scenario_name'])}</td><td class=num>{usd(s['cost']['usd'])}</td>"
        f"<td class=num>{s['cost']['unknown_items']}</td></tr>"
        for s in sessions
        if s.get("cost")
    )
    scoring = cost.get("scoring")
    scored = (
        f"<p>the scoring: <b>{usd(scoring['usd'])}</b> (judge {usd(scoring['judge']['usd'])}, "
        f"LLM caller {usd(scoring['caller']['usd'])})</p>"
        if scoring else ""
    )  # fmt: skip
    return (
        "<h2>Cost</h2>"
        f"<p>the agent, {run['parts']} counted sessions: <b>{usd(run['usd'])}</b>{unknown}</p>"
        f"{scored}"
        '<table class="cost"><tr><th>session</th><th>cost</th><th>items without a price</th>'
        f"</tr>{rows}</table>"
        f'<p class="small">prices: {escape(cost["prices"])} (as of '
        f'{escape(cost["prices_as_of"] or "?")}); "?" is an unknown price, never 0</p>'
    )
