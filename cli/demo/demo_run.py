"""What ``vae demo`` does (the command itself is ``cli/demo/demo_cmd.py``).

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
"""

from __future__ import annotations

import asyncio
import io
import json
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import click
import grpc

from vae.bots.brains.scripted import play_script
from vae.bots.runner import BotConfig, run_bots
from vae.bots.sound.speech import default_synthesiser
from vae.bots.stand_in.offline_judge import MODEL as JUDGE_MODEL
from vae.bots.stand_in.offline_judge import offline_judge_server
from vae.bridge.v1 import bridge_pb2, bridge_pb2_grpc
from vae.bridge_service.config import BridgeSettings
from vae.bridge_service.server import BridgeServer
from vae.cli.common import shown
from vae.cli.demo.demo_compare import previous_scored_run, print_comparison
from vae.cli.runs.run_client import STATUS
from vae.cli.runs.run_request import set_tier
from vae.cli.runs.run_start import start_run
from vae.cli.tables import pct, table
from vae.recordings.read.reader import RecordingReader
from vae.scorer.v1 import scorer_pb2, scorer_pb2_grpc
from vae.scorer_service.edge.server import start_scorer
from vae.scorer_service.ledger.unscored import unscored_line
from vae.scorer_service.report import report_data
from vae.scorer_service.report.html import render

if TYPE_CHECKING:
    from vae.recordings.backends.locator import Locator


@dataclass
class Progress:
    """How far the demo got, for the line Ctrl-C prints."""

    #: The run id once the bridge gave it (:func:`vae.cli.runs.run_start.start_run` fills it).
    started: list[str] = field(default_factory=list)
    #: "run" while the suite runs, then "score" once the run finished, then "report".
    phase: str = "run"


@dataclass
class DemoResult:
    run_id: str
    scoring_id: str
    summary: dict[str, Any]
    #: How the run ended: completed, failed or cancelled (``vae run``'s statuses).
    run_status: str = ""
    run_error: str = ""
    sessions: list[dict[str, Any]] = field(default_factory=list)
    report: Path | None = None
    seconds: float = 0.0
    #: The comparison with the previous scored run of the database (None on the first).
    baseline: dict[str, Any] | None = None
    #: How the suite ran: "audio"/"text" on the "real"/"virtual" clock.
    modality: str = "audio"
    clock: str = "real"


def _run_options(concurrency: int, inactivity_s: float) -> bridge_pb2.RunOptions:
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


async def _run_suite(
    address: str, suite: Path, options: bridge_pb2.RunOptions, show: bool, progress: Progress
) -> bridge_pb2.Run:
    """Run the suite to its end; the run as the bridge has it then (its final status)."""
    async with grpc.aio.insecure_channel(address) as channel:
        stub: bridge_pb2_grpc.BridgeServiceAsyncStub = bridge_pb2_grpc.BridgeServiceStub(channel)
        request = bridge_pb2.StartRunRequest(
            sources=[bridge_pb2.ScenarioSource(path=str(suite))], options=options
        )
        run = (await start_run(stub, request, progress.started)).run
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
        final = (await stub.GetRun(bridge_pb2.GetRunRequest(run_id=run.run_id))).run
    progress.phase = "score"
    return final


async def _score(
    address: str, run_id: str, total: int, judge_url: str, show: bool
) -> scorer_pb2.Scoring:
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
    clock: str = "real",
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
                            lambda: play_script,
                            concurrency=concurrency,
                            name=f"vae-scripted-{role}",
                            version="1",
                            synth=synth,
                        )
                        tg.create_task(run_bots(config, stop))
                    try:
                        options = _run_options(concurrency, inactivity_s)
                        set_tier(options, modality, clock)
                        run = await _run_suite(
                            bridge.address, suite, options, show_progress, progress
                        )
                    finally:
                        stop.set()
                run_id, total = run.run_id, run.scenarios_total
                scoring = await _score(
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
        _write_report, db_path, run_id, scoring.scoring_id, report
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
        clock=clock,
    )


def _write_report(
    db_path: Locator, run_id: str, scoring_id: str, out: Path
) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
    with RecordingReader(db_path) as reader:
        baseline = previous_scored_run(reader, run_id)
        data = report_data(reader, run_id, scoring_id, baseline_run=baseline)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(render(data), encoding="utf-8")
    return [
        {
            "scenario": s["scenario_name"],
            "domain": s["domain"],
            "verdict": s["verdict"],
            "stop_reason": s["stop_reason"],
            "failing": {f["signal"]: f["reasons"] for f in s["failing"] if f["gating"]},
            # The report's one-line reason: a mishearing that explains the failure first.
            "reason": s["reason"],
            "misheard": next(
                (f["misheard"] for f in s["failing"] if f["gating"] and f.get("misheard")), ""
            ),
        }
        for s in data["sessions"]
    ], data["baseline"]


def _first(reasons: list[str], misheard: str | None) -> str:
    """A signal's first reason, leaving out the mishearing already printed before it."""
    found = [r for r in reasons if r != misheard]
    return found[0] if found else ""


def print_summary(result: DemoResult, db_path: Locator) -> None:
    s = result.summary
    click.echo(
        f"\nrun {result.run_id} ({result.run_status}), scoring {result.scoring_id}"
        f" ({result.seconds:.0f} s; {result.modality} on the {result.clock} clock)"
    )
    rows = [
        [row["verdict"], row["scenario"],
         "; ".join([*([row["misheard"]] if row.get("misheard") else []),
                    *(f"{sig}: {_first(why, row.get('misheard'))}"
                      for sig, why in row["failing"].items())])]
        for row in result.sessions
    ]  # fmt: skip
    click.echo(table(["result", "scenario", "why"], rows))
    counts = s.get("is_successful", {}) if isinstance(s.get("is_successful"), dict) else {}
    click.echo(
        f"success rate {pct(s.get('success_rate'))} ({counts.get('passed', 0)}/"
        f"{counts.get('passed', 0) + counts.get('failed', 0)} decided, "
        f"{counts.get('unscored', 0)} unscored)",
        nl=False,
    )
    domains = s.get("domains", {})
    if isinstance(domains, dict) and domains:
        per = ", ".join(f"{d} {pct(b.get('success_rate'))}" for d, b in sorted(domains.items()))
        click.echo(f" ({per})", nl=False)
    line = unscored_line(s)
    if line:
        click.echo(f"\n{line}", nl=False)
    signals = s.get("signals", {})
    click.echo(
        "\nper signal: " + ", ".join(f"{k} {pct(v.get('rate'))}" for k, v in signals.items())
    )
    lat = s.get("latency", {})
    if isinstance(lat, dict) and lat.get("p50_s") is not None:
        click.echo(f"agent response latency p50 {lat['p50_s']:.2f} s, p95 {lat['p95_s']:.2f} s")
    print_comparison(result.baseline, result.run_id, db_path)
    click.echo(f"database {shown(db_path)}\nreport   {result.report}")


def run_demo_or_exit(
    db_path: Locator,
    suite: Path,
    concurrency: int,
    report_path: Path | None,
    tts: str,
    as_json: bool,
    progress: Progress,
    modality: str = "audio",
    clock: str = "real",
) -> DemoResult:
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
