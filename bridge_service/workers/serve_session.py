"""One attempt at a worker: wait for the redirected bots, run the session, record it.

Why a module of its own: this is the worker's whole job, and it must run a
session exactly as a bridge without workers does — the same
:class:`~vae.bridge_service.runs.attempt.Session`, the same store writer and the same
unrun records (``peer_never_joined`` when a bot never arrives,
``bridge_error`` when the bridge fails) — while the front door keeps retries,
progress and the run's status. It changes with the attempt's lifecycle at a
worker, not with the wire to the front door (``worker_servicer``).

An end asked for before both bots arrived (a cancel, a shutdown) records
nothing: the front door treats it as it treats a cancel while pairing.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from vae.bridge_service.config import StopReason
from vae.bridge_service.runs.attempt import Session, SessionResult
from vae.bridge_service.runs.attempt_report import record_unrun_row
from vae.bridge_service.runs.pairing import PairingTimeout
from vae.bridge_service.session.plan import SessionPlan
from vae.bridge_service.workers.tickets import Arrival, TicketDesk
from vae.recordings.models import Side
from vae.recordings.write.writer import RecordingWriter

log = logging.getLogger("vae.bridge.worker")


@dataclass(frozen=True)
class EndAsked:
    reason: StopReason
    detail: str


class EndBox:
    """An end asked for from outside, delivered to the session once it exists."""

    def __init__(self) -> None:
        self.asked: EndAsked | None = None
        self.event = asyncio.Event()
        self.session: Session | None = None

    def request(self, reason: StopReason, detail: str) -> None:
        if self.asked is None:
            self.asked = EndAsked(reason, detail)
            self.event.set()
        if self.session is not None:
            self.session.request_end(reason, detail)

    def attach(self, session: Session) -> None:
        self.session = session
        if self.asked is not None:
            session.request_end(self.asked.reason, self.asked.detail)


async def serve_attempt(
    plan: SessionPlan,
    desk: TicketDesk,
    arrival: Arrival,
    writer: RecordingWriter,
    ends: EndBox,
    started: Callable[[int], Awaitable[None]],
) -> SessionResult | None:
    """Run the attempt; None when an end was asked for before both bots arrived."""
    label = desk.label
    claim = asyncio.ensure_future(desk.claim(arrival, plan.settings.pairing_timeout_s))
    asked = asyncio.ensure_future(ends.event.wait())
    try:
        await asyncio.wait([claim, asked], return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in (claim, asked):
            task.cancel()  # a no-op on the one that finished
        await asyncio.gather(claim, asked, return_exceptions=True)
    why = "the session stopped waiting for this bot"
    try:
        if claim.cancelled():
            why = "the session was ended before this bot arrived"
            return None
        try:
            endpoints = claim.result()
        except PairingTimeout as exc:
            detail = f"{exc} (redirected to {label})"
            return await record_unrun_row(writer, plan, StopReason.PEER_NEVER_JOINED, detail)
    finally:
        desk.close(arrival, why)
    session = Session(plan, endpoints[Side.USER], endpoints[Side.AGENT], writer)
    ends.attach(session)
    try:
        await started(session.io.started_ns)
        try:
            return await session.run()
        except Exception as exc:
            log.exception("%s attempt %d: the bridge failed", plan.scenario.name, plan.attempt)
            if session.result is not None:
                return session.result
            detail = f"the bridge failed: {type(exc).__name__}: {exc}"
            return await record_unrun_row(writer, plan, StopReason.BRIDGE_ERROR, detail)
    finally:
        await session.io.close_all()
