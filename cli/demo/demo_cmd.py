"""``vae demo``: the whole product in one command, offline, on the embedded defaults.

This module is only the click command (options, exit codes, Ctrl-C); what the
demo starts and runs, and why, is in ``cli/demo/demo_run.py`` (its calls to the
services in ``cli/demo/demo_wire.py``, its report and summary in
``cli/demo/demo_summary.py``), imported only when the command runs so that
``vae --help`` stays instant. Every demo is a new run
in the same database, so running it twice keeps both and compares them.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from vae.cli.common import STORE, json_option, print_json, setup_logging, shown
from vae.cli.gate.gate_opts import gate_options
from vae.cli.telemetry import export_trace, otel_endpoint_option, require_otel, session_verdicts

if TYPE_CHECKING:
    from vae.cli.demo.demo_run import Progress
    from vae.recordings.backends.locator import Locator

DEFAULT_SUITE = Path(__file__).resolve().parents[2] / "examples" / "suite"


@click.command("demo")
@click.option(
    "--db",
    "db_path",
    type=STORE,
    default="vae-demo.db",
    show_default=True,
    envvar="VAE_DEMO_DB",
    help="Database the demo records into (kept; each demo adds a run): a file or a "
    "postgresql:// URL. Env VAE_DEMO_DB.",
)
@click.option(
    "--suite",
    type=click.Path(exists=True, path_type=Path),
    default=DEFAULT_SUITE,
    show_default=True,
    help="Scenario file or folder to run (default: the example suite).",
)
@click.option(
    "--concurrency",
    type=click.IntRange(1, 32),
    default=6,
    show_default=True,
    help="Conversations at once.",
)
@click.option(
    "-o",
    "--output",
    "report_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Report file (default: beside the database).",
)
@click.option(
    "--tts",
    type=click.Choice(["auto", "espeak", "buzz"]),
    default="auto",
    show_default=True,
    help="Bot voice: eSpeak NG when installed (auto), or a synthetic buzz.",
)
@click.option(
    "--modality",
    type=click.Choice(["audio", "text"]),
    default="audio",
    show_default=True,
    envvar="VAE_MODALITY",
    help="Run the suite in audio or as text turns (the fast tier). Env VAE_MODALITY.",
)
@click.option(
    "--clock",
    type=click.Choice(["real", "virtual", "auto"]),
    default=None,
    envvar="VAE_CLOCK",
    help="Real time; the virtual lock-step clock (as fast as the bots go); or auto: "
    "virtual for each session whose bots both declare it, else real "
    "[text: auto; audio: real]. Env VAE_CLOCK.",
)
@click.option(
    "--allow-unscored",
    is_flag=True,
    envvar="VAE_ALLOW_UNSCORED",
    help="Exit 0 even when a gating signal is unscored (env VAE_ALLOW_UNSCORED).",
)
@gate_options(report=False)
@otel_endpoint_option
@json_option
@click.option(
    "--log-level",
    type=click.Choice(["debug", "info", "warning", "error"], case_sensitive=False),
    default="warning",
    show_default=True,
    envvar="VAE_LOG_LEVEL",
    help="Logging verbosity (env VAE_LOG_LEVEL); quiet by default so the summary reads well.",
)
def demo_command(
    db_path: Locator,
    suite: Path,
    concurrency: int,
    report_path: Path | None,
    tts: str,
    modality: str,
    clock: str | None,
    allow_unscored: bool,
    otel_endpoint: str | None,
    as_json: bool,
    log_level: str,
    **gate_kw: Any,
) -> None:
    """Run the example suite end to end: bridge, bots, scorer, judge, report.

    Offline and CPU-only. Prints each scenario's result with the reasons of
    its failing signals, the success rates, the database and the report path.

    Exits 1 when a scenario failed its gating signals although it is not
    built to fail (the `expect-fail` tag, or `expect_fail: true`), or one
    built to fail passed: the rule of `vae gate` without a threshold, naming
    them (the example suite's seven scenarios built to fail are expected
    failures and leave it 0). Exits 1 too when the run did not complete or a
    gating signal is unscored (as vae rescore; --allow-unscored accepts the
    latter). With gate options (--min-success, --baseline, --junit-xml, ...)
    the run's scoring is gated as `vae gate` does and the exit code is the
    gate's: 0 passed, 1 failed, 3 could not decide (a run that did not
    complete, unscored beyond --max-unscored), 2 usage (docs/ci.md).

    --modality text runs the same suite as text turns (on the virtual clock:
    the reference bots declare it, so auto takes it) and --clock virtual
    runs its audio on the virtual clock: the same verdicts, in a fraction
    of the time.

    --otel-endpoint URL (or the standard OTEL_EXPORTER_OTLP_* variables)
    exports the run's trace with each session's verdict, and the scoring's
    evaluations, to an OTLP/HTTP collector (docs/traces.md).

    \b
    Examples:
      vae demo
      vae demo --db other.db --suite examples/suite --concurrency 6 -o report.html
      vae demo --json --tts buzz
      vae demo --modality text
      vae demo --clock virtual
      vae demo --otel-endpoint http://127.0.0.1:4318
    """
    from vae.cli.demo.demo_run import Progress, run_demo_or_exit
    from vae.cli.demo.demo_summary import print_summary, rule_lines, scenario_rule
    from vae.cli.gate.gate_opts import (
        check_baseline,
        gate_active,
        gate_spec,
        pop_gate_options,
        refuse_conflicts,
    )
    from vae.cli.scoring.rescore_verdict import unscored_exit

    clock = clock or ("auto" if modality == "text" else "real")  # the bridge's default

    setup_logging(log_level)
    gate_opts = pop_gate_options(gate_kw)
    refuse_conflicts(gate_opts, allow_unscored=allow_unscored)
    spec = gate_spec(gate_opts) if gate_active(gate_opts) else None
    check_baseline(db_path, spec)
    if otel_endpoint:
        require_otel("--otel-endpoint")
    progress = Progress()
    try:
        result = run_demo_or_exit(
            db_path, suite, concurrency, report_path, tts, as_json, progress, modality, clock
        )
    except KeyboardInterrupt:
        click.echo(_interrupted_line(progress, db_path), err=True)
        sys.exit(1)
    except SystemExit as exc:
        if spec is None or exc.code != 1:
            raise
        from vae.cli.scoring.gate_hooks import could_not_score

        run_id = progress.started[0] if progress.started else ""
        could_not_score(db_path, run_id, 0, spec, gate_opts, "the demo stopped (see above)",
                        as_json)  # fmt: skip
    if otel_endpoint:  # the run's trace with the verdicts, and the scoring's evaluations
        verdicts = session_verdicts(db_path, result.scoring_id)
        export_trace(db_path, result.run_id, otel_endpoint, verdicts=verdicts,
                     scoring_id=result.scoring_id)  # fmt: skip
    document = {
        "run_id": result.run_id,
        "run_status": result.run_status,
        "run_error": result.run_error,
        "scoring_id": result.scoring_id,
        "database": shown(db_path),
        "report": str(result.report),
        "seconds": round(result.seconds, 1),
        "modality": modality,
        "clock": clock,
        "summary": result.summary,
        "sessions": result.sessions,
        "baseline": result.baseline,
    }
    if spec is not None:
        from vae.cli.gate.gate_output import evaluate, finish

        if not as_json:
            print_summary(result, db_path)
        gated = evaluate(db_path, result.run_id, spec, gate_opts, scoring_id=result.scoring_id,
                         report_file=result.report)  # fmt: skip
        finish(gated, gate_opts, as_json=as_json, document=document)
    rule = scenario_rule(db_path, result) if result.scoring_id else None
    if rule is not None:
        document["rule"] = rule
    if as_json:
        print_json(document)
    else:
        print_summary(result, db_path)
    code = 0
    if rule is not None:  # every scenario as expected, as vae gate without a threshold
        failed = rule["status"] == "failed"
        for line in rule_lines(rule) if failed or not as_json else []:
            click.echo(line, err=failed)
        code = 1 if failed else 0
    if result.run_status != "completed":
        detail = f": {result.run_error}" if result.run_error else ""
        click.echo(f"run {result.run_id} {result.run_status}{detail}; exit 1", err=True)
        code = 1
    unscored_code, line = unscored_exit(result.summary, allow_unscored)
    if line:
        click.echo(line, err=True)
    code = max(code, unscored_code)
    if code:
        sys.exit(code)


def _interrupted_line(progress: Progress, db_path: Locator) -> str:
    """What Ctrl-C prints: a cancelled run, or a finished run whose scoring or report stopped."""
    from vae.cli.runs import run_summary

    run_id = progress.started[0] if progress.started else ""
    if progress.phase == "run" or not run_id:
        return run_summary.interrupted_line(
            run_id, f"with a bridge on --db {shown(db_path)} and bots"
        )
    if progress.phase == "score":
        return (
            f"interrupted while scoring run {run_id} (the run itself is recorded): "
            f"vae rescore --run {run_id} --db {shown(db_path)} --judge-base-url URL --judge-model M"
        )
    return (
        f"interrupted while writing the report of run {run_id} (run and scoring are "
        f"recorded): vae report {run_id} --db {shown(db_path)}"
    )
