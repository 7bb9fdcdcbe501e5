"""The sequence of ``vae load``: start (or reach) the harness, run each step, analyse, decide.

Steps run one after another, each scored before the next starts; the
harness is measured over each step (:mod:`vae.cli.load.load_probe`). The
first Ctrl-C cancels the step under way (it is marked partial, what it
recorded stays) and skips the rest, then the result is analysed and shown
as usual; a second Ctrl-C stops at once. Then the knee
(:func:`vae.scorer_service.load.knee.find_knee`) over the honest steps, the
gate, and the advice on what to add to measure higher.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vae.bridge.v1 import bridge_pb2, bridge_pb2_grpc
from vae.cli.load.load_analyse import Measured, soak_result, step_result
from vae.cli.load.load_driver import Deadline, StepRun, request_for, run_one
from vae.cli.load.load_harness import AgentSpec, HarnessOptions, Target, in_process
from vae.cli.load.load_plan import LoadPlan
from vae.cli.load.load_probe import CpuWatch, LoopLag
from vae.recordings.backends.locator import Locator
from vae.scorer_service.config import ScoringConfig
from vae.scorer_service.load.headroom import Limits, advice
from vae.scorer_service.load.knee import find_knee, gate
from vae.scorer_service.load.result import LoadResult, StepResult
from vae.serving import client_channel


@dataclass
class LoadConfig:
    load_id: str
    suite: str
    docs: list[dict[str, Any]]
    plan: LoadPlan
    db: Locator
    #: The run options every step shares (clock, timeouts, connectors, tags).
    options: bridge_pb2.RunOptions
    scoring: ScoringConfig
    clock: str = "real"
    bridge: str | None = None
    token: str | None = None
    tls_ca: Path | None = None
    workers: int = 1
    tts: str = "auto"
    #: The reference agent to start (None: the agent comes through a connector or --bridge).
    agent: AgentSpec | None = None
    agent_label: str = ""
    limits: Limits = field(default_factory=Limits)
    max_p95_ms: float | None = None
    max_drop: float | None = None
    min_concurrency: int | None = None
    #: Called with one line per finished step (the progress on stderr).
    progress: Callable[[str], None] = lambda line: None

    @property
    def virtual(self) -> bool:
        return self.clock == "virtual"


@contextlib.asynccontextmanager
async def _target(cfg: LoadConfig) -> AsyncIterator[Target]:
    if cfg.bridge is not None:
        yield Target(cfg.bridge, cfg.token, cfg.tls_ca)
        return
    options = HarnessOptions(cfg.db, cfg.plan.largest, cfg.workers, cfg.tts, cfg.agent)
    async with in_process(options) as target:
        yield target


def _interrupts() -> asyncio.Event:
    """An event the first Ctrl-C sets (a second one interrupts for real)."""
    interrupt = asyncio.Event()
    loop = asyncio.get_running_loop()

    def first() -> None:
        interrupt.set()
        print("\ninterrupted: cancelling the step under way (Ctrl-C again to stop at once)",
              file=sys.stderr)  # fmt: skip
        loop.remove_signal_handler(signal.SIGINT)

    with contextlib.suppress(NotImplementedError, RuntimeError):
        loop.add_signal_handler(signal.SIGINT, first)
    return interrupt


def step_line(step: StepResult) -> str:
    f = step.figures
    rate = "–" if f.success_rate is None else f"{f.success_rate:.0%}"
    p95 = "–" if f.latency_ms.p95 is None else f"{f.latency_ms.p95:.0f} ms"
    notes = " HARNESS-LIMITED" if step.harness_limited else ""
    notes += " partial" if step.partial else ""
    return (
        f"step {step.index}: {step.concurrency} at once, {f.calls} calls, success {rate}, "
        f"p95 {p95} (run {step.run_id}){notes}"
    )


async def run_load(cfg: LoadConfig) -> LoadResult:
    """Run the plan and return the analysed result (knee, gate and advice included)."""
    interrupt = _interrupts()
    result = LoadResult(cfg.load_id, cfg.suite, cfg.clock, cfg.workers if not cfg.bridge else 0,
                        database=cfg.db.display(), agent=cfg.agent_label)  # fmt: skip
    started: list[str] = []
    async with (
        _target(cfg) as target,
        LoopLag() as lag,
        client_channel(target.address, token=cfg.token, tls_ca=cfg.tls_ca) as channel,
    ):
        stub: bridge_pb2_grpc.BridgeServiceAsyncStub = bridge_pb2_grpc.BridgeServiceStub(channel)
        if cfg.plan.is_soak:
            await _soak(cfg, stub, target, lag, interrupt, started, result)
        else:
            await _steps(cfg, stub, target, lag, interrupt, started, result)
    result.interrupted = result.interrupted or interrupt.is_set()
    _decide(cfg, result, target)
    return result


def _request(
    cfg: LoadConfig, level: int, run_id: str, tags: list[str], seconds: float | None
) -> bridge_pb2.StartRunRequest:
    options = bridge_pb2.RunOptions.FromString(cfg.options.SerializeToString())
    options.tags.extend(tags)
    options.ramp_up_s = cfg.plan.ramp_up_s
    calls = cfg.plan.calls if seconds is None else None
    return request_for(cfg.docs, options, calls=calls, seconds=seconds, level=level,
                       run_id=run_id)  # fmt: skip


async def _steps(
    cfg: LoadConfig,
    stub: bridge_pb2_grpc.BridgeServiceAsyncStub,
    target: Target,
    lag: LoopLag,
    interrupt: asyncio.Event,
    started: list[str],
    result: LoadResult,
) -> None:
    for index, level in enumerate(cfg.plan.steps, start=1):
        if interrupt.is_set():
            break
        tags = ["load", cfg.load_id, f"load-step-{index}", f"concurrency-{level}"]
        run_id = f"{cfg.load_id}-step{index}-c{level}"
        cfg.progress(f"step {index}: {level} at once, run {run_id} starting")
        request = _request(cfg, level, run_id, tags, cfg.plan.step_s)
        cpu = CpuWatch(target.processes())
        lag.reset()
        deadline = Deadline(cfg.plan.step_s, cfg.virtual, level, cfg.db)
        run = await run_one(stub, request, deadline, interrupt, started)
        measured = Measured(cpu.cores(), lag.figures())
        step = await step_result(index, level, run, db=cfg.db, config=cfg.scoring,
                                 target=target, measured=measured, limits=cfg.limits,
                                 virtual=cfg.virtual)  # fmt: skip
        result.steps.append(step)
        cfg.progress(step_line(step))
        if run.partial:
            result.interrupted = True
            break


async def _soak(
    cfg: LoadConfig,
    stub: bridge_pb2_grpc.BridgeServiceAsyncStub,
    target: Target,
    lag: LoopLag,
    interrupt: asyncio.Event,
    started: list[str],
    result: LoadResult,
) -> None:
    """The soak: one run, or, when a run's planned calls run out before the time is up
    (at most 1,000 per scenario), further runs that carry on the same clock."""
    level, seconds = cfg.plan.soak_concurrency, cfg.plan.soak_s
    assert level is not None and seconds is not None
    t0 = time.monotonic()
    tags = ["load", cfg.load_id, "soak", f"concurrency-{level}"]
    cpu = CpuWatch(target.processes())
    lag.reset()
    deadline = Deadline(seconds, cfg.virtual, level, cfg.db)
    runs: list[StepRun] = []
    left = seconds
    while left > 0 and not interrupt.is_set():
        run_id = f"{cfg.load_id}-soak-c{level}" + (f"-part{len(runs) + 1}" if runs else "")
        cfg.progress(f"soak: {level} at once, run {run_id} starting")
        run = await run_one(stub, _request(cfg, level, run_id, tags, left), deadline, interrupt,
                            started)  # fmt: skip
        runs.append(run)
        if run.partial or not run.ran_out:
            break
        left = deadline.left()
    measured = Measured(cpu.cores(), lag.figures())
    result.soak = await soak_result(level, runs, db=cfg.db, config=cfg.scoring, target=target,
                                    measured=measured, limits=cfg.limits, virtual=cfg.virtual,
                                    duration_s=seconds, window_s=cfg.plan.window_s)  # fmt: skip
    result.interrupted = any(r.partial for r in runs)
    shown = ", ".join(r.run_id for r in runs)
    cfg.progress(f"soak: {level} at once for {time.monotonic() - t0:.0f} s wall (runs {shown})")


def _decide(cfg: LoadConfig, result: LoadResult, target: Target) -> None:
    limited = [s.headroom for s in result.steps if s.harness_limited]
    if result.soak is not None and result.soak.headroom.harness_limited:
        limited.append(result.soak.headroom)
    cores = os.cpu_count() or 1
    result.advice = advice(limited, max(1, target.workers), cores, target.in_process)
    if not result.steps:
        return
    result.knee = find_knee([s.point() for s in result.steps], max_p95_ms=cfg.max_p95_ms,
                            max_drop=cfg.max_drop)  # fmt: skip
    if cfg.min_concurrency is not None:
        result.gate = gate(result.knee, cfg.min_concurrency)
