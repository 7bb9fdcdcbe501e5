"""What ``vae demo`` starts and runs, in order (the command itself is ``cli/demo/demo_cmd.py``).

It starts the bridge and the scorer in-process (gRPC on loopback ports), the
scripted reference bots (in-process gRPC clients), and a rule-based stand-in
judge (an OpenAI-compatible server on loopback, see ``bots/stand_in/offline_judge.py``);
runs the example suite through the bridge with a progress bar; reads how the
run ended; rescores the run through the scorer service with that judge; writes
the HTML report; and prints the summary and where everything is. Every run is
a new run in the same database, so running it twice keeps both.

The command exits 1 when the run did not end ``completed`` or when a gating
signal is unscored (the rule of ``vae rescore``,
:func:`vae.cli.scoring.rescore_verdict.unscored_exit`): the demo must never read as a
success over sessions that were cut off or never judged. Sessions that fail
their signals do not change the exit code — the suite is built with five
scenarios that fail.

This module is the demo's sequence — what starts, in what order, what stops
on the way out, and which failures end the command — and changes with it.
The gRPC calls that run and score the suite are ``cli/demo/demo_wire.py``;
the result, the report and the printed summary ``cli/demo/demo_summary.py``.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import click
import grpc

from vae.bots.brains.backend_tools import through_backend
from vae.bots.brains.scripted import play_script
from vae.bots.runner import BotConfig, run_bots
from vae.bots.sound.speech import default_synthesiser
from vae.bots.stand_in.offline_judge import offline_judge_server
from vae.bridge_service.config import BridgeSettings
from vae.bridge_service.server import BridgeServer
from vae.cli.demo.demo_summary import DemoResult, write_report
from vae.cli.demo.demo_wire import run_options, run_suite, score_run
from vae.cli.runs.run_client import STATUS
from vae.cli.runs.run_request import set_tier
from vae.scorer_service.edge.server import start_scorer

if TYPE_CHECKING:
    from vae.recordings.backends.locator import Locator


@dataclass
class Progress:
    """How far the demo got, for the line Ctrl-C prints."""

    #: The run id once the bridge gave it (:func:`vae.cli.runs.run_start.start_run` fills it).
    started: list[str] = field(default_factory=list)
    #: "run" while the suite runs, then "score" once the run finished, then "report".
    phase: str = "run"


async def run_demo(
    db_path: Locator,
    suite: Path,
    *,
    concurrency: int = 6,
    inactivity_s: float = 4.0,
    report_path: Path | None = None,
    tts: str = "auto",
    show_progress: bool = True,
    progress: Progress | None = None,
    modality: str = "audio",
    clock: str | None = None,
) -> DemoResult:
    """Run the suite end to end and return the run, the scoring and the report path."""
    progress = progress or Progress()
    started = time.perf_counter()
    synth = await asyncio.to_thread(default_synthesiser, tts)
    async with BridgeServer(db_path, BridgeSettings(address="127.0.0.1:0")) as bridge:
        scorer = await start_scorer(db_path, "127.0.0.1:0")
        try:
            with offline_judge_server() as judge:
                stop = asyncio.Event()
                async with asyncio.TaskGroup() as tg:
                    for role in ("user", "agent"):
                        config = BotConfig(
                            bridge.address,
                            role,
                            # A scenario with a tool backend gets its calls over HTTP.
                            lambda: through_backend(play_script, say_when_missing=False),
                            concurrency=concurrency,
                            name=f"vae-scripted-{role}",
                            version="1",
                            synth=synth,
                        )
                        tg.create_task(run_bots(config, stop))
                    try:
                        options = run_options(concurrency, inactivity_s)
                        set_tier(options, modality, clock)
                        run = await run_suite(
                            bridge.address, suite, options, show_progress, progress.started
                        )
                        progress.phase = "score"
                    finally:
                        stop.set()
                run_id, total = run.run_id, run.scenarios_total
                scoring = await score_run(
                    f"127.0.0.1:{scorer.port}", run_id, total, judge.base_url, show_progress
                )
        finally:
            await scorer.stop(1.0)
    from vae.recordings.identifiers import slug

    # slug() leaves no separator in the name: the report stays beside the database
    # (a PostgreSQL database has no folder: then in the current one).
    name = f"{db_path.file.stem if db_path.path else 'vae-demo'}-report-{slug(run_id, 'run')}.html"
    report = report_path or (db_path.file.with_name(name) if db_path.path else Path.cwd() / name)
    progress.phase = "report"
    sessions, baseline = await asyncio.to_thread(
        write_report, db_path, run_id, scoring.scoring_id, report
    )
    return DemoResult(
        run_id=run_id,
        scoring_id=scoring.scoring_id,
        summary=json.loads(scoring.summary_json or "{}"),
        run_status=STATUS.get(run.status, ""),
        run_error=run.error,
        sessions=sessions,
        report=report,
        seconds=time.perf_counter() - started,
        baseline=baseline,
        modality=modality,
        clock=clock or ("auto" if modality == "text" else "real"),  # unset: the bridge's default
    )


def run_demo_or_exit(
    db_path: Locator,
    suite: Path,
    concurrency: int,
    report_path: Path | None,
    tts: str,
    as_json: bool,
    progress: Progress,
    modality: str = "audio",
    clock: str | None = None,
) -> DemoResult:
    """:func:`run_demo` for the command: a refused suite is exit 2, a failed call or OS error 1."""
    try:
        return asyncio.run(
            run_demo(
                db_path,
                suite,
                concurrency=concurrency,
                report_path=report_path,
                tts=tts,
                show_progress=not as_json,
                progress=progress,
                modality=modality,
                clock=clock,
            )
        )
    except* grpc.aio.AioRpcError as group:
        err = group.exceptions[0]
        assert isinstance(err, grpc.aio.AioRpcError)
        if err.code() == grpc.StatusCode.INVALID_ARGUMENT:
            # A broken scenario file: the bridge names the file and the field.
            raise click.UsageError(f"the suite was refused: {err.details()}") from None
        click.echo(f"error: {err.code().name}: {err.details()}", err=True)
        sys.exit(1)
    except* OSError as group:
        click.echo(f"error: {group.exceptions[0]}", err=True)
        sys.exit(1)
