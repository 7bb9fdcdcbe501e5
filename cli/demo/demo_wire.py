"""``vae demo`` as a client of the bridge and the scorer: the gRPC calls, with progress bars.

Why a module: these calls change with the wire contract (``vae.bridge.v1``,
``vae.scorer.v1``) and with the options the demo runs its suite with, not with
what the demo starts (``cli/demo/demo_run.py``) or what it prints
(``cli/demo/demo_summary.py``). The run options are the demo's own and are
echoed by ``vae test``'s in-process defaults (``cli/ci/suite_run.py``);
``benchmarks/tiers.py`` runs its tiers with them too.
"""

from __future__ import annotations

import asyncio
import io
import sys
from pathlib import Path
from typing import TextIO

import click
import grpc

from vae.bots.stand_in.offline_judge import MODEL as JUDGE_MODEL
from vae.bridge.v1 import bridge_pb2, bridge_pb2_grpc
from vae.cli.runs.run_start import start_run
from vae.scorer.v1 import scorer_pb2, scorer_pb2_grpc


def run_options(concurrency: int, inactivity_s: float) -> bridge_pb2.RunOptions:
    """The options the demo's suite runs with (its tier is set apart: ``set_tier``)."""
    return bridge_pb2.RunOptions(
        concurrency=concurrency,
        inactivity_timeout_s=inactivity_s,
        # The suite's stalled-agent scenario answers once: below two it is "stalled".
        min_agent_turns=2,
        max_auto_retries=1,
        auto_retry_backoff_s=0.5,
        pairing_timeout_s=30,
        seed=7,
        # The scripted agent reports what it heard from the caller's shared transcript,
        # so HEARD_CORRECTLY is decided (and a scripted mishearing attributed).
        share_transcripts=True,
        tags=["demo"],
    )


async def run_suite(
    address: str, suite: Path, options: bridge_pb2.RunOptions, show: bool, started: list[str]
) -> bridge_pb2.Run:
    """Run the suite to its end; the run as the bridge has it then (its final status).

    ``started`` receives the run id as soon as the bridge gives it, so that
    Ctrl-C can name the run (:func:`vae.cli.runs.run_start.start_run`).
    """
    async with grpc.aio.insecure_channel(address) as channel:
        stub: bridge_pb2_grpc.BridgeServiceAsyncStub = bridge_pb2_grpc.BridgeServiceStub(channel)
        request = bridge_pb2.StartRunRequest(
            sources=[bridge_pb2.ScenarioSource(path=str(suite))], options=options
        )
        run = (await start_run(stub, request, started)).run
        total = run.scenarios_total
        done = 0
        with click.progressbar(
            length=total, label=f"running {run.run_id}", file=_sink(show)
        ) as bar:
            try:
                async for event in stub.WatchRun(bridge_pb2.WatchRunRequest(run_id=run.run_id)):
                    if event.scenarios_done > done:
                        bar.update(event.scenarios_done - done)
                        done = event.scenarios_done
                    if event.kind == bridge_pb2.RUN_EVENT_KIND_RUN_FINISHED:
                        break
            except asyncio.CancelledError:
                # Ctrl-C: cancel the run (sessions end `cancelled`) before the bridge stops.
                await stub.CancelRun(bridge_pb2.CancelRunRequest(run_id=run.run_id))
                raise
        return (await stub.GetRun(bridge_pb2.GetRunRequest(run_id=run.run_id))).run


async def score_run(
    address: str, run_id: str, total: int, judge_url: str, show: bool
) -> scorer_pb2.Scoring:
    """Rescore ``run_id`` through the scorer service at ``address`` with the stand-in judge."""
    config = scorer_pb2.ScoringConfig(
        judge=scorer_pb2.JudgeConfig(base_url=judge_url, model=JUDGE_MODEL, api_key="offline"),
        label="vae demo (offline stand-in judge)",
    )
    scoring: scorer_pb2.Scoring | None = None
    async with grpc.aio.insecure_channel(address) as channel:
        stub: scorer_pb2_grpc.ScorerServiceAsyncStub = scorer_pb2_grpc.ScorerServiceStub(channel)
        stream = stub.Rescore(scorer_pb2.RescoreRequest(run=run_id, config=config))
        done = 0
        with click.progressbar(length=total, label=f"scoring {run_id}", file=_sink(show)) as bar:
            async for msg in stream:
                bar.update(msg.sessions_done - done)
                done = msg.sessions_done
                if msg.HasField("scoring"):
                    scoring = msg.scoring
    if scoring is None:
        raise click.ClickException("the scorer ended without a scoring")
    return scoring


def _sink(show: bool) -> TextIO | None:
    """Where progress goes: stderr, or nowhere for --json (stdout is the JSON)."""
    return sys.stderr if show else io.StringIO()
