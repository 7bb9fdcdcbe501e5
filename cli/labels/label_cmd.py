"""``vae label`` and ``vae labels import|export|list``: human verdicts in the store.

Thin: the rules of a label are :mod:`vae.scorer_service.labels.labelling`, the file
format :mod:`vae.scorer_service.labels.files`. A bad field, file or reference is a
usage error (exit 2) and writes nothing; an import with any bad row prints
every problem with its line and imports nothing.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import click

from vae.cli.common import db_option, json_option, print_json, store_errors

_BY_HELP = "Who gives the label (env VAE_LABEL_BY; default: the OS user)."
#: How many problems of a refused import are printed (the rest are counted).
SHOWN_PROBLEMS = 50


def _label_dict(x: Any, scenario: str = "") -> dict[str, Any]:
    from vae.scorer_service.labels.files import iso_ns

    return {
        "run_id": x.run_id, "session_id": x.session_id, "scenario": scenario,
        "item": x.item, "signal": x.signal or None,
        "assertion": x.assertion if x.assertion >= 0 else None,
        "assertion_text": x.assertion_text or None, "verdict": str(x.verdict),
        "note": x.note, "by": x.labeller, "at": iso_ns(x.created_ns),
    }  # fmt: skip


@click.command("label")
@click.argument("run")
@click.argument("session_or_scenario")
@click.option(
    "--verdict",
    required=True,
    type=click.Choice(["pass", "fail", "unsure"]),
    help="Your verdict; unsure means you cannot tell (counted apart, never as agreement).",
)
@click.option("--signal", default=None, help="Label this signal (e.g. JUDGE_PASSED), not the "
              "session as a whole.")  # fmt: skip
@click.option("--assertion", type=click.IntRange(min=0), default=None,
              help="Label NL assertion N (0 = the scenario's first).")  # fmt: skip
@click.option("--note", default="", help="Why: shown beside the judge's reason.")
@click.option("--by", envvar="VAE_LABEL_BY", default=None, help=_BY_HELP)
@db_option
@json_option
@store_errors
def label_command(
    run: str,
    session_or_scenario: str,
    verdict: str,
    signal: str | None,
    assertion: int | None,
    note: str,
    by: str | None,
    db_path: Path,
    as_json: bool,
) -> None:
    """Label a session of RUN — as a whole, one signal or one NL assertion.

    SESSION_OR_SCENARIO is a session id or a scenario name (its latest
    attempt). Labels never change a scoring; `vae scores agree` holds scorings
    against them. Labelling the same thing again keeps both; your latest counts.

    \b
    Examples:
      vae label 2026-12 airline_wrong_date --verdict fail --note "booked the 21st"
      vae label 2026-12 airline_wrong_date --signal JUDGE_PASSED --verdict fail
      vae label 2026-12 retail_refund_promise --assertion 0 --verdict fail --by ann
    """
    from vae.recordings.labels import LabelError
    from vae.recordings.read.reader import RecordingReader
    from vae.recordings.read.selection import select_run
    from vae.scorer_service.labels.labelling import make_label, store_labels

    with RecordingReader(db_path) as reader:
        run_id = select_run(reader, run)
        try:
            label = make_label(reader, run_id, session_or_scenario, verdict, signal=signal,
                               assertion=assertion, note=note, by=by)  # fmt: skip
        except LabelError as exc:
            raise click.UsageError(str(exc)) from exc
        session = reader.session(label.session_id)
    asyncio.run(store_labels(db_path, [label]))
    shown = _label_dict(label, session.scenario_name if session else "")
    if as_json:
        print_json(shown)
        return
    what = shown["item"] if label.kind != "assertion" else f"NL #{label.assertion}"
    click.echo(f"labelled {shown['scenario']} ({what}): {verdict} by {label.labeller}")


@click.group("labels")
def labels_group() -> None:
    """Human labels: import them from a file, export them, list them."""


@labels_group.command("import")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--run", "run_ref", default=None, help="The run of rows without a run column.")
@click.option("--format", "fmt", type=click.Choice(["csv", "jsonl"]), default=None,
              help="File format (default: from the name, .csv or .jsonl).")  # fmt: skip
@click.option("--by", envvar="VAE_LABEL_BY", default=None,
              help="Labeller of rows with an empty 'by' (default: the OS user).")  # fmt: skip
@db_option
@json_option
@store_errors
def labels_import(
    file: Path, run_ref: str | None, fmt: str | None, by: str | None, db_path: Path,
    as_json: bool,
) -> None:  # fmt: skip
    """Import labels from FILE (CSV or JSONL; format in docs/scoring.md).

    Every row is checked first; any bad row refuses the whole file (exit 2),
    each problem named with its line, and nothing is imported. Labels already
    in the store (same session, item, labeller and time) are skipped.

    \b
    Examples:
      vae labels import labels.csv --db vae.db
      vae labels import ann.jsonl --run 2026-12 --by ann --db vae.db
    """
    from vae.recordings.labels import LabelError
    from vae.recordings.read.reader import RecordingReader
    from vae.scorer_service.labels.files import LabelFileError, read_labels
    from vae.scorer_service.labels.labelling import store_labels

    with RecordingReader(db_path) as reader:
        try:
            labels = read_labels(reader, file, fmt, run=run_ref, by=by)
        except LabelFileError as exc:
            for line, problem in exc.problems[:SHOWN_PROBLEMS]:
                click.echo(f"{file}:{line}: {problem}" if line else f"{file}: {problem}", err=True)
            if len(exc.problems) > SHOWN_PROBLEMS:
                click.echo(f"… and {len(exc.problems) - SHOWN_PROBLEMS} more", err=True)
            raise click.UsageError(str(exc)) from exc
        except LabelError as exc:
            raise click.UsageError(str(exc)) from exc
        have = {(x.session_id, x.item, x.labeller, x.created_ns)
                for r in {x.run_id for x in labels} for x in reader.labels(r)}  # fmt: skip
    new = [x for x in labels if (x.session_id, x.item, x.labeller, x.created_ns) not in have]
    if new:
        asyncio.run(store_labels(db_path, new))
    doc = {"file": str(file), "rows": len(labels), "imported": len(new),
           "already_present": len(labels) - len(new)}  # fmt: skip
    if as_json:
        print_json(doc)
    else:
        click.echo(f"imported {len(new)} label(s) from {file} "
                   f"({doc['already_present']} already present)")  # fmt: skip


@labels_group.command("export")
@click.argument("run")
@click.option("-o", "--output", "out", type=click.Path(dir_okay=False, path_type=Path),
              default=None, help="File to write (default: stdout).")  # fmt: skip
@click.option("--format", "fmt", type=click.Choice(["csv", "jsonl"]), default=None,
              help="Default: from the output's name, else csv.")  # fmt: skip
@db_option
@store_errors
def labels_export(run: str, out: Path | None, fmt: str | None, db_path: Path) -> None:
    """Write every label of RUN (oldest first) as CSV or JSONL, ready to import.

    \b
    Examples:
      vae labels export 2026-12 --db vae.db -o labels.csv
      vae labels export 2026-12 --db vae.db --format jsonl > labels.jsonl
    """
    from vae.recordings.read.reader import RecordingReader
    from vae.recordings.read.selection import select_run
    from vae.scorer_service.labels.files import label_rows, write_labels

    kind = fmt or ("jsonl" if out and out.suffix.lower() in (".jsonl", ".ndjson") else "csv")
    with RecordingReader(db_path) as reader:
        run_id = select_run(reader, run)
        rows = label_rows(reader, reader.labels(run_id))
    if out is None:
        write_labels(rows, sys.stdout, kind)
        return
    with out.open("w", encoding="utf-8", newline="") as handle:
        write_labels(rows, handle, kind)
    click.echo(f"wrote {len(rows)} label(s) of {run_id} to {out}", err=True)


@labels_group.command("list")
@click.argument("run")
@click.option("--by", default=None, help="Only this labeller's labels.")
@db_option
@json_option
@store_errors
def labels_list(run: str, by: str | None, db_path: Path, as_json: bool) -> None:
    """List the labels of RUN, oldest first (* marks each labeller's latest on an item).

    \b
    Examples:
      vae labels list 2026-12 --db vae.db
      vae labels list 2026-12 --by ann --db vae.db --json
    """
    from vae.recordings.read.reader import RecordingReader
    from vae.recordings.read.selection import select_run
    from vae.recordings.write.label_rows import latest_per_labeller
    from vae.scorer_service.labels.files import label_rows

    with RecordingReader(db_path) as reader:
        run_id = select_run(reader, run)
        labels = reader.labels(run_id, labeller=by)
        rows = label_rows(reader, labels)
    latest = {id(x) for x in latest_per_labeller(labels).values()}
    for row, x in zip(rows, labels, strict=True):
        row["latest"] = id(x) in latest
    if as_json:
        print_json(rows)
        return
    if not rows:
        click.echo(f"no labels in {run_id}" + (f" by {by}" if by else ""))
        return
    from vae.cli.tables import table

    def item(r: dict[str, Any]) -> str:
        if r["assertion"] is not None:
            return f"NL #{r['assertion']}"
        return str(r["signal"] or "session")

    body = [["*" if r["latest"] else "", r["at"][:19].replace("T", " "), r["by"], r["scenario"],
             item(r), r["verdict"], r["note"]] for r in rows]  # fmt: skip
    click.echo(table(["", "at (UTC)", "by", "scenario", "item", "verdict", "note"], body,
                     indent=""))  # fmt: skip
    click.echo("* = the labeller's latest label on that item (the one that counts)")
