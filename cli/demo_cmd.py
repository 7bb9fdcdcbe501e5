"""``vae demo``: the whole product in one command, offline, on the embedded defaults.

This module is only the click command (options, exit codes, Ctrl-C); what the
demo starts and runs, and why, is in ``cli/demo_run.py``, imported only when
the command runs so that ``vae --help`` stays instant. Every demo is a new run
in the same database, so running it twice keeps both and compares them.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from cli.common import json_option, print_json, setup_logging

DEFAULT_SUITE = Path(__file__).resolve().parents[1] / "examples" / "suite"


@click.command("demo")
@click.option(
    "--db",
    "db_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=Path("vae-demo.db"),
    show_default=True,
    envvar="VAE_DEMO_DB",
    help="Database the demo records into (kept; each demo adds a run). Env VAE_DEMO_DB.",
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
    db_path: Path,
    suite: Path,
    concurrency: int,
    report_path: Path | None,
    tts: str,
    as_json: bool,
    log_level: str,
) -> None:
    """Run the example suite end to end: bridge, bots, scorer, judge, report.

    Offline and CPU-only. Prints each scenario's result with the reasons of
    its failing signals, the success rates, the database and the report path.

    \b
    Examples:
      vae demo
      vae demo --db other.db --suite examples/suite --concurrency 6 -o report.html
      vae demo --json --tts buzz
    """
    from cli import run_summary
    from cli.demo_run import STARTED, print_summary, run_demo_or_exit

    setup_logging(log_level)
    STARTED.clear()
    try:
        result = run_demo_or_exit(db_path, suite, concurrency, report_path, tts, as_json)
    except KeyboardInterrupt:
        run_id = STARTED[0] if STARTED else ""
        click.echo(
            run_summary.interrupted_line(run_id, f"with a bridge on --db {db_path} and bots"),
            err=True,
        )
        sys.exit(1)
    if as_json:
        print_json(
            {
                "run_id": result.run_id,
                "scoring_id": result.scoring_id,
                "database": str(db_path),
                "report": str(result.report),
                "seconds": round(result.seconds, 1),
                "summary": result.summary,
                "sessions": result.sessions,
                "baseline": result.baseline,
            }
        )
    else:
        print_summary(result, db_path)
