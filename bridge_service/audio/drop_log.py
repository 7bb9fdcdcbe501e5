"""Aggregated records of dropped audio and sequence gaps.

A bot flooding the bridge can cause a drop per chunk: one event row each
would be tens of thousands of rows in seconds, and the log would drown what
it records. Instead, per side and cause, everything within one wall-clock
second becomes one event: how many chunks, how many samples, the first and
last sequence numbers, and up to :data:`SAMPLES` example ranges. A window is
written when the next drop of its kind falls in a later second, or when the
session ends (:meth:`DropLog.flush`).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from vae.recordings.models import EventKind, Side

#: Example ranges kept per window.
SAMPLES = 5
_NS = 1_000_000_000

Record = Callable[[Side, EventKind, dict[str, Any]], Awaitable[None]]


@dataclass
class _Window:
    second: int
    started_ns: int
    count: int = 0
    samples: int = 0
    first_sequence: int = -1
    last_sequence: int = -1
    ranges: list[list[int]] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)


class DropLog:
    def __init__(self, record: Record, now_ns: Callable[[], int] = time.time_ns) -> None:
        self._record = record
        #: The session's clock (``session_time``): windows are seconds of session time.
        self._now_ns = now_ns
        self._open: dict[tuple[Side, EventKind, str], _Window] = {}

    async def add(
        self,
        side: Side,
        kind: EventKind,
        cause: str,
        *,
        sequence: int,
        samples: int,
        span: tuple[int, int],
        **extra: Any,
    ) -> bool:
        """Count one drop or gap; True when it opened a new window (notify the bot then)."""
        now = self._now_ns()
        second = now // _NS
        key = (side, kind, cause)
        window = self._open.get(key)
        if window is not None and window.second != second:
            await self._write(key, window)
            window = None
        opened = window is None
        if window is None:
            window = self._open[key] = _Window(second, now, extra=dict(extra))
        window.count += 1
        window.samples += samples
        if window.first_sequence < 0:
            window.first_sequence = sequence
        window.last_sequence = sequence
        if len(window.ranges) < SAMPLES:
            window.ranges.append([span[0], span[1]])
        return opened

    async def flush(self) -> None:
        for key, window in list(self._open.items()):
            await self._write(key, window)

    async def _write(self, key: tuple[Side, EventKind, str], window: _Window) -> None:
        self._open.pop(key, None)
        side, kind, cause = key
        payload = {
            "reason": cause,
            "count": window.count,
            "samples": window.samples,
            "first_sequence": window.first_sequence,
            "last_sequence": window.last_sequence,
            "window_start_ns": window.started_ns,
            "sample_ranges": window.ranges,
            **window.extra,
        }
        await self._record(side, kind, payload)
