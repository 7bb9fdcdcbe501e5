"""``vae gate RUN``: pass or fail a recorded run's scoring, scenario by scenario or on thresholds.

The command is a thin call of the one gate function
(:func:`vae.scorer_service.gate.gate`) on ``--db``; the options are the block
``vae run|rescore|demo`` share (``cli/gate/gate_opts.py``), the files and the
printout come from ``cli/gate/gate_output.py``. Exit codes keep three cases apart:
0 the gate passed, 1 the agent failed it, 3 it could not be decided, 2 usage.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from vae.cli.common import db_option, json_option, store_errors

if TYPE_CHECKING:
    from vae.recordings.backends.locator import Locator
from vae.cli.gate.cost_gate import cost_options, take, with_cost
from vae.cli.gate.gate_opts import gate_options, pop_gate_options


@click.command("gate")
@click.argument("run")
@click.option(
    "--scoring",
    "scoring_ref",
    default=None,
    help="Gate this scoring of RUN (id or unique prefix) instead of its current one.",
)
@gate_options()
@cost_options
@db_option
@json_option
@store_errors
def gate_command(run: str, scoring_ref: str | None, db_path: Locator, as_json: bool,
                 **kw: Any) -> None:  # fmt: skip
    """Gate RUN's current scoring: exit 0 passed, 1 failed, 3 could not decide, 2 usage.

    Without a threshold every decided scenario must pass, as pytest's tests
    do: one that fails its gating signals exits 1, naming it — unless it is
    built to fail (the `expect-fail` tag, or `expect_fail: true`): an expected
    failure. A threshold (--min-success, --pass-k, --baseline) replaces that
    rule and leaves the scenarios built to fail out of its figures; one built
    to fail that passed exits 1 whatever was given. The agent missing a
    threshold or regressing against --baseline exits 1; a run that did not
    complete, no scoring, zero decided sessions or more unscored sessions
    than allowed (--max-unscored) exits 3 — never 0.
    --junit-xml and --summary-md write what CI tools read; the scorecard is
    also appended to $GITHUB_STEP_SUMMARY when it is set. See docs/ci.md.
    --max-cost-per-call USD with --prices FILE fails a run with a call (a
    counted session) that cost more, and cannot decide (3) when a price is
    unknown (docs/traces.md).

    \b
    Examples:
      vae gate 2026-12-02 --db vae.db --junit-xml vae-junit.xml
      vae gate 2026-12-02 --db vae.db --min-success 0.8
      vae gate v2 --baseline v1 --max-regressions 0 --junit-xml vae-junit.xml
      vae gate v2 --min-success airline=90% --min-success 0.75 --summary-md gate.md
      vae gate nightly --pass-k 3=0.6 --max-unscored 2 --json
      vae gate nightly --max-cost-per-call 0.05 --prices prices.toml
    """
    from vae.cli.gate.gate_opts import gate_spec
    from vae.cli.gate.gate_output import evaluate, finish

    max_cost, prices = take(kw)  # --max-cost-per-call (cli/gate/cost_gate.py)
    opts = pop_gate_options(kw)
    spec = gate_spec(opts)
    result = evaluate(db_path, run, spec, opts, scoring_id=scoring_ref)
    result = with_cost(result, db_path, max_cost, prices)
    finish(result, opts, as_json=as_json, cases=True)
