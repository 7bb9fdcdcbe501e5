"""Writing the rows of OpenTelemetry in and out: the agent's spans, vae's exports.

Through the store's one writer (its ``execute``/``executemany``), so these
rows are committed in order with the rest. A run recorded redacted
(``vae run --redact``) keeps no free text of the agent's spans: only numbers,
booleans and the names of models and services, since a span's ``text`` or
``output`` attribute is what the caller said or heard.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from vae.recordings.traces.model import AgentSpan

if TYPE_CHECKING:
    from vae.recordings.write.writer import RecordingWriter

#: String attributes a redacted run keeps (names, never what was said).
_NAMES = frozenset(
    {"service.name", "gen_ai.system", "gen_ai.provider.name", "gen_ai.request.model",
     "gen_ai.response.model", "gen_ai.operation.name", "vae.session_id", "vae.endpoint",
     "model", "voice_id"}
)  # fmt: skip


def _dumps(value: dict[str, Any]) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=str)


def _names_only(values: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in values.items() if not isinstance(v, str | list) or k in _NAMES}


async def add_agent_spans(writer: RecordingWriter, spans: Sequence[AgentSpan]) -> None:
    if not spans:
        return
    privacy = writer.privacy
    rows = []
    for s in spans:
        attributes, resource = s.attributes, s.resource
        if privacy is not None and privacy.covers_run(s.run_id):
            attributes, resource = _names_only(attributes), _names_only(resource)
        rows.append(
            (s.run_id, s.session_id, s.trace_id, s.span_id, s.parent_span_id, s.name, s.kind,
             s.service, s.start_ns, s.end_ns, s.status, _dumps(attributes), _dumps(resource),
             s.matched_by, s.received_ns or time.time_ns())
        )  # fmt: skip
    await writer.executemany(
        "INSERT INTO agent_spans (run_id, session_id, trace_id, span_id, parent_span_id, name,"
        " kind, service, start_ns, end_ns, status, attributes_json, resource_json, matched_by,"
        " received_ns) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        rows,
    )


async def add_otel_export(
    writer: RecordingWriter, run_id: str, scoring_id: str, result: dict[str, Any]
) -> None:
    """One export of vae's trace (``vae.otel.export.ExportResult.to_dict``)."""
    await writer.execute(
        "INSERT INTO otel_exports (run_id, scoring_id, endpoint, spans, dropped, error,"
        " elapsed_s, created_ns) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (run_id, scoring_id, str(result.get("endpoint", "")), int(result.get("spans", 0)),
         int(result.get("dropped", 0)), str(result.get("error", ""))[:500],
         float(result.get("elapsed_s", 0.0)), time.time_ns()),
    )  # fmt: skip
