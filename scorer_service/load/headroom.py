"""Harness headroom: was the bridge (or the callers) saturated, rather than the agent?

A load test measures the agent only while the harness keeps time. Per step
and per harness process this gathers three figures:

- **event-loop lag**: how late the process's clock ticked, from what each
  session recorded (``sessions.clock_json``): the median lateness of its
  ticks, the median over the process's sessions, beside the p99 and the
  worst. The limit is on the median: a saturated loop is late on most
  ticks, while one pause of a busy machine (another program's burst, a
  garbage collection) makes a few ticks very late and says nothing about
  the harness's capacity; ``vae load`` adds its own loop's lag, measured by
  a probe, for the process it runs the callers (and, without workers, the
  bridge) in;
- **CPU**: cores the process used over the step (measured by ``vae load``
  from ``/proc`` for processes on its machine; None elsewhere);
- **dropped frames**: ticks the clock skipped because its loop was blocked
  for more than ten frames, as a share of the ticks due (a stopped or
  starved bridge drops a long run of them);
- **the callers' errors**: the simulated callers are the harness too; a
  caller that reported an error in a call (a final state it could not
  send in time, a stream that broke) means the harness did not play its
  part, whoever slowed it.

A step is **harness-limited** when any harness process exceeds a limit
(:class:`Limits`): its lag, its CPU, or its dropped frames. Such a step is
never the agent's knee (:mod:`vae.scorer_service.load.knee`). On the virtual
clock the harness cannot make the agent look slower (time waits for the
bots), so no step there is harness-limited; CPU is still reported.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from vae.scorer_service.load.calls import Call


@dataclass(frozen=True)
class Limits:
    #: Median tick lateness above this: the loop could not keep time.
    max_lag_ms: float = 10.0
    #: Cores one harness process may use (Python runs one core per process).
    max_cpu: float = 0.9
    #: Share of the ticks due that may be skipped.
    max_dropped: float = 0.05


@dataclass(frozen=True)
class ProcessLoad:
    """One harness process over one step."""

    name: str
    #: What it runs: "bridge", "bridge + callers", "callers", "worker".
    role: str = "bridge"
    cpu: float | None = None
    lag_p50_ms: float | None = None
    lag_p99_ms: float | None = None
    lag_max_ms: float | None = None
    ticks: int = 0
    dropped_frames: int = 0
    dropped_samples: int = 0
    sessions: int = 0

    @property
    def dropped_share(self) -> float:
        due = self.ticks + self.dropped_frames
        return self.dropped_frames / due if due else 0.0

    def over(self, limits: Limits) -> list[str]:
        """Which limits this process exceeded, as phrases."""
        out = []
        if self.lag_p50_ms is not None and self.lag_p50_ms > limits.max_lag_ms:
            out.append(f"{self.name}: event-loop lag (median) {self.lag_p50_ms:.1f} ms > "
                       f"{limits.max_lag_ms:g} ms")  # fmt: skip
        if self.cpu is not None and self.cpu > limits.max_cpu:
            out.append(f"{self.name}: CPU {self.cpu:.2f} cores > {limits.max_cpu:.2f}")
        if self.dropped_share > limits.max_dropped:
            out.append(f"{self.name}: {self.dropped_frames} frames dropped "
                       f"({self.dropped_share:.1%} of ticks)")  # fmt: skip
        return out

    def to_dict(self) -> dict[str, Any]:
        def r(x: float | None) -> float | None:
            return None if x is None else round(x, 3)

        return {
            "name": self.name,
            "role": self.role,
            "cpu_cores": r(self.cpu),
            "loop_lag_p50_ms": r(self.lag_p50_ms),
            "loop_lag_p99_ms": r(self.lag_p99_ms),
            "loop_lag_max_ms": r(self.lag_max_ms),
            "dropped_frames": self.dropped_frames,
            "dropped_share": round(self.dropped_share, 4),
            "dropped_samples": self.dropped_samples,
            "sessions": self.sessions,
        }


def from_clocks(calls: Sequence[Call]) -> dict[str, ProcessLoad]:
    """Lag and dropped frames per bridge process, from what its sessions recorded."""
    by: dict[str, list[Call]] = defaultdict(list)
    for c in calls:
        by[c.process or "bridge"].append(c)
    out = {}
    for name, group in by.items():
        late = [c.clock["tick_late"] for c in group if isinstance(c.clock.get("tick_late"), dict)]

        def median(key: str, late: list[dict[str, Any]] = late) -> float | None:
            values = [float(t.get(key, 0.0)) for t in late]
            return statistics.median(values) if values else None

        worst = max((float(t.get("max_ms", 0.0)) for t in late), default=None)
        drops = sum(int(c.clock.get("skipped_ticks", 0)) for c in group)
        ticks = sum(int(t.get("ticks", 0)) for t in late)
        samples = sum(
            sum(int(v) for v in (c.clock.get("dropped_samples") or {}).values()) for c in group
        )
        role = "worker" if name.startswith("worker") else "bridge"
        out[name] = ProcessLoad(
            name, role, None, median("p50_ms"), median("p99_ms"), worst, ticks, drops, samples,
            len(group),
        )  # fmt: skip
    return out


@dataclass(frozen=True)
class Headroom:
    processes: list[ProcessLoad]
    harness_limited: bool
    reasons: list[str] = field(default_factory=list)
    #: Roles of the processes over a limit ("bridge", "worker", "bridge + callers", ...).
    saturated: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "harness_limited": self.harness_limited,
            "reasons": list(self.reasons),
            "processes": [p.to_dict() for p in self.processes],
        }


def headroom(
    calls: Sequence[Call],
    measured: Sequence[ProcessLoad],
    limits: Limits,
    *,
    virtual: bool = False,
) -> Headroom:
    """The step's harness figures: its sessions' clock records merged with what ``vae load``
    measured itself (``measured``: CPU, its own loop's lag; matched by process name)."""
    found = from_clocks(calls)
    rows: list[ProcessLoad] = []
    for m in measured:
        seen = found.pop(m.name, None)
        if seen is None:
            rows.append(m)
            continue
        rows.append(
            replace(
                seen,
                role=m.role,
                cpu=m.cpu,
                lag_p50_ms=_worse(seen.lag_p50_ms, m.lag_p50_ms),
                lag_p99_ms=_worse(seen.lag_p99_ms, m.lag_p99_ms),
                lag_max_ms=_worse(seen.lag_max_ms, m.lag_max_ms),
            )
        )
    rows.extend(found.values())
    rows.sort(key=lambda p: p.name)
    over = [] if virtual else [p for p in rows if p.over(limits)]
    reasons = [why for p in over for why in p.over(limits)]
    roles = {p.role for p in over}
    failed = [c for c in calls if c.caller_errors]
    if failed:
        reasons.append(f"the callers reported errors in {len(failed)} calls (first: "
                       f"{failed[0].caller_errors[0]})")  # fmt: skip
        roles.add("callers")
    return Headroom(rows, bool(reasons), reasons, sorted(roles))


def _worse(a: float | None, b: float | None) -> float | None:
    return b if a is None else a if b is None else max(a, b)


def advice(limited: Sequence[Headroom], workers: int, cores: int, in_process: bool) -> list[str]:
    """What to add to measure higher, from the steps that were harness-limited.

    ``workers``: the bridge processes ``vae load`` started (``in_process``);
    a bridge given with ``--bridge`` is sized by whoever started it.
    """
    roles = {role for h in limited for role in h.saturated}
    if not roles:
        return []
    lines = []
    if not in_process:
        lines.append(
            "give the bridge more workers (vae bridge serve --workers auto) or add bridges on "
            "other machines sharing the runs (--share-runs on a PostgreSQL store, "
            "docs/scale-out.md)"
        )
    elif workers < cores:
        lines.append(
            f"add bridge workers: --workers {min(cores, max(2, workers * 2))} (this machine has "
            f"{cores} cores; each worker runs sessions on a core of its own)"
        )
    else:
        lines.append(
            "add bridges on other machines sharing the runs (vae bridge serve --share-runs on a "
            "PostgreSQL store, docs/scale-out.md): every core here already runs a worker"
        )
    if in_process and any("callers" in role for role in roles):
        lines.append(
            "move the callers off this machine: `vae bridge serve` and `vae bot user` elsewhere,"
            " then `vae load --bridge HOST:PORT --db DB`"
        )
    return lines
