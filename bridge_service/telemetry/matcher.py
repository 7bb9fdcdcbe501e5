"""Tying each received span to its session, and keeping it.

The rules, strongest first, are :mod:`vae.recordings.traces.model`'s. Spans
arrive when they end, children before their parents (an agent's conversation
span, the one whose parent is vae's session span, ends last), so a span of a
run's trace whose parent is not known yet waits here until an ancestor ties
it, or until :data:`~vae.recordings.traces.model.GRACE_S` has passed; then the
time window decides, else it is kept under its run as ``unmatched``. A span
of a trace vae did not start (an agent that does not propagate context) is
tied by time window — with ``vae.endpoint`` when its resource names the
endpoint — and a span of that trace whose own window cannot tell follows it.

What is held is bounded (:data:`MAX_PENDING`); past it, spans are refused and
the sender is told (partial success). Spans of no run at all are dropped and
counted.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable
from dataclasses import dataclass

from vae.bridge_service.telemetry.registry import Registry, SessionWindow
from vae.otel.spans import InSpan
from vae.recordings.errors import StoreError
from vae.recordings.traces.model import (
    ENDPOINT_ATTRIBUTE,
    GRACE_S,
    SESSION_ATTRIBUTE,
    SESSION_ID,
    TRACEPARENT,
    UNMATCHED,
    WINDOW,
    WINDOW_ENDPOINT,
    AgentSpan,
)
from vae.recordings.write.trace_rows import add_agent_spans
from vae.recordings.write.writer import RecordingWriter

log = logging.getLogger("vae.bridge.traces")

#: Spans held while their parent has not arrived.
MAX_PENDING = 50_000


@dataclass(frozen=True)
class Tie:
    run_id: str
    session_id: str | None
    matched_by: str


@dataclass
class MatchStats:
    received: int = 0
    tied: int = 0
    unmatched: int = 0
    unrelated: int = 0
    refused: int = 0


class Matcher:
    def __init__(self, registry: Registry, writer: RecordingWriter) -> None:
        self.registry = registry
        self.writer = writer
        self.stats = MatchStats()
        #: trace id -> span id -> its tie (the parents later spans inherit from).
        self._known: dict[str, dict[str, Tie]] = {}
        #: A trace vae did not start, tied by window: the rest of it follows.
        self._foreign: dict[str, Tie] = {}
        #: trace id -> spans waiting for an ancestor, with when they arrived.
        self._pending: dict[str, list[tuple[InSpan, int]]] = {}
        self._held = 0

    # ------------------------------------------------------------ the receiver's sink
    async def take(self, spans: list[InSpan]) -> int:
        """Tie and keep ``spans``; answers how many were refused (buffer full)."""
        now = time.time_ns()
        self.stats.received += len(spans)
        ready: list[tuple[InSpan, Tie]] = []
        refused = 0
        touched: set[str] = set()
        for span in spans:
            tie = self._tie(span, now)
            if tie is not None:
                self._remember(span, tie)
                ready.append((span, tie))
                touched.add(span.trace_id)
            elif self.registry.run_of_trace(span.trace_id) is not None:
                if self._held >= MAX_PENDING:
                    refused += 1
                    continue
                self._pending.setdefault(span.trace_id, []).append((span, now))
                self._held += 1
            else:
                self.stats.unrelated += 1
        for trace_id in touched:
            ready += self._resolve(trace_id)
        self.stats.refused += refused
        await self._keep(ready, now)
        return refused

    def _tie(self, span: InSpan, now: int) -> Tie | None:
        named = span.attributes.get(SESSION_ATTRIBUTE) or span.resource.get(SESSION_ATTRIBUTE)
        window = self.registry.sessions.get(str(named)) if named else None
        if window is not None:
            return Tie(window.run_id, window.session_id, SESSION_ID)
        if self.registry.run_of_trace(span.trace_id) is not None:
            parent = self.registry.by_span_id().get(span.parent_span_id)
            if parent is not None and parent.trace_id == span.trace_id:
                return Tie(parent.run_id, parent.session_id, TRACEPARENT)
            return self._known.get(span.trace_id, {}).get(span.parent_span_id)
        tie = self._by_window(span, now, None)
        if tie is not None and tie.session_id is not None:
            self._foreign[span.trace_id] = tie  # the rest of its trace follows it...
            return tie
        return self._foreign.get(span.trace_id, tie)  # ...when its own window cannot tell

    def _by_window(self, span: InSpan, now: int, run_id: str | None) -> Tie | None:
        endpoint = str(span.resource.get(ENDPOINT_ATTRIBUTE) or "")
        found = self.registry.candidates(span.start_ns, endpoint, now, run_id)
        if len(found) == 1:
            return Tie(
                found[0].run_id, found[0].session_id, WINDOW_ENDPOINT if endpoint else WINDOW
            )
        runs = {w.run_id for w in found}
        if len(runs) == 1:  # several sessions of one run: kept, not guessed
            return Tie(runs.pop(), None, UNMATCHED)
        return None

    def _remember(self, span: InSpan, tie: Tie) -> None:
        if tie.session_id is not None:
            self._known.setdefault(span.trace_id, {})[span.span_id] = tie

    def _resolve(self, trace_id: str) -> list[tuple[InSpan, Tie]]:
        """Pending spans of ``trace_id`` whose ancestors are now tied (to a fixed point)."""
        out: list[tuple[InSpan, Tie]] = []
        waiting = self._pending.get(trace_id, [])
        known = self._known.get(trace_id, {})
        progress = True
        while waiting and progress:
            progress = False
            still = []
            for span, at in waiting:
                tie = known.get(span.parent_span_id)
                if tie is None:
                    still.append((span, at))
                    continue
                tie = Tie(tie.run_id, tie.session_id, TRACEPARENT)
                self._remember(span, tie)
                out.append((span, tie))
                progress = True
            waiting = still
        self._held -= len(out)
        if waiting:
            self._pending[trace_id] = waiting
        else:
            self._pending.pop(trace_id, None)
        return out

    # ------------------------------------------------------------ the sweep
    async def sweep(self, now: int | None = None, flush: bool = False) -> None:
        """Decide spans that waited :data:`GRACE_S` (all of them with ``flush``); forget
        sessions ended more than the grace ago, and their traces."""
        now = now or time.time_ns()
        ready: list[tuple[InSpan, Tie]] = []
        for trace_id in list(self._pending):
            run_id = self.registry.run_of_trace(trace_id)
            keep: list[tuple[InSpan, int]] = []
            for span, at in self._pending[trace_id]:
                if not flush and now - at < GRACE_S * 1e9 and run_id is not None:
                    keep.append((span, at))
                    continue
                tie = self._by_window(span, now, run_id) if run_id else None
                if tie is None or tie.run_id != run_id:
                    tie = Tie(run_id or "", None, UNMATCHED) if run_id else None
                if tie is None:
                    self.stats.unrelated += 1
                else:
                    ready.append((span, tie))
                self._held -= 1
            if keep:
                self._pending[trace_id] = keep
            else:
                del self._pending[trace_id]
        await self._keep(ready, now)
        gone = self.registry.forget_expired(now)
        self._forget(gone)

    def _forget(self, gone: Iterable[SessionWindow]) -> None:
        ids = {w.session_id for w in gone}
        if not ids:
            return
        for trace_id in [t for t, tie in self._foreign.items() if tie.session_id in ids]:
            del self._foreign[trace_id]
        live_traces = {w.trace_id for w in self.registry.sessions.values()}
        for trace_id in [t for t in self._known if t not in live_traces]:
            if trace_id not in self._pending:
                del self._known[trace_id]

    async def _keep(self, ready: list[tuple[InSpan, Tie]], now: int) -> None:
        if not ready:
            return
        rows = [
            AgentSpan(
                tie.run_id, tie.session_id, s.trace_id, s.span_id, s.parent_span_id, s.name,
                s.kind, s.service, s.start_ns, s.end_ns, s.status, s.attributes, s.resource,
                tie.matched_by, now,
            )
            for s, tie in ready
        ]  # fmt: skip
        for row in rows:
            if row.session_id is None:
                self.stats.unmatched += 1
            else:
                self.stats.tied += 1
        try:
            await add_agent_spans(self.writer, rows)
        except StoreError as exc:
            log.warning("could not keep %d agent spans: %s", len(rows), exc)
