"""A session's time: one seam, two clocks (real time and the virtual lock-step clock).

Why one seam: everything time-based in a session — when audio and events
arrived, the times recorded with every segment and event, the turn counter's
gaps, inactivity, the maximum duration, the silent first speaker, the end of
the call — must read the *session's* clock, never the wall clock directly.
On the real clock the two are the same; on the virtual clock
(``RunOptions.clock`` virtual, docs/contract.md "The virtual clock") the
session's time advances only when both bots have answered a step, as fast as
they keep up, so a 30 s call may take 0.3 s of wall time and still end at
exactly 30 s of session time.

Both clocks have the same shape: ``started_ns`` (unix nanos: a virtual
session is anchored at the wall time it started, so runs still sort by when
they ran), ``now_ns()`` (unix nanos on the session's clock) and
``elapsed_ns()``. :class:`RealTime` binds ``now_ns`` to :func:`time.time_ns`
itself, so the real-time hot path pays nothing for the seam.
:class:`VirtualTime` is moved forward only by the session's clock driver
(:mod:`vae.bridge_service.clocks.lockstep`, :mod:`vae.bridge_service.clocks.text_clock`), never
backwards.

What stays on the wall clock on purpose: limits that protect the bridge
(events per second, notices once a second, the FinalState timeout, the
pairing timeout) and the wall bound on a virtual step (a bot that stops
answering: ``clock_stalled``).
"""

from __future__ import annotations

import time
from collections.abc import Callable

REAL = "real"
VIRTUAL = "virtual"
#: The clocks a session runs on.
CLOCKS = (REAL, VIRTUAL)
#: A run's choice, not a session's clock: each session takes the virtual clock when both
#: of its bots can follow it, else the real one (``vae.bridge_service.runs.tiers``).
AUTO = "auto"
#: What ``RunOptions.clock`` may ask for.
RUN_CLOCKS = (REAL, VIRTUAL, AUTO)


class RealTime:
    """The session's time is the wall clock."""

    virtual = False
    kind = REAL

    def __init__(self) -> None:
        self.started_ns = time.time_ns()
        #: Unix nanos now: the builtin itself, so a call costs what ``time.time_ns()`` does.
        self.now_ns: Callable[[], int] = time.time_ns

    def elapsed_ns(self) -> int:
        return self.now_ns() - self.started_ns


class VirtualTime:
    """The session's time is a counter its clock driver moves forward."""

    virtual = True
    kind = VIRTUAL

    def __init__(self) -> None:
        self.started_ns = time.time_ns()
        self._elapsed_ns = 0

    def now_ns(self) -> int:
        return self.started_ns + self._elapsed_ns

    def elapsed_ns(self) -> int:
        return self._elapsed_ns

    def advance_to(self, elapsed_ns: int) -> None:
        """Move the session's time to ``elapsed_ns`` after its start (never back)."""
        if elapsed_ns < self._elapsed_ns:
            raise ValueError(
                f"the virtual clock cannot go back ({elapsed_ns} < {self._elapsed_ns} ns)"
            )
        self._elapsed_ns = elapsed_ns


SessionTime = RealTime | VirtualTime


def session_time(clock: str) -> SessionTime:
    """The time of a new session on ``clock`` (``real`` or ``virtual``)."""
    if clock == VIRTUAL:
        return VirtualTime()
    if clock == REAL:
        return RealTime()
    raise ValueError(f"unknown clock {clock!r} (use {' or '.join(CLOCKS)})")
