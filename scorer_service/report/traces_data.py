"""The agent's spans in the report: per session, a waterfall per turn; per run, how
spans were tied and what vae's own trace export did.

The waterfall's rules are :mod:`vae.recordings.traces.waterfall`'s; how a span
was tied to its session is :mod:`vae.recordings.traces.model`'s, said in
words here because the report must say when spans were matched by time
rather than by the trace context the agent carried.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from vae.recordings.models import SessionRecord
from vae.recordings.read.reader import RecordingReader
from vae.recordings.read.trace_reads import agent_spans, otel_exports, span_matches
from vae.recordings.traces.model import MATCHES
from vae.recordings.traces.waterfall import SLOW_TURN_S, turn_waterfall

#: How each rule reads in the report.
METHOD_TEXT = {
    "session_id": "the vae.session_id attribute",
    "traceparent": "trace context (vae's traceparent)",
    "window+endpoint": "time window and vae.endpoint",
    "window": "time window only",
    "unmatched": "not tied to a session",
}


def session_traces(
    reader: RecordingReader, session: SessionRecord, turns: list[dict[str, Any]]
) -> dict[str, Any] | None:
    """The session's waterfall (None: the agent sent no spans for it)."""
    spans = agent_spans(reader, session.run_id, session.session_id)
    if not spans:
        return None
    methods = Counter(s.matched_by for s in spans)
    return {
        "spans": len(spans),
        "matched_by": {m: methods[m] for m in MATCHES if methods[m]},
        "how": "; ".join(f"{methods[m]} by {METHOD_TEXT[m]}" for m in MATCHES if methods[m]),
        "turns": turn_waterfall(turns, spans, session.started_ns),
        "slow_turn_s": SLOW_TURN_S,
    }


def run_traces(reader: RecordingReader, run_id: str) -> dict[str, Any]:
    """How many agent spans each rule tied, how many stayed unmatched; vae's exports."""
    total: Counter[str] = Counter()
    for counts in span_matches(reader, run_id).values():
        total.update(counts)
    return {
        "matched_by": {m: total[m] for m in MATCHES if total[m]},
        "spans": sum(total.values()),
        "unmatched": total["unmatched"],
        "exports": otel_exports(reader, run_id),
    }
