"""From a step's recorded run to its figures: scored as ``vae rescore`` does, then analysed.

Each step's run is scored in this process on the store (the judge options
of ``vae rescore``; retries off, so every attempt is one call), right after
it ends and before the next starts, so scoring never competes with a step
for the CPU. The calls, their verdicts and latencies, and the harness
figures ``vae load`` measured meanwhile become a
:class:`~vae.scorer_service.load.result.StepResult` (or a soak's
:class:`~vae.scorer_service.load.result.SoakResult`).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from vae.cli.load.load_driver import StepRun
from vae.cli.load.load_harness import Target
from vae.recordings.backends.locator import Locator
from vae.recordings.read.reader import RecordingReader
from vae.scorer_service.config import ScoringConfig
from vae.scorer_service.load.calls import Call, calls_of_run
from vae.scorer_service.load.figures import figures
from vae.scorer_service.load.headroom import Headroom, Limits, ProcessLoad, headroom
from vae.scorer_service.load.result import SoakResult, StepResult
from vae.scorer_service.load.soak import soak
from vae.scorer_service.scoring.rescore import rescore


@dataclass(frozen=True)
class Measured:
    """What ``vae load`` measured of the harness over one step."""

    cores: dict[str, float | None]
    #: This process's loop lag (p50, p99, max) in ms, when it is part of the harness.
    own_lag: tuple[float | None, float | None, float | None] = (None, None, None)


def measured_rows(target: Target, measured: Measured) -> list[ProcessLoad]:
    """The harness processes ``vae load`` measured, as rows named like the sessions name them."""
    from os import getpid

    own = f"bridge pid {getpid()}"
    rows = []
    for name, cores in measured.cores.items():
        lag = measured.own_lag if name == own and target.in_process else (None, None, None)
        rows.append(ProcessLoad(name, target.role(name), cores, *lag))
    return rows


async def recorded_calls(db: Locator, run_id: str, config: ScoringConfig) -> list[Call]:
    """Score ``run_id`` and read its calls with their verdicts and latencies."""
    result = await rescore(db, run_id, config)

    def read() -> list[Call]:
        with RecordingReader(db) as reader:
            return calls_of_run(reader, run_id, result.sessions)

    return await asyncio.to_thread(read)


def _headroom(
    calls: list[Call], target: Target, measured: Measured, limits: Limits, virtual: bool
) -> Headroom:
    return headroom(calls, measured_rows(target, measured), limits, virtual=virtual)


async def learn_processes(db: Locator, run_id: str, target: Target) -> None:
    """With ``--bridge``: note its processes on this machine for the next step's CPU."""
    if target.in_process:
        return

    def read() -> None:
        with RecordingReader(db) as reader:
            target.learn(reader.session_bridges(run_id))

    await asyncio.to_thread(read)


async def step_result(
    index: int,
    level: int,
    run: StepRun,
    *,
    db: Locator,
    config: ScoringConfig,
    target: Target,
    measured: Measured,
    limits: Limits,
    virtual: bool,
) -> StepResult:
    calls = await recorded_calls(db, run.run_id, config)
    await learn_processes(db, run.run_id, target)
    room = _headroom(calls, target, measured, limits, virtual)
    return StepResult(
        index, level, run.run_id, figures(calls), room, run.partial, run.wall_s, run.ran_out
    )


async def soak_result(
    level: int,
    runs: list[StepRun],
    *,
    db: Locator,
    config: ScoringConfig,
    target: Target,
    measured: Measured,
    limits: Limits,
    virtual: bool,
    duration_s: float,
    window_s: float | None,
) -> SoakResult:
    calls = [c for run in runs for c in await recorded_calls(db, run.run_id, config)]
    room = _headroom(calls, target, measured, limits, virtual)
    if window_s is None:  # a tenth of the soak, and at least two calls long
        lengths = sorted(c.session_s for c in calls) or [0.0]
        window_s = max(duration_s / 10, 2 * lengths[len(lengths) // 2], 1.0)
    timeline = soak(calls, "virtual" if virtual else "real", level, window_s, duration_s)
    ids = [r.run_id for r in runs]
    partial = any(r.partial for r in runs)
    return SoakResult(level, ids[0], timeline, room, partial, runs[-1].ran_out, ids)
