"""What ``vae runs show`` and ``vae scores show`` add about traces and cost.

``--json`` gets it all as data: the exports of vae's trace (spans sent and
``spans_dropped``), how the agent's spans were tied (``agent_spans``), and
with ``--prices`` the cost per counted session and in total (``usd`` null
when any price is unknown, with the counts of what was unknown). The tables
show the same in lines, unknown as "?", never 0.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from vae.recordings.cost.prices import PriceTable
    from vae.recordings.read.reader import RecordingReader


def run_extras(reader: RecordingReader, run_id: str, prices: PriceTable | None) -> dict[str, Any]:
    from vae.recordings.read.cost_reads import run_cost
    from vae.recordings.read.trace_reads import otel_exports, span_matches

    exports = otel_exports(reader, run_id)
    matched: dict[str, int] = {}
    for counts in span_matches(reader, run_id).values():
        for rule, n in counts.items():
            matched[rule] = matched.get(rule, 0) + n
    out: dict[str, Any] = {
        "otel": {
            "exports": exports,
            "spans_exported": sum(e["spans"] - e["dropped"] for e in exports),
            "spans_dropped": sum(e["dropped"] for e in exports),
        },
        "agent_spans": {"total": sum(matched.values()), "matched_by": matched},
        "cost": None,
    }
    if prices is not None:
        out["cost"] = {**run_cost(reader, run_id, prices).to_dict(), "prices": prices.source,
                       "prices_as_of": prices.as_of}  # fmt: skip
    return out


def run_lines(extras: dict[str, Any]) -> list[str]:
    from vae.recordings.cost.compute import usd_text

    lines = []
    spans = extras["agent_spans"]
    if spans["total"]:
        how = ", ".join(f"{n} by {rule}" for rule, n in spans["matched_by"].items())
        lines.append(f"agent spans: {spans['total']} ({how})")
    for e in extras["otel"]["exports"]:
        what = f"scoring {e['scoring_id']}" if e["scoring_id"] else "run"
        status = f"{e['dropped']} dropped: {e['error']}" if e["dropped"] else "all delivered"
        lines.append(f"OpenTelemetry export ({what}) to {e['endpoint']}: {e['spans']} spans, "
                     f"{status}")  # fmt: skip
    cost = extras["cost"]
    if cost is not None:
        unknown = cost["unknown_parts"]
        note = ""
        if unknown:
            known = usd_text(cost["known_usd"])
            note = (f"; {unknown} of {cost['parts']} sessions unknown ({cost['unknown_items']} "
                    f"items without a price; known part {known})")  # fmt: skip
        lines.append(f"cost: {usd_text(cost['usd'])} for {cost['parts']} counted sessions{note}"
                     f" (prices: {cost['prices']})")  # fmt: skip
    return lines


def session_cost_text(extras: dict[str, Any], session_id: str) -> str:
    """A session's cost for the table: "?" unknown, "" not counted (superseded)."""
    from vae.recordings.cost.compute import usd_text

    cost = extras["cost"]
    if cost is None or session_id not in cost["sessions"]:
        return ""
    return usd_text(cost["sessions"][session_id]["usd"])


def scoring_extras(
    reader: RecordingReader, scoring: Any, prices: PriceTable | None
) -> dict[str, Any] | None:
    """A scoring's cost (its judge's calls and the LLM caller's reports) and what the agent
    cost in each session it scored; None without ``--prices``."""
    if prices is None:
        return None
    from vae.recordings.cost.compute import total
    from vae.recordings.read.cost_reads import scoring_cost, session_cost

    scored = sorted({s.session_id for s in reader.scores(scoring.scoring_id)})
    sessions = {}
    for session_id in scored:
        record = reader.session(session_id)
        if record is not None:
            sessions[session_id] = session_cost(reader, record, prices)
    return {
        "scoring": scoring_cost(reader, scoring, prices).to_dict(),
        "agent": {**total(sessions.values()).to_dict(),
                  "sessions": {sid: c.to_dict(with_items=True) for sid, c in sessions.items()}},
        "prices": prices.source,
        "prices_as_of": prices.as_of,
    }  # fmt: skip


def scoring_lines(cost: dict[str, Any]) -> list[str]:
    from vae.recordings.cost.compute import usd_text

    s, a = cost["scoring"], cost["agent"]
    lines = [
        f"cost of scoring: {usd_text(s['usd'])} (judge {usd_text(s['judge']['usd'])}, "
        f"LLM caller {usd_text(s['caller']['usd'])}; {s['unknown_items']} items without a price)",
        f"cost of the agent in the {a['parts']} scored sessions: {usd_text(a['usd'])}"
        f" ({a['unknown_parts']} sessions unknown; known part {usd_text(a['known_usd'])})",
    ]
    for session_id, c in a["sessions"].items():
        lines.append(f"  {session_id}: {usd_text(c['usd'])}")
    lines.append(f"prices: {cost['prices']} (as of {cost['prices_as_of'] or '?'})")
    return lines
