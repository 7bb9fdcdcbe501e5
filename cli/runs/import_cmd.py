"""``vae import``: bring runs recorded by other tools into the store.

``vae import nemo DIR`` reads a results directory of the established NeMo
voice-agent evaluation framework (``eval_<timestamp>/``) and stores it as one
run (source ``import:nemo``) that ``vae rescore`` can score like any other.
Missing or malformed files are reported per scenario; they never abort the
import. Exit codes: 0 imported (problems, if any, are listed), 1 the
directory holds no scenarios or the store refused, 2 usage (no such directory,
run id already taken, a source already imported without --again).
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from vae.cli.common import (
    db_option,
    json_option,
    log_level_option,
    print_json,
    setup_logging,
    shown,
)
from vae.cli.runs.import_calls_cmd import import_calls_cmd

if TYPE_CHECKING:
    from vae.recordings.backends.locator import Locator
    from vae.recordings.importers import ImportReport


@click.group("import")
def import_group() -> None:
    """Import runs recorded by other evaluation tools, so vae can rescore them."""


@import_group.command("nemo")
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
@click.option(
    "--run-id",
    envvar="VAE_IMPORT_RUN_ID",
    default=None,
    help="Name the imported run (default: from the directory's eval_<ts> name, e.g. "
    "2024-06-01T10-22-33; env VAE_IMPORT_RUN_ID).",
)
@click.option(
    "--again",
    is_flag=True,
    help="Import even if this directory (same path and content) is already a run here.",
)
@db_option
@json_option
@log_level_option
def import_nemo_cmd(
    directory: Path,
    run_id: str | None,
    again: bool,
    db_path: Locator,
    as_json: bool,
    log_level: str,
) -> None:
    """Import a NeMo evaluation results DIRECTORY (eval_<timestamp>/) as a run.

    Each scenario directory becomes a session (its `<name>.killed.<ts>/`
    siblings earlier, superseded attempts): both audio channels from
    conversation_log.wav, transcripts, write actions, token usage, final-DB
    hashes, LLM contexts and the frozen scenario. The framework's own verdicts
    are kept as a first scoring; unmapped files are kept raw. Then run
    `vae rescore --run RUN_ID`.

    An attempt that crashed or was killed is imported unfinished
    (attempt_crashed: unscored, the run reads failed); wrong-typed fields,
    symlinks that loop, dangle or leave DIRECTORY and special files are listed
    as problems and ignored. Importing the same DIRECTORY (path and content)
    twice is refused (exit 2) unless --again.

    \b
    Examples:
      vae import nemo results/eval_20240601_102233 --db vae.db
      vae import nemo results/eval_20240601_102233 --db vae.db --run-id baseline --json
    """
    from vae.recordings.errors import StoreError
    from vae.recordings.importers import RunIdTakenError, import_nemo
    from vae.recordings.importers.nemo.fingerprint import AlreadyImportedError
    from vae.recordings.importers.nemo.layout import scan

    setup_logging(log_level)
    if not directory.is_dir():
        raise click.UsageError(f"{directory}: no such directory")
    if run_id:
        from vae.recordings.identifiers import InvalidIdentifier, check

        try:
            check("--run-id", run_id)
        except InvalidIdentifier as exc:
            raise click.UsageError(str(exc)) from exc
    total = len(scan(directory))
    try:
        with click.progressbar(length=total, label="importing", file=sys.stderr) as bar:
            report = asyncio.run(
                import_nemo(
                    db_path,
                    directory,
                    run_id=run_id,
                    on_scenario=lambda _: bar.update(1),
                    again=again,
                )
            )
    except (RunIdTakenError, AlreadyImportedError) as exc:
        raise click.UsageError(str(exc)) from exc
    except StoreError as exc:  # ImportSourceError included: nothing importable there
        click.echo(f"error: {exc}", err=True)
        sys.exit(1)
    if as_json:
        print_json(report.to_dict())
    else:
        _print_report(report, db_path)


def _print_report(report: ImportReport, db_path: Locator) -> None:
    sessions = sum(len(s.attempts) for s in report.scenarios)
    click.echo(
        f"imported {report.source_dir} as run {report.run_id}: "
        f"{len(report.scenarios)} scenarios, {sessions} sessions"
    )
    for problem in report.problems:
        click.echo(f"  run: {problem}")
    for scen in report.scenarios:
        states = ", ".join(f"#{a.attempt} {a.status}" for a in scen.attempts)
        flag = f" ({scen.problem_count} problems)" if scen.problem_count else ""
        click.echo(f"  {scen.name}: {states}{flag}")
        for problem in scen.problems:
            click.echo(f"    - {problem}")
        for attempt in scen.attempts:
            for problem in attempt.problems:
                click.echo(f"    - [{attempt.directory}] {problem}")
    if report.scoring_id:
        click.echo(f"the framework's own verdicts are scoring {report.scoring_id}")
    click.echo(f"next: vae rescore --run {report.run_id} --db {shown(db_path)}")


# `vae import calls` lives in its own module (recordings of real calls).
import_group.add_command(import_calls_cmd)
