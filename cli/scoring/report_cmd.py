"""``vae report``: one self-contained HTML report of a run (plots, tables, audio)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from vae.cli.common import db_option, json_option, print_json, shown, store_errors
from vae.cli.telemetry import prices_option

if TYPE_CHECKING:
    from vae.recordings.backends.locator import Locator


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
    "--baseline",
    "baseline_ref",
    default=None,
    help="Compare with this earlier run (id or prefix), scenario by scenario: regressions, "
    "fixes, rate deltas and configuration differences (as vae compare).",
)
@click.option(
    "--baseline-scoring",
    default=None,
    help="Scoring of the baseline run to compare with (default: its current one).",
)
@click.option(
    "--audio",
    "audio_mode",
    type=click.Choice(["inline", "files", "none"]),
    default="inline",
    show_default=True,
    envvar="VAE_REPORT_AUDIO",
    help="Embed each session's audio in the HTML, keep it as files in a folder "
    "<report>_audio/ beside it (large runs: a smaller page that opens faster), or leave it "
    "out (env VAE_REPORT_AUDIO).",
)
@click.option(
    "-o",
    "--output",
    "out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="HTML file to write (default: report-<run>.html in the current folder).",
)
@prices_option
@db_option
@json_option
@store_errors
def report_command(
    run: str,
    scoring_ref: str | None,
    compare_ref: str | None,
    baseline_ref: str | None,
    baseline_scoring: str | None,
    audio_mode: str,
    out: Path | None,
    prices: Any,
    db_path: Locator,
    as_json: bool,
) -> None:
    """Write RUN's report (exact run id or unique prefix) as one HTML file.

    First the scorecard (success rate with the unscored count, per domain and
    per signal, latency p50/p95, pass^k for repeated trials; deltas against
    --baseline), then every failing session with its one-line reason; per
    session the waveforms, transcript, tool calls and interruptions on one
    time axis with a player (click a line to hear it), per-turn latency, the
    DB diff and every assertion's verdict and reason. Filters and sorting work
    offline; nothing is fetched when it is viewed. Where the agent sent its
    OpenTelemetry spans (vae run --otlp-receiver), each session shows them as
    a per-turn waterfall beside the latency on the wire and says where a slow
    turn's time went; with --prices FILE, what each session, the run and the
    scoring cost (docs/traces.md).

    \b
    Examples:
      vae report 2026-12-02 --db vae.db -o report.html
      vae report v2-run --baseline v1-run --db vae.db
      vae report big-run --audio files -o big.html   # audio in big_audio/
      vae report 2026-12 --db vae.db --scoring SCORING_B --compare SCORING_A --json
      vae report 2026-12 --db vae.db --prices examples/prices/prices.example.toml
    """
    from vae.recordings.read.reader import RecordingReader
    from vae.recordings.read.selection import select_run
    from vae.scorer_service.ledger.scorings import ScoringNotFoundError
    from vae.scorer_service.report import report_data
    from vae.scorer_service.report.html import render

    if not db_path.exists():
        raise click.UsageError(f"no database at {shown(db_path)}")
    with RecordingReader(db_path) as reader:
        run_id = select_run(reader, run)
        from vae.recordings.identifiers import contained, slug

        # The default name carries the run id: keep it in the current folder.
        target = out or contained(Path.cwd(), f"report-{slug(run_id, 'run')}.html")
        audio_dir = target.with_name(f"{target.stem}_audio") if audio_mode == "files" else None
        try:
            data = report_data(
                reader, run_id, scoring_ref, compare_ref,
                include_audio=audio_mode == "inline", audio_dir=audio_dir,
                baseline_run=baseline_ref, baseline_scoring=baseline_scoring, prices=prices,
            )  # fmt: skip
        except ScoringNotFoundError as exc:
            raise click.UsageError(str(exc)) from exc
        except ValueError as exc:
            raise click.UsageError(str(exc)) from exc
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(render(data), encoding="utf-8")
    if data["baseline"]:
        for warning in data["baseline"]["warnings"]:
            click.echo(f"warning: {warning}", err=True)
    scoring = data["scoring"]["scoring_id"] if data["scoring"] else None
    if as_json:
        print_json(
            {
                "run_id": run_id,
                "scoring_id": scoring,
                "compare_scoring_id": compare_ref and data["compare"]["scoring_a"],
                "report": str(target),
                "sessions": len(data["sessions"]),
                "baseline_run_id": data["baseline"]["run_a"] if data["baseline"] else None,
                "regressions": data["baseline"]["counts"]["regression"]
                if data["baseline"]
                else None,
                "audio_dir": str(audio_dir) if audio_dir else None,
                **({"cost": data["cost"]} if prices is not None else {}),
            }
        )
    else:
        note = f"scoring {scoring}" if scoring else "not scored yet"
        if data["scoring"] and data["scoring"]["status"] != "complete":
            note += f" ({data['scoring']['status']})"
        click.echo(f"wrote {target} ({run_id}, {note}, {len(data['sessions'])} sessions)")
        if data["baseline"]:
            from vae.scorer_service.compare.runs import counts_line

            counts = counts_line(data["baseline"]["counts"])
            click.echo(f"against {data['baseline']['run_a']}: {counts}")
        if audio_dir:
            click.echo(f"audio in {audio_dir}/ (keep it beside the HTML)")
