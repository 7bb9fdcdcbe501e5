"""The seam where a run decides where an attempt runs: here, or in another process.

Why a seam: the run executor (``run_exec``) owns scheduling, retries and
progress; *where* a paired session's audio flows is a separate decision. A
:class:`Dispatch` is handed each attempt once its bots are paired and either
runs it elsewhere — today on one of this bridge's worker processes
(``vae.bridge_service.workers.dispatch``); a shared session queue of several
bridges could implement the same — returning the recorded result, or
returns None having touched nothing, and the executor runs it here.
A :class:`SharedQueue` (``vae.bridge_service.shared``: several bridges on one
PostgreSQL store) takes an attempt before any bots are paired: whichever
bridge has a free pair serves it.

Whatever runs an attempt registers a :class:`LiveSession` with the run, so a
cancel, a shutdown or a storage failure reaches it wherever it runs.
"""

from __future__ import annotations

from typing import Protocol

from vae.bridge_service.config import RunSettings, StopReason
from vae.bridge_service.connectors.base import SideEndpoint
from vae.bridge_service.runs.attempt import SessionResult
from vae.bridge_service.runs.model import RunState
from vae.bridge_service.session.plan import SessionPlan
from vae.recordings.models import Side


class NotRun(Exception):
    """The attempt was ended (cancel, shutdown) before it started: nothing was recorded."""


class LiveSession(Protocol):
    """A running attempt, as the run manager reaches it (cancel, shutdown)."""

    @property
    def plan(self) -> SessionPlan: ...

    def request_end(self, reason: StopReason, detail: str = "") -> None: ...


class Dispatch(Protocol):
    async def run_elsewhere(
        self,
        run: RunState,
        plan: SessionPlan,
        endpoints: dict[Side, SideEndpoint],
        live: dict[str, LiveSession],
    ) -> SessionResult | None:
        """Run the attempt in another process and return its result (announced to the
        run's watchers); None when it cannot, with the endpoints untouched. Raise
        :class:`NotRun` when it was ended before it started."""
        ...


class SharedQueue(Protocol):
    """Bridges sharing one store: an attempt is queued there and served by any of them."""

    def takes(self, settings: RunSettings) -> bool:
        """Whether a run with ``settings`` goes through the queue (else it pairs here)."""
        ...

    async def running_elsewhere(self, run_id: str) -> str:
        """The address of a live bridge that is running ``run_id`` ("" when none is)."""
        ...

    async def run_queued(
        self, run: RunState, plan: SessionPlan, live: dict[str, LiveSession]
    ) -> SessionResult:
        """Queue the attempt, wait for a bridge to serve it, return its recorded result
        (announced to the run's watchers). Raise :class:`NotRun` when it was ended
        before any bridge took it."""
        ...
