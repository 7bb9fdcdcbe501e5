"""``vae scores agree``: how well each scoring agrees with the human labels of its run.

Thin: the numbers are :mod:`vae.scorer_service.labels.agreement_report`, the text
:mod:`vae.cli.labels.agreement_text`. Exit codes: 0 printed, 1 the run has no labels
(by that labeller), 2 a reference that names no scoring or run.
"""

from __future__ import annotations

from pathlib import Path

import click

from vae.cli.common import db_option, json_option, print_json, store_errors


@click.command("agree")
@click.argument("scorings", nargs=-1, required=True, metavar="SCORING [SCORING…]")
@click.option("--by", default=None, help="Only this labeller's labels (default: the labellers' "
              "consensus; split items are counted apart).")  # fmt: skip
@db_option
@json_option
@store_errors
def agree_command(scorings: tuple[str, ...], by: str | None, db_path: Path, as_json: bool) -> None:
    """Hold one or more scorings against the human labels of their run.

    Each SCORING is a scoring id (or unique prefix), or a run (exact id or
    prefix) meaning all its complete scorings. Per row — all labels, the
    session (is_successful), each labelled signal, the NL assertions — it
    prints n (items with a decided label and a decided verdict), percent
    agreement and Cohen's κ with its 95% interval side by side, ranks the
    scorings, and lists what was counted apart (can't tell, labellers split,
    unscored, not applicable), the confusion matrices, every disagreement with
    the judge's reason beside the label's note, and κ between labellers who
    labelled the same items. See docs/scoring.md, "Judging the judge".

    \b
    Examples:
      vae scores agree 2026-12 --db vae.db
      vae scores agree SCORING_A SCORING_B --db vae.db --by ann
      vae scores agree SCORING_A --db vae.db --json
    """
    from vae.recordings.read.reader import RecordingReader
    from vae.scorer_service.labels.agreement_report import agreement_report, resolve_scorings
    from vae.scorer_service.ledger.scorings import ScoringNotFoundError

    with RecordingReader(db_path) as reader:
        try:
            found = resolve_scorings(reader, list(scorings))
        except ScoringNotFoundError as exc:
            raise click.UsageError(str(exc)) from exc
        doc = agreement_report(reader, found, by=by)
    if as_json:
        print_json(doc)
        return
    from vae.cli.labels.agreement_text import render_agreement

    click.echo(render_agreement(doc), nl=False)
