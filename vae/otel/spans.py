"""Spans as plain records: what the receiver decodes and what the exporter sends.

No OpenTelemetry type crosses this boundary, so the services work on these
records only: :class:`InSpan` in, anything shaped as :class:`SpanLike` out.
Ids are lowercase hex (32 digits for a trace, 16 for a span); times are unix
nanoseconds.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

Attributes = dict[str, Any]


@dataclass(frozen=True, slots=True)
class InSpan:
    """A span received over OTLP, its values already bounded (:mod:`.decode`)."""

    trace_id: str
    span_id: str
    parent_span_id: str
    name: str
    kind: str
    start_ns: int
    end_ns: int
    status: str = ""
    attributes: Attributes = field(default_factory=dict)
    resource: Attributes = field(default_factory=dict)

    @property
    def service(self) -> str:
        return str(self.resource.get("service.name", ""))


class EventLike(Protocol):
    """An event of a span vae exports."""

    @property
    def name(self) -> str: ...
    @property
    def time_ns(self) -> int: ...
    @property
    def attributes(self) -> Attributes: ...


class SpanLike(Protocol):
    """A span vae exports, with the ids it chose. The store builds these
    (``vae.recordings.traces.outgoing.TraceSpan``); nothing here depends on it."""

    @property
    def trace_id(self) -> str: ...
    @property
    def span_id(self) -> str: ...
    @property
    def parent_span_id(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def start_ns(self) -> int: ...
    @property
    def end_ns(self) -> int: ...
    @property
    def attributes(self) -> Attributes: ...
    @property
    def events(self) -> Sequence[EventLike]: ...
    @property
    def kind(self) -> str:
        """ "internal", "client" (a call out, as a judge's) or "server"."""

    @property
    def status(self) -> str:
        """ "" (unset), "ok" or "error"."""
