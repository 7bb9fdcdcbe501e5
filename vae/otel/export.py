"""Sending vae's spans through the SDK's OTLP/HTTP exporter, bounded in time.

A collector that cannot be reached, answers 500 or is slow must never fail a
run nor hold it up: every export (all batches of it) has one deadline, at most
:data:`DEADLINE_S`. The exporter runs in a daemon thread; at the deadline it
is shut down (which ends its retries) and whatever was not acknowledged is
counted as dropped. The SDK's own log messages are caught, not printed: the
caller logs one WARNING line (:func:`warn_once`) with the count and the last
reason the SDK gave, and records the counts (``vae runs show --json``).
"""

from __future__ import annotations

import contextlib
import logging
import re
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from vae.otel import require
from vae.otel.spans import SpanLike

log = logging.getLogger("vae.otel")

#: The longest any export may take, all batches together, seconds.
DEADLINE_S = 2.0
#: Spans per request.
BATCH = 512


@dataclass(frozen=True)
class ExportResult:
    endpoint: str
    spans: int
    dropped: int
    error: str = ""
    elapsed_s: float = 0.0

    @property
    def ok(self) -> bool:
        return self.dropped == 0 and not self.error

    def to_dict(self) -> dict[str, Any]:
        return {
            "endpoint": self.endpoint,
            "spans": self.spans,
            "dropped": self.dropped,
            "error": self.error,
            "elapsed_s": round(self.elapsed_s, 3),
        }


class _Caught(logging.Handler):
    """Keeps the SDK's first message of an export instead of printing it."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.last = ""

    def emit(self, record: logging.LogRecord) -> None:
        if record.levelno >= logging.WARNING and not self.last:  # the first says why
            try:
                self.last = record.getMessage()[:300]
            except Exception:
                self.last = str(record.msg)[:300]


_caught = _Caught()


def _silence() -> None:
    sdk = logging.getLogger("opentelemetry")
    if _caught not in sdk.handlers:
        sdk.addHandler(_caught)
        sdk.propagate = False
        sdk.setLevel(logging.WARNING)


def reason(sdk_message: str, deadline_s: float) -> str:
    """Why an export failed, in a few words, from the SDK's own (caught) message."""
    code = re.search(r"code: (\d{3})", sdk_message)
    if code:
        return f"the collector answered HTTP {code.group(1)}"
    lowered = sdk_message.lower()
    if "refused" in lowered or "newconnectionerror" in lowered or "name or service" in lowered:
        return "the collector cannot be reached (connection refused)"
    if "timeout" in lowered or "timed out" in lowered:
        return f"the collector did not answer within {deadline_s:g} s"
    return "the collector did not accept the spans"


def _readable(spans: Sequence[SpanLike], service: str) -> list[Any]:
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import Event, ReadableSpan
    from opentelemetry.sdk.util.instrumentation import InstrumentationScope
    from opentelemetry.trace import SpanContext, SpanKind, Status, StatusCode, TraceFlags

    import vae

    resource = Resource.create({"service.name": service, "service.version": vae.__version__})
    scope = InstrumentationScope("vae", vae.__version__)
    kinds = {"client": SpanKind.CLIENT, "server": SpanKind.SERVER}
    statuses = {"ok": StatusCode.OK, "error": StatusCode.ERROR}
    flags = TraceFlags(TraceFlags.SAMPLED)
    out = []
    for s in spans:
        trace_id = int(s.trace_id, 16)
        context = SpanContext(trace_id, int(s.span_id, 16), False, flags)
        parent = (
            SpanContext(trace_id, int(s.parent_span_id, 16), False, flags)
            if s.parent_span_id
            else None
        )
        events = [Event(e.name, _clean(e.attributes), e.time_ns) for e in s.events]
        out.append(
            ReadableSpan(
                name=s.name,
                context=context,
                parent=parent,
                resource=resource,
                attributes=_clean(s.attributes),
                events=events,
                kind=kinds.get(s.kind, SpanKind.INTERNAL),
                status=Status(statuses.get(s.status, StatusCode.UNSET)),
                start_time=s.start_ns,
                end_time=max(s.end_ns, s.start_ns),
                instrumentation_scope=scope,
            )
        )
    return out


def _clean(attributes: dict[str, Any]) -> dict[str, Any]:
    """OpenTelemetry takes str, bool, int, float and lists of one of them; None is left out."""
    out: dict[str, Any] = {}
    for key, value in attributes.items():
        if value is None:
            continue
        if isinstance(value, str | bool | int | float):
            out[key] = value
        elif isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
            out[key] = list(value)
        else:
            out[key] = str(value)
    return out


def export(
    spans: Sequence[SpanLike], endpoint: str, service: str = "vae", deadline_s: float = DEADLINE_S
) -> ExportResult:
    """Send ``spans`` to ``endpoint`` (the full traces URL); never raises for the collector."""
    require()
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace.export import SpanExportResult

    _silence()
    started = time.monotonic()
    readable = _readable(spans, service)
    exporter = OTLPSpanExporter(endpoint=endpoint, timeout=max(0.1, deadline_s * 0.9))
    sent = [0]
    failure = [""]
    _caught.last = ""

    def work() -> None:
        for i in range(0, len(readable), BATCH):
            batch = readable[i : i + BATCH]
            try:
                result = exporter.export(batch)
            except Exception as exc:  # the SDK should not raise; never let it escape
                failure[0] = f"{type(exc).__name__}: {exc}"
                return
            if result is not SpanExportResult.SUCCESS:
                failure[0] = reason(_caught.last, deadline_s)
                return
            sent[0] += len(batch)

    worker = threading.Thread(target=work, name="vae-otel-export", daemon=True)
    worker.start()
    worker.join(deadline_s)
    if worker.is_alive():
        failure[0] = failure[0] or f"the collector did not answer within {deadline_s:g} s"
    with contextlib.suppress(Exception):
        exporter.shutdown()  # type: ignore[no-untyped-call]  # ends any retries
    elapsed = time.monotonic() - started
    dropped = len(readable) - sent[0]
    return ExportResult(endpoint, len(readable), dropped, failure[0] if dropped else "", elapsed)


def warn_once(result: ExportResult, what: str) -> None:
    """The one WARNING line of an export that lost spans (nothing when all arrived)."""
    if result.ok:
        log.info("exported %s to %s: %d spans", what, result.endpoint, result.spans)
        return
    log.warning(
        "OpenTelemetry: %d of %d spans of %s were dropped: %s (%s); the results are not affected",
        result.dropped,
        result.spans,
        what,
        result.error or "the collector did not accept the spans",
        result.endpoint,
    )
