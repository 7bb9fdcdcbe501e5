"""``vae report``: one self-contained HTML report of a run (plots, tables, audio)."""

from __future__ import annotations

from pathlib import Path

import click

from cli.common import db_option, json_option, print_json, store_errors


@click.command("report")
@click.argument("run")
@click.option(
    "--scoring",
    "scoring_ref",
    default=None,
    help="Scoring to show (id or unique prefix; default: the run's current scoring).",
)
@click.option(
    "--compare",
    "compare_ref",
    default=None,
    help="Also show what changed from this scoring (id or prefix) to the shown one.",
)
@click.option(
    "-o",
    "--output",
    "out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="HTML file to write (default: report-<run>.html in the current folder).",
)
@db_option
@json_option
@store_errors
def report_command(
    run: str,
    scoring_ref: str | None,
    compare_ref: str | None,
    out: Path | None,
    db_path: Path,
    as_json: bool,
) -> None:
    """Write RUN's report (exact run id or unique prefix) as one HTML file.

    The file holds the run header, success rates per run and per domain, the
    per-signal rates, a latency histogram, a table of sessions with the
    reasons of each failing signal, and per session a speech timeline, the
    transcript and a stereo player. No network is needed to view it.

    \b
    Examples:
      vae report 2026-12 --db vae.db -o report.html
      vae report 2026-12 --db vae.db --scoring SCORING_B --compare SCORING_A --json
    """
    from recordings.reader import RecordingReader
    from recordings.selection import select_run
    from scorer_service.ledger import ScoringNotFoundError
    from scorer_service.report import report_data
    from scorer_service.report.html import render

    if not db_path.exists():
        raise click.UsageError(f"no database at {db_path}")
    with RecordingReader(db_path) as reader:
        run_id = select_run(reader, run)
        try:
            data = report_data(reader, run_id, scoring_ref, compare_ref)
        except ScoringNotFoundError as exc:
            raise click.UsageError(str(exc)) from exc
        except ValueError as exc:
            raise click.UsageError(str(exc)) from exc
    target = out or Path(f"report-{run_id}.html")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(render(data), encoding="utf-8")
    scoring = data["scoring"]["scoring_id"] if data["scoring"] else None
    if as_json:
        print_json(
            {
                "run_id": run_id,
                "scoring_id": scoring,
                "compare_scoring_id": compare_ref and data["compare"]["scoring_a"],
                "report": str(target),
                "sessions": len(data["sessions"]),
            }
        )
    else:
        note = f"scoring {scoring}" if scoring else "not scored yet"
        click.echo(f"wrote {target} ({run_id}, {note}, {len(data['sessions'])} sessions)")


COMMANDS: list[click.Command] = [report_command]
