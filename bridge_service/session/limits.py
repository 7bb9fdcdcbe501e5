"""The limits that end a session on its own clock: maximum duration, a silent first
speaker, inactivity.

Why one module: every clock driver (the real-time open mic, the virtual
lock-step audio clock, text on either clock) checks the same three limits,
always against the session's time (:mod:`bridge_service.session_time`), never
the wall clock — so a scenario whose maximum duration is 30 s ends at exactly
30 s of session time whether that took 30 s or 0.3 s. The virtual text clock
also needs to know *when* the next limit falls due, to jump straight to it
when both bots are waiting (:func:`next_deadline_ns`); the comparisons here and
there are the same, so a jump to a deadline always fires it.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from vae.bridge_service.config import StopReason
from vae.bridge_service.session.ending import EndRequest
from vae.bridge_service.session.first_speaker import silent_first_speaker

if TYPE_CHECKING:
    from vae.bridge_service.session.state import SessionState

_NS = 1_000_000_000


def _after(seconds: float) -> int:
    """A limit of ``seconds`` in whole nanoseconds (rounded up: never early)."""
    return math.ceil(seconds * _NS)


def last_voiced_ns(io: SessionState) -> int:
    """When either side last spoke, on the session's clock (the start if nobody has)."""
    return max(io.started_ns, *(c.last_voiced_ns for c in io.counters.values()))


def check_limits(io: SessionState, now_ns: int) -> None:
    """Ask the session to end when a limit is reached at ``now_ns`` (session clock)."""
    if io.ended:
        return
    plan = io.plan
    if now_ns - io.started_ns >= _after(plan.max_duration_s):
        detail = f"reached the maximum duration of {plan.max_duration_s:g} s"
        if io.time.virtual:
            detail += " of session time (virtual clock)"
        io.request_end(EndRequest(StopReason.MAX_DURATION, detail))
        return
    if now_ns - io.started_ns >= _after(plan.settings.first_speaker_timeout_s):
        silent = silent_first_speaker(plan, io.started_ns, now_ns, io.turns())
        if silent is not None:
            io.request_end(silent)
            return
    timeout = plan.settings.inactivity_timeout_s
    if now_ns - last_voiced_ns(io) >= _after(timeout):
        detail = f"no speech on either side for {timeout:g} s"
        io.request_end(EndRequest(StopReason.INACTIVITY_TIMEOUT, detail))


def next_deadline_ns(io: SessionState) -> int:
    """Unix nanos (session clock) at which :func:`check_limits` next ends the session.

    Assumes nobody speaks meanwhile: the earliest of the maximum duration, the
    first speaker's timeout (while nobody has spoken) and the inactivity timeout.
    """
    plan = io.plan
    due = [
        io.started_ns + _after(plan.max_duration_s),
        last_voiced_ns(io) + _after(plan.settings.inactivity_timeout_s),
    ]
    if not any(io.turns().values()):
        due.append(io.started_ns + _after(plan.settings.first_speaker_timeout_s))
    return min(due)
