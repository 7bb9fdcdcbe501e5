"""``vae validate``: check scenario files without starting anything.

Why: a mistake found while a call is being placed costs a run. This reads
every source given, checks every document against the scenario schema (bot
scripts and tool effects included) and reports every problem of every file in
one pass, as ``file:line:column: field: problem`` with a "did you mean" for
misspelt keys and values. ``vae run`` runs the same check before it asks the
bridge for a run (:func:`refuse_invalid`), and the bridge runs it again in
``StartRun``.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from vae.cli.common import json_option, print_json

if TYPE_CHECKING:
    from vae.recordings.scenarios.lint import LintResult


def summary(result: LintResult) -> str:
    files = len(result.files)
    scenarios = len(result.scenarios)
    head = f"{files} file{'s' * (files != 1)}, {scenarios} valid scenario{'s' * (scenarios != 1)}"
    if not result.problems:
        return f"{head}: no problems"
    bad = len({p.file for p in result.problems})
    count = len(result.problems)
    return f"{head}: {count} problem{'s' * (count != 1)} in {bad} file{'s' * (bad != 1)}"


def _missing(result: LintResult) -> bool:
    return any(p.problem == "does not exist" for p in result.problems)


@click.command("validate")
@click.argument("scenarios", nargs=-1, required=True)
@json_option
def validate_command(scenarios: tuple[str, ...], as_json: bool) -> None:
    """Check SCENARIOS (files, folders, .py files or module names); start nothing.

    Lists every problem of every file, `file:line:column: field: problem`,
    then a summary line. Exit codes: 0 no problems, 1 problems found, 2 usage
    (no argument, or a path that does not exist). The same check runs in
    `vae run` before a run is started. The format is docs/scenarios.md; the
    JSON Schema is `vae schema scenario`.

    \b
    Examples:
      vae validate examples/suite
      vae validate my-scenarios/ other.yaml --json
    """
    from vae.recordings.scenarios.lint import lint_arguments

    result = lint_arguments(list(scenarios))
    if as_json:
        print_json(
            {
                "ok": not result.problems,
                "files": result.files,
                "scenarios": [s.name for s in result.scenarios],
                "problems": [
                    {
                        "file": p.file,
                        "line": p.line,
                        "column": p.column,
                        "field": p.field,
                        "problem": p.problem,
                    }
                    for p in result.problems
                ],
                "summary": summary(result),
            }
        )
    else:
        for problem in result.problems:
            click.echo(str(problem))
        click.echo(summary(result))
    if result.problems:
        sys.exit(2 if _missing(result) else 1)


def refuse_invalid(scenarios: tuple[str, ...]) -> None:
    """Before ``vae run`` starts a run: exit 2 listing every problem of local sources.

    Only sources this machine can read are checked (the bridge checks them all
    again); a dotted module name that does not import here is left to the bridge.
    """
    from vae.recordings.scenarios.lint import lint_arguments

    local = [s for s in scenarios if Path(s).exists()]
    if not local:
        return
    result = lint_arguments(local)
    if result.problems:
        for problem in result.problems:
            click.echo(str(problem), err=True)
        click.echo(f"{summary(result)}; no run started", err=True)
        sys.exit(2)
