"""The sessions the agent's spans may belong to, with what ties a span to each."""

from __future__ import annotations

import time
from dataclasses import dataclass

from vae.recordings.traces import ids
from vae.recordings.traces.model import GRACE_S

#: A span may start this long before its session's recorded start (an agent sets up
#: its pipeline as vae connects, before the session's first frame).
LEAD_S = 5.0


@dataclass
class SessionWindow:
    run_id: str
    session_id: str
    #: The agent endpoint vae dialled (a connector URL); "" for a gRPC bot.
    endpoint: str
    started_ns: int
    ended_ns: int | None = None

    @property
    def trace_id(self) -> str:
        return ids.run_trace_id(self.run_id)

    @property
    def span_id(self) -> str:
        return ids.session_span_id(self.session_id)

    def holds(self, t_ns: int, now_ns: int, strict: bool) -> bool:
        """Whether a span starting at ``t_ns`` is in the window (``strict``: no lead nor grace)."""
        end = self.ended_ns if self.ended_ns is not None else now_ns
        if strict:
            return self.started_ns <= t_ns <= end
        return self.started_ns - LEAD_S * 1e9 <= t_ns <= end + GRACE_S * 1e9

    def expired(self, now_ns: int) -> bool:
        return self.ended_ns is not None and now_ns > self.ended_ns + GRACE_S * 1e9


class Registry:
    """Sessions by id; forgotten :data:`GRACE_S` after they end (:meth:`forget_expired`)."""

    def __init__(self) -> None:
        self.sessions: dict[str, SessionWindow] = {}

    def started(self, run_id: str, session_id: str, endpoint: str, started_ns: int) -> None:
        self.sessions[session_id] = SessionWindow(run_id, session_id, endpoint, started_ns)

    def ended(self, session_id: str, ended_ns: int | None = None) -> None:
        window = self.sessions.get(session_id)
        if window is not None and window.ended_ns is None:
            window.ended_ns = ended_ns or time.time_ns()

    def by_span_id(self) -> dict[str, SessionWindow]:
        return {w.span_id: w for w in self.sessions.values()}

    def run_of_trace(self, trace_id: str) -> str | None:
        for w in self.sessions.values():
            if w.trace_id == trace_id:
                return w.run_id
        return None

    def candidates(
        self, t_ns: int, endpoint: str, now_ns: int, run_id: str | None = None
    ) -> list[SessionWindow]:
        """The one session a span starting at ``t_ns`` falls in (by endpoint when given),
        preferring a window without lead and grace; empty when none or several."""
        pool = [w for w in self.sessions.values() if run_id is None or w.run_id == run_id]
        if endpoint:
            pool = [w for w in pool if w.endpoint == endpoint]
        for strict in (True, False):
            found = [w for w in pool if w.holds(t_ns, now_ns, strict)]
            if len(found) == 1:
                return found
            if len(found) > 1:
                return found
        return []

    def forget_expired(self, now_ns: int) -> list[SessionWindow]:
        gone = [w for w in self.sessions.values() if w.expired(now_ns)]
        for w in gone:
            del self.sessions[w.session_id]
        return gone

    def live_runs(self) -> set[str]:
        return {w.run_id for w in self.sessions.values()}
