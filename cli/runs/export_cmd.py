"""``vae export``: audio, transcripts and events of recorded sessions."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from vae.cli.common import db_option, json_option, print_json, store_errors

if TYPE_CHECKING:
    from vae.recordings.backends.locator import Locator


@click.command("export")
@click.argument("run")
@click.option("--session", "session_ids", multiple=True, help="Only this session (repeatable).")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["wav", "flac", "json"]),
    default="wav",
    show_default=True,
    help="wav/flac: stereo (user left, agent right) plus mono per side; json: transcript, "
    "events and final states.",
)
@click.option(
    "-o",
    "--output",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("export"),
    show_default=True,
    help="Directory to write into.",
)
@db_option
@json_option
@store_errors
def export_command(
    run: str,
    session_ids: tuple[str, ...],
    fmt: str,
    out_dir: Path,
    db_path: Locator,
    as_json: bool,
) -> None:
    """Export RUN (exact id or unique prefix) as audio files or JSON.

    Files go to OUTPUT/<run>/<scenario>.<attempt>.<kind>; nothing is ever
    written outside OUTPUT. Progress goes to stderr; stdout has only the
    result (one JSON document with --json).

    \b
    Examples:
      vae export 2026-12 --db vae.db --format flac -o export/
      vae export 2026-12 --db vae.db --format json --session SESSION_ID --json
    """
    from vae.recordings.identifiers import OutsideTarget

    try:
        _export(run, session_ids, fmt, out_dir, db_path, as_json)
    except OutsideTarget as exc:
        click.echo(f"error: {exc}", err=True)
        raise SystemExit(1) from exc


def _export(
    run: str, session_ids: tuple[str, ...], fmt: str, out_dir: Path, db_path: Locator, as_json: bool
) -> None:
    from vae.recordings import identifiers
    from vae.recordings.identifiers import contained
    from vae.recordings.read.export import export_session
    from vae.recordings.read.reader import RecordingReader
    from vae.recordings.read.selection import select_run

    with RecordingReader(db_path) as reader:
        run_id = select_run(reader, run)
        sessions = reader.sessions(run_id)
        if session_ids:
            known = {s.session_id for s in sessions}
            missing = [s for s in session_ids if s not in known]
            if missing:
                raise click.UsageError(f"run {run_id} has no session {missing[0]!r}")
            sessions = [s for s in sessions if s.session_id in session_ids]
        written: list[Path] = []
        target = contained(out_dir, identifiers.slug(run_id, "run"))
        with click.progressbar(sessions, label=f"exporting {run_id}", file=sys.stderr) as bar:
            for s in bar:
                written.extend(export_session(reader, s.session_id, target, fmt))
    if as_json:
        print_json({"run_id": run_id, "files": [str(p) for p in written]})
    else:
        click.echo(f"wrote {len(written)} files to {target}")
