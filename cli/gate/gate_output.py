"""Applying a gate for a command: the verdict, the files CI reads, the lines a person reads.

Why apart from the options (``cli/gate/gate_opts.py``): this is what happens once
a command has a run to gate — call the one gate function, write the JUnit
file, the Markdown scorecard (and ``$GITHUB_STEP_SUMMARY``) and the report,
print the checks — and it is the same for ``vae gate``, ``vae run``,
``vae rescore`` and ``vae demo``. When the command could not produce anything
to gate (a bridge that cannot be reached, a judge that cannot be used), the
files still say so: a result whose one check is "could not decide", exit 3.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from vae.recordings.backends.locator import Locator
    from vae.scorer_service.gate import GateResult, GateSpec

_MARK = {"passed": "ok", "failed": "FAILED", "undecided": "UNDECIDED"}
#: How a case's outcome is printed (pytest's word for an unexpected pass).
_SHOWN = {"xpassed": "XPASS"}


def evaluate(
    db_path: Locator, run_ref: str, spec: GateSpec, opts: dict[str, Any],
    *, scoring_id: str | None = None, report_file: Path | None = None,
) -> GateResult:  # fmt: skip
    """The gate's result with its links; bad references and thresholds exit 2.

    ``report_file``: a report the command already wrote (``vae demo``), linked as is.
    """
    from vae.recordings.errors import RunSelectionError
    from vae.scorer_service.gate import GateSpecError, gate
    from vae.scorer_service.ledger.scorings import ScoringNotFoundError

    try:
        result = gate(db_path, run_ref, spec, scoring_ref=scoring_id)
    except (GateSpecError, RunSelectionError, ScoringNotFoundError, FileNotFoundError) as exc:
        raise click.UsageError(str(exc)) from exc
    links = {"database": str(db_path),
             "report_command": f"vae report {result.run_id} --db {db_path}"}  # fmt: skip
    if opts.get("report_url"):
        links["report_url"] = str(opts["report_url"])
    if opts.get("report"):
        links["report"] = str(_write_report(db_path, result, Path(opts["report"])))
    elif report_file is not None:
        links["report"] = str(report_file)
    return replace(result, links=links)


def _write_report(db_path: Locator, result: GateResult, out: Path) -> Path:
    from vae.recordings.read.reader import RecordingReader
    from vae.scorer_service.report import report_data
    from vae.scorer_service.report.html import render

    with RecordingReader(db_path) as reader:
        data = report_data(
            reader, result.run_id, result.scoring_id,
            baseline_run=result.comparison.run_a if result.comparison else None,
        )  # fmt: skip
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(render(data), encoding="utf-8")
    return out


def undecided(run_id: str, spec: GateSpec, reason: str, opts: dict[str, Any]) -> GateResult:
    """A result for a command that produced nothing to gate: one undecided check, exit 3."""
    from vae.scorer_service.gate import Check, GateResult

    links = {"report_url": str(opts["report_url"])} if opts.get("report_url") else {}
    return GateResult(run_id=run_id or "(none)", run_status="not run" if not run_id else "",
                      run_error=reason, scoring_id=None, spec=spec,
                      checks=[Check("scored", "undecided", reason)], cases=[],
                      links=links)  # fmt: skip


def publish(result: GateResult, opts: dict[str, Any]) -> list[str]:
    """Write the JUnit file and the scorecards asked for; the places written."""
    from vae.scorer_service.gate.junit import write_junit
    from vae.scorer_service.gate.markdown import write_summary

    written = []
    for key, flag, write in (("junit_xml", "--junit-xml", write_junit),
                             ("summary_md", "--summary-md", write_summary)):  # fmt: skip
        if opts.get(key):
            try:
                written.append(str(write(result, opts[key])))
            except OSError as exc:
                raise click.UsageError(f"{flag} {opts[key]}: cannot write it ({exc})") from exc
    step = os.environ.get("GITHUB_STEP_SUMMARY")
    if step and not opts.get("no_step_summary"):
        try:
            write_summary(result, step, append=True)
            written.append("$GITHUB_STEP_SUMMARY")
        except OSError as exc:
            click.echo(f"warning: cannot append to $GITHUB_STEP_SUMMARY {step}: {exc}", err=True)
    return written


def text_lines(result: GateResult, *, cases: bool) -> list[str]:
    """What a terminal shows: the verdict, each check, (the failing scenarios), the files."""
    lines = [f"gate: {result.headline} (exit {result.exit_code})"]
    width = max((len(c.name) for c in result.checks), default=8)
    for check in result.checks:
        lines.append(f"  {_MARK[check.status]:<10} {check.name:<{width}}  {check.message}")
    if cases:
        for case in result.cases:
            if case.outcome in ("failed", "xpassed", "unscored"):
                lines.append(f"  {_SHOWN.get(case.outcome, case.outcome):<10} {case.name}  "
                             f"{case.reason}")  # fmt: skip
    if result.comparison is not None:
        built = {c.scenario for c in result.cases if c.expect_fail}
        for s in result.comparison.regressions:
            why = s.reasons[0] if s.reasons else ""
            note = " (built to fail: not counted)" if s.scenario in built else ""
            lines.append(f"  regressed  {s.scenario}{note}  {why}")
    return lines


def finish(
    result: GateResult, opts: dict[str, Any], *, as_json: bool,
    document: dict[str, Any] | None = None, cases: bool = False,
) -> None:  # fmt: skip
    """Write, print (or add ``gate`` to the command's JSON ``document``), exit with the code."""
    from vae.cli.common import print_json

    written = publish(result, opts)
    if as_json:
        body = result.as_dict()
        print_json(body if document is None else {**document, "gate": body})
    else:
        for line in text_lines(result, cases=cases):
            click.echo(line)
        if written:
            click.echo("wrote " + ", ".join(written))
    raise SystemExit(result.exit_code)
