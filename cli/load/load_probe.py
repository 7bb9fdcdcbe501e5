"""What ``vae load`` measures of the harness while a step runs: CPU per process, its loop's lag.

- **CPU**: each harness process on this machine (this process, the bridge's
  workers, a ``--bridge`` on this host) is read from ``/proc/PID/stat``
  (user + system time) at the step's start and end: cores used = CPU
  seconds / wall seconds. Where ``/proc`` is missing (not Linux) or the
  process is elsewhere, the figure is None, never a guess.
- **Event-loop lag** of this process (it runs the callers, and the bridge
  itself without workers): a probe task asks to wake every 20 ms and
  records how late it woke, in the bridge's own bounded histogram
  (:class:`vae.bridge_service.audio.clock_stats.LatenessHistogram`).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from pathlib import Path

from vae.bridge_service.audio.clock_stats import LatenessHistogram

PROBE_PERIOD_S = 0.02


def cpu_seconds(pid: int) -> float | None:
    """User + system CPU seconds of process ``pid`` so far (None: unreadable)."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name (field 2) may hold spaces: split after its closing parenthesis.
    fields = text.rsplit(")", 1)[-1].split()
    try:
        ticks = int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15)
    except (IndexError, ValueError):
        return None
    return ticks / os.sysconf("SC_CLK_TCK")


class CpuWatch:
    """CPU of some processes between :meth:`start` and :meth:`cores`."""

    def __init__(self, pids: dict[str, int]) -> None:
        self.pids = dict(pids)
        self._t0 = time.monotonic()
        self._cpu0 = {name: cpu_seconds(pid) for name, pid in self.pids.items()}

    def cores(self) -> dict[str, float | None]:
        """Cores each process used since the watch started (None: not measurable)."""
        wall = time.monotonic() - self._t0
        out: dict[str, float | None] = {}
        for name, pid in self.pids.items():
            before, now = self._cpu0.get(name), cpu_seconds(pid)
            if before is None or now is None or wall <= 0:
                out[name] = None
            else:
                out[name] = (now - before) / wall
        return out


class LoopLag:
    """This process's event-loop lag, sampled every :data:`PROBE_PERIOD_S` while running."""

    def __init__(self) -> None:
        self.histogram = LatenessHistogram()
        self._task: asyncio.Task[None] | None = None

    async def _probe(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            due = loop.time() + PROBE_PERIOD_S
            await asyncio.sleep(PROBE_PERIOD_S)
            self.histogram.add(int((loop.time() - due) * 1e9))

    def reset(self) -> None:
        """Start a new step's figures."""
        self.histogram = LatenessHistogram()

    def figures(self) -> tuple[float | None, float | None, float | None]:
        """(p50, p99, max) lag in ms since the last reset (None: no sample yet)."""
        h = self.histogram
        if not h.count:
            return None, None, None
        return h.percentile_ms(50), h.percentile_ms(99), h.max_ns / 1e6

    async def __aenter__(self) -> LoopLag:
        self._task = asyncio.create_task(self._probe(), name="vae-load-loop-lag")
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
