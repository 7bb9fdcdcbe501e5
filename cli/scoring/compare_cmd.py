"""``vae compare RUN_A RUN_B``: did agent v2 (run B) do better than v1 (run A)?

A thin caller of :func:`vae.scorer_service.compare.runs.compare_runs`, reading the
database directly (no service needed). Exit codes: 0 compared (also with
regressions, unless ``--fail-on-regression``), 1 with ``--fail-on-regression``
a regression, or a scenario that could not be compared (unscored on a side,
a side with no scoring, or in one run only) unless ``--allow-unscored``,
2 bad input (unknown run or scoring, a scoring of another run, no database).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from vae.cli.common import db_option, json_option, print_json, shown, store_errors

if TYPE_CHECKING:
    from vae.recordings.backends.locator import Locator


@click.command("compare")
@click.argument("run_a")
@click.argument("run_b")
@click.option("--scoring-a", default=None, help="Scoring of RUN_A (default: its current one).")
@click.option("--scoring-b", default=None, help="Scoring of RUN_B (default: its current one).")
@click.option(
    "--fail-on-regression",
    is_flag=True,
    envvar="VAE_FAIL_ON_REGRESSION",
    help="Exit 1 when any scenario regressed, or could not be compared (unscored on a "
    "side, a side with no scoring, in one run only) unless --allow-unscored (for CI) "
    "(env VAE_FAIL_ON_REGRESSION).",
)
@click.option(
    "--allow-unscored",
    is_flag=True,
    envvar="VAE_ALLOW_UNSCORED",
    help="With --fail-on-regression: exit 0 even when scenarios are unscored or in one run "
    "only; only regressions fail (env VAE_ALLOW_UNSCORED).",
)
@db_option
@json_option
@store_errors
def compare_command(
    run_a: str,
    run_b: str,
    scoring_a: str | None,
    scoring_b: str | None,
    fail_on_regression: bool,
    allow_unscored: bool,
    db_path: Locator,
    as_json: bool,
) -> None:
    """Compare RUN_B against RUN_A scenario by scenario (ids or unique prefixes).

    Each scenario is a regression (passed in A, failed in B), a fix, the same,
    unscored (no verdict on a side: never counted as a flip), or present in one
    run only. Repeated trials (vae run --repeat K) are compared with pass^k.
    Prints the reason of every flip, the rates side by side and what differed
    in the two runs' and scorings' configuration. Exit codes: 0 compared; 1
    with --fail-on-regression when a scenario regressed or could not be
    compared (unscored, a side not scored, in one run only: named on stderr)
    unless --allow-unscored; 2 bad input.

    \b
    Examples:
      vae compare 2026-12-01 2026-12-02 --db vae.db
      vae compare v1-run v2-run --json --fail-on-regression
      vae compare v1-run v2-run --fail-on-regression --allow-unscored   # only regressions fail
    """
    from vae.scorer_service.compare.runs import CompareError, compare_runs
    from vae.scorer_service.ledger.scorings import ScoringNotFoundError

    if not db_path.exists():
        raise click.UsageError(f"no database at {shown(db_path)}")
    try:
        cmp = compare_runs(db_path, run_a, run_b, scoring_a=scoring_a, scoring_b=scoring_b)
    except (CompareError, ScoringNotFoundError) as exc:
        raise click.UsageError(str(exc)) from exc
    for warning in cmp.warnings:
        click.echo(f"warning: {warning}", err=True)
    if as_json:
        print_json(cmp.as_dict())
    else:
        from vae.cli.scoring.scoring_text import render_comparison

        click.echo(render_comparison(cmp), nl=False)
    if not fail_on_regression:
        return
    failed = False
    if cmp.regressions:
        names = ", ".join(s.scenario for s in cmp.regressions)
        click.echo(f"{len(cmp.regressions)} regression(s): {names}", err=True)
        failed = True
    if cmp.undecided:
        names = ", ".join(f"{s.scenario} ({_UNDECIDED[s.change]})" for s in cmp.undecided)
        line = f"{len(cmp.undecided)} scenario(s) not compared: {names}"
        if allow_unscored:
            click.echo(f"{line} (accepted: --allow-unscored)", err=True)
        else:
            click.echo(f"{line}; exit 1 (--allow-unscored accepts this)", err=True)
            failed = True
    if failed:
        sys.exit(1)


_UNDECIDED = {"unscored": "unscored", "only_a": "only in A", "only_b": "only in B"}
