"""An agent's span as the store keeps it, and how it was tied to a session.

A span is tied to a session by the first rule that applies (docs/traces.md):

1. ``session_id``: the span or its resource carries ``vae.session_id``;
2. ``traceparent``: it descends from the session's span vae sent the agent
   (the W3C context of :mod:`.ids`), directly or through its parents;
3. ``window+endpoint``: its resource says which agent endpoint produced it
   (``vae.endpoint``, the URL vae dialled) and it started within that
   session's time window (10 s grace after the end);
4. ``window``: it started within exactly one session's window of the run.

What no rule ties is kept under its run as ``unmatched`` (counted in the
report), never guessed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

SESSION_ID = "session_id"
TRACEPARENT = "traceparent"
WINDOW_ENDPOINT = "window+endpoint"
WINDOW = "window"
UNMATCHED = "unmatched"
#: Every way a span can be tied, strongest first.
MATCHES = (SESSION_ID, TRACEPARENT, WINDOW_ENDPOINT, WINDOW, UNMATCHED)

#: The attribute (span or resource) naming the session a span belongs to.
SESSION_ATTRIBUTE = "vae.session_id"
#: The resource attribute naming the agent endpoint (the URL vae dialled).
ENDPOINT_ATTRIBUTE = "vae.endpoint"
#: Seconds after a session's end during which spans still match it by time.
GRACE_S = 10.0


@dataclass(frozen=True, slots=True)
class AgentSpan:
    """One span the agent exported to vae. Times are unix nanoseconds (the agent's clock)."""

    run_id: str
    session_id: str | None
    trace_id: str
    span_id: str
    parent_span_id: str
    name: str
    kind: str
    service: str
    start_ns: int
    end_ns: int
    status: str = ""
    attributes: dict[str, Any] = field(default_factory=dict)
    resource: dict[str, Any] = field(default_factory=dict)
    matched_by: str = UNMATCHED
    received_ns: int = 0

    @property
    def duration_s(self) -> float:
        return max(0, self.end_ns - self.start_ns) / 1e9

    def attribute(self, name: str) -> Any:
        """A span attribute, else the resource's."""
        return self.attributes.get(name, self.resource.get(name))
