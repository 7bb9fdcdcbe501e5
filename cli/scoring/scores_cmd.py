"""``vae scores list|show|diff``: read the score ledger, and print a scoring.

Why apart from ``vae rescore``: these commands only read scorings already in
``--db`` (no scorer runs, no judge is asked), and change with the ledger and
its comparisons. ``vae rescore`` prints its new scoring exactly as ``vae
scores show`` does, through :func:`emit_scoring`, so the two cannot drift.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from vae.cli.common import db_option, json_option, print_json, store_errors
from vae.cli.labels.agree_cmd import agree_command
from vae.cli.telemetry import prices_option

if TYPE_CHECKING:
    from vae.recordings.backends.locator import Locator
    from vae.recordings.read.reader import RecordingReader
    from vae.scorer_service.ledger.aggregate import SessionOutcome


def emit_scoring(
    scoring: Any, outcomes: list[SessionOutcome], as_json: bool, cost: dict[str, Any] | None = None
) -> None:
    """Print a scoring: one JSON document with ``--json``, else the text summary; ``cost``
    (``vae scores show --prices``) is added to both."""
    from vae.scorer_service.ledger.as_dicts import scoring_as_dict

    if as_json:
        print_json({**scoring_as_dict(scoring, outcomes), **({"cost": cost} if cost else {})})
    else:
        from vae.cli.scoring.scoring_text import render_scoring
        from vae.cli.telemetry_view import scoring_lines

        click.echo(render_scoring(scoring, outcomes), nl=False)
        for line in scoring_lines(cost) if cost else []:
            click.echo(line)


@click.group("scores")
def scores_group() -> None:
    """The score ledger: list a run's scorings, show one, diff two, agree with labels."""


scores_group.add_command(agree_command)


def _scoring(reader: RecordingReader, ref: str) -> Any:
    from vae.scorer_service.ledger import scorings as ledger

    try:
        return ledger.resolve_scoring(reader, ref)
    except ledger.ScoringNotFoundError as exc:
        raise click.UsageError(str(exc)) from exc


@scores_group.command("list")
@click.argument("run", required=False, default="")
@db_option
@json_option
@store_errors
def scores_list(run: str, db_path: Locator, as_json: bool) -> None:
    """List the scorings of RUN (exact id or prefix; all runs when omitted).

    \b
    Examples:
      vae scores list 2026-12 --db vae.db
      vae scores list --db vae.db --json
    """
    from vae.recordings.read.reader import RecordingReader
    from vae.scorer_service.ledger import scorings as ledger
    from vae.scorer_service.ledger.as_dicts import scoring_as_dict

    with RecordingReader(db_path) as reader:
        found = ledger.list_scorings(reader, run)
        current = {r: ledger.current_scoring(reader, r) for r in {s.run_id for s in found}}
    shown = {r: c.scoring_id for r, c in current.items() if c is not None}
    if as_json:
        print_json([scoring_as_dict(s) for s in found])
        return
    from vae.cli.scoring.scoring_text import render_scoring_list

    click.echo(render_scoring_list(found, shown), nl=False)


@scores_group.command("show")
@click.argument("scoring")
@db_option
@prices_option
@json_option
@store_errors
def scores_show(scoring: str, db_path: Locator, prices: Any, as_json: bool) -> None:
    """Show SCORING (exact id or unique prefix): summary and per-session verdicts.

    With `--prices FILE`: what the scoring cost (the judge's calls, the LLM
    caller's reports) and what the agent cost in each session it scored; a
    missing price is "?" (null in --json), never 0 (docs/traces.md).

    \b
    Examples:
      vae scores show SCORING_ID --db vae.db
      vae scores show SCORING_ID --db vae.db --json
      vae scores show SCORING_ID --db vae.db --prices examples/prices/prices.example.toml
    """
    from vae.cli.telemetry_view import scoring_extras
    from vae.recordings.read.reader import RecordingReader
    from vae.scorer_service.ledger import scorings as ledger

    with RecordingReader(db_path) as reader:
        record = _scoring(reader, scoring)
        outcomes = ledger.session_outcomes(reader, record)
        cost = scoring_extras(reader, record, prices)
    emit_scoring(record, outcomes, as_json, cost)


@scores_group.command("diff")
@click.argument("scoring_a")
@click.argument("scoring_b")
@db_option
@json_option
@store_errors
def scores_diff(scoring_a: str, scoring_b: str, db_path: Locator, as_json: bool) -> None:
    """What changed from SCORING_A to SCORING_B: per scenario, per signal, and why.

    Meant for two scorings of one run; scorings of two runs are compared
    scenario by scenario with a warning (vae compare does that on purpose).
    A signal one scoring did not produce is listed as missing, never as a flip.

    \b
    Examples:
      vae scores diff SCORING_A SCORING_B --db vae.db
      vae scores diff SCORING_A SCORING_B --db vae.db --json
    """
    from vae.recordings.read.reader import RecordingReader
    from vae.scorer_service.compare.runs import compare_runs
    from vae.scorer_service.ledger import scorings as ledger
    from vae.scorer_service.ledger.as_dicts import flips_as_dicts

    with RecordingReader(db_path) as reader:
        a, b = _scoring(reader, scoring_a), _scoring(reader, scoring_b)
        flips, summary = ledger.compare(reader, a, b)
    if a.run_id != b.run_id:
        click.echo(
            f"warning: {a.scoring_id} scores run {a.run_id} but {b.scoring_id} scores run "
            f"{b.run_id}: matching by scenario name (see vae compare)",
            err=True,
        )
    cmp = compare_runs(db_path, a.run_id, b.run_id, scoring_a=a.scoring_id, scoring_b=b.scoring_id)
    if as_json:
        print_json({"flips": flips_as_dicts(flips), "summary": summary, **cmp.as_dict()})
    else:
        from vae.cli.scoring.scoring_text import render_comparison, render_signal_flips

        if a.run_id == b.run_id:  # sessions match only within one run
            click.echo(render_signal_flips(a.scoring_id, b.scoring_id, flips, summary), nl=False)
        click.echo(render_comparison(cmp), nl=False)
