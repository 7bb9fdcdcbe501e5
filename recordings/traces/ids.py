"""Trace and span ids derived from vae's own names, and the ``traceparent`` vae sends.

Why derived, not random: the bridge sends each session's context to the agent
when the session starts, exports the run's trace when the run ends, and a
``vae rescore`` days later adds its scoring to the same trace. Hashing the run
id (the trace) and the session id (the session's span) gives all of them the
same ids with nothing to store or pass around. The ids are 16 and 8 random-looking
bytes as W3C Trace Context requires (never all zero).
"""

from __future__ import annotations

import hashlib
import re

_TRACEPARENT = re.compile(r"^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$")


def _digest(kind: str, key: str, size: int) -> str:
    raw = hashlib.sha256(f"vae:{kind}:{key}".encode()).digest()[:size]
    if not any(raw):  # a W3C id is never all zero
        raw = b"\x01" + raw[1:]
    return raw.hex()


def run_trace_id(run_id: str) -> str:
    """The trace of a run: 32 hex digits."""
    return _digest("run", run_id, 16)


def run_span_id(run_id: str) -> str:
    """The run's root span."""
    return _digest("run-span", run_id, 8)


def session_span_id(session_id: str) -> str:
    """A session's span: the parent vae gives the agent's spans."""
    return _digest("session", session_id, 8)


def span_id(*parts: str) -> str:
    """Any other span of vae's trace (a turn, a scoring, a judge call), by its parts."""
    return _digest("span", "\x1f".join(parts), 8)


def traceparent(run_id: str, session_id: str) -> str:
    """The W3C ``traceparent`` an agent gets for a session (sampled)."""
    return f"00-{run_trace_id(run_id)}-{session_span_id(session_id)}-01"


def parse_traceparent(value: str) -> tuple[str, str] | None:
    """``(trace_id, parent_span_id)`` of a ``traceparent`` header, or None if malformed."""
    m = _TRACEPARENT.match(value.strip().lower())
    if m is None or set(m.group(1)) == {"0"} or set(m.group(2)) == {"0"}:
        return None
    return m.group(1), m.group(2)
