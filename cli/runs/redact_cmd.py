"""``vae redact RUN``: a recorded or imported run with its personal data removed, text and audio.

Into a new store (``--out``), or in place (``--in-place``, explicit: the
original is gone afterwards). Exit codes: 0 redacted (or already redacted
with this configuration: nothing changed), 1 the store or the names endpoint
failed, or the ``redact`` extra is missing, 2 usage (no --out/--in-place,
an unknown run, a malformed configuration or an unknown entity type:
nothing is written).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from vae.cli.common import (
    STORE,
    db_option,
    json_option,
    log_level_option,
    print_json,
    setup_logging,
    shown,
    store_errors,
)
from vae.cli.redaction import checked, redact_config_option

if TYPE_CHECKING:
    from vae.recordings.backends.locator import Locator


@click.command("redact")
@click.argument("run_ref", metavar="RUN")
@click.option(
    "--out",
    "out",
    type=STORE,
    default=None,
    envvar="VAE_REDACT_OUT",
    help="Write the redacted run into this new store (a file or postgresql:// URL); "
    "the source is not changed (env VAE_REDACT_OUT).",
)
@click.option(
    "--in-place",
    is_flag=True,
    help="Replace the run in --db with its redacted copy, then rewrite the database so no "
    "page or WAL frame keeps the original (SQLite VACUUM; PostgreSQL VACUUM FULL).",
)
@redact_config_option
@db_option
@json_option
@log_level_option
@store_errors
def redact_command(
    run_ref: str,
    out: Locator | None,
    in_place: bool,
    redact_config: Path | None,
    db_path: Locator,
    as_json: bool,
    log_level: str,
) -> None:
    """Redact personal data from RUN (exact id or unique prefix): transcripts, events,
    tool arguments and results, final states, LLM contexts, the frozen scenario,
    judge reasons, label notes — each value replaced by its type (<CREDIT_CARD>) —
    and the audio of each value masked with a tone (or silence) on both channels,
    using word timings where the transcripts have them, else the whole turn.

    A ledger of what was redacted where (never the value) is kept with the run
    and shown by `vae report`. Cached judge answers holding personal data are
    deleted. A run already redacted with the same configuration is left as it is.

    \b
    Examples:
      vae redact june --db vae.db --out redacted.db
      vae redact june --db vae.db --in-place --redact-config redaction.yaml
      vae redact june --db vae.db --out redacted.db --json
    """
    from vae.recordings.redact.rewrite import rewrite_run
    from vae.redaction.names import NamesEndpointError

    setup_logging(log_level)
    if (out is None) == (not in_place):
        raise click.UsageError("give --out NEW_STORE, or --in-place to replace the run in --db")
    redactor = checked(redact_config)
    try:
        result = rewrite_run(db_path, run_ref, redactor, dest=out)
    except NamesEndpointError as exc:
        click.echo(f"error: {exc}; nothing was changed", err=True)
        sys.exit(1)
    finally:
        redactor.close()
    if as_json:
        print_json(result.to_dict())
        return
    if result.already:
        click.echo(
            f"run {result.run_id} is already redacted with this configuration in "
            f"{shown(result.dest)}: nothing changed"
        )
        return
    text, audio = result.summary.get("text", {}), result.summary.get("audio", {})
    click.echo(f"redacted run {result.run_id} ({result.mode}) into {shown(result.dest)}")
    for entity in sorted(set(text) | set(audio)):
        click.echo(f"  {entity}: {text.get(entity, 0)} in text, {audio.get(entity, 0)} audio spans")
    if result.summary.get("whole_turns"):
        click.echo(f"  whole turns masked (no word timings): {result.summary['whole_turns']}")
    if result.purged_cache_rows:
        click.echo(f"  cached judge/transcription answers deleted: {result.purged_cache_rows}")
    for line in result.storage:
        click.echo(f"  {line}")
    click.echo(f"next: vae report {result.run_id} --db {shown(result.dest)}")
