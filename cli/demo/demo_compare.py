"""The demo's second act: compare this demo run with the previous one.

Every ``vae demo`` adds a run to the same database. When an earlier scored
run is there, the new report carries the run-vs-run comparison (regressions,
fixes, rate deltas, configuration differences) and the summary prints what
changed and the ``vae compare`` command that shows it in the terminal; on the
first run it prints how to get there.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from vae.cli.common import shown
from vae.recordings.read.reader import RecordingReader
from vae.scorer_service.compare.runs import counts_line

if TYPE_CHECKING:
    from vae.recordings.backends.locator import Locator


def previous_scored_run(reader: RecordingReader, run_id: str) -> str | None:
    """The newest other run of the database that has a complete scoring."""
    scored = {s.run_id for s in reader.scorings() if s.status == "complete"}
    runs = [r for r in reader.list_runs() if r.run_id != run_id and r.run_id in scored]
    runs.sort(key=lambda r: r.created_ns)
    return runs[-1].run_id if runs else None


def print_comparison(baseline: dict[str, Any] | None, run_id: str, db_path: Locator) -> None:
    if baseline is None:
        click.echo(
            "run `vae demo` again to compare two runs: the report then shows what changed, "
            "and `vae compare FIRST_RUN SECOND_RUN` prints it"
        )
        return
    click.echo(f"against the previous run {baseline['run_a']}: {counts_line(baseline['counts'])}")
    for s in baseline["scenarios"]:
        if s["change"] in ("regression", "fix"):
            why = s["reasons"][0] if s["reasons"] else ""
            click.echo(f"  {s['change']:<10} {s['scenario']:<32} {why}")
    click.echo(f"see it with: vae compare {baseline['run_a']} {run_id} --db {shown(db_path)}")
