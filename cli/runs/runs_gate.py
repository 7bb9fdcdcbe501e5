"""What ``vae runs show`` says of a run's verdicts: each session's outcome, and the gate.

Why apart from ``cli/runs/runs_cmd.py`` (the recordings): this reads the run's
current scoring through the one gate function with no threshold — exactly
what ``vae gate RUN`` decides — so the table's ``outcome`` column (passed,
failed, expected failure, unexpectedly passed, unscored) and the closing gate
lines cannot disagree with the gate, the report or the pytest plugin. A run
with no scoring says so (the gate could not decide), never "passed".
"""

from __future__ import annotations

from typing import Any

from vae.recordings.read.reader import RecordingReader
from vae.recordings.scenarios.expect import WORDS, expects_failure
from vae.scorer_service.gate import GateResult, GateSpec, gate_with_reader


def run_verdicts(reader: RecordingReader, run_id: str) -> GateResult:
    """The gate without a threshold on ``run_id``'s current scoring."""
    return gate_with_reader(reader, run_id, GateSpec())


def annotate(reader: RecordingReader, run_id: str, rows: list[dict[str, Any]],
             result: GateResult) -> None:  # fmt: skip
    """Add ``expect_fail`` and ``outcome`` to each session row (``""``: superseded attempts
    and sessions the gate does not hold, which are not gated)."""
    built = {s.scenario_name: expects_failure(s.scenario) for s in reader.run_scenarios(run_id)}
    outcomes = {c.session_id: c.outcome for c in result.cases if c.session_id}
    for row in rows:
        row["expect_fail"] = built.get(row["scenario"], False)
        row["outcome"] = outcomes.get(row["session_id"], "")


def gate_block(result: GateResult) -> dict[str, Any]:
    """The ``gate`` key of ``vae runs show --json``."""
    return {
        "rule": result.rule,
        "status": result.status,
        "exit_code": result.exit_code,
        "headline": result.headline,
        "scoring_id": result.scoring_id,
        "counts": result.counts,
        "checks": [c.as_dict() for c in result.checks],
    }


def shown(outcome: str) -> str:
    """An outcome as the table prints it."""
    return WORDS.get(outcome, outcome)


def gate_lines(result: GateResult) -> list[str]:
    """The gate's verdict, then each check that did not pass and the per-scenario rule's."""
    scoring = f"scoring {result.scoring_id}" if result.scoring_id else "no scoring"
    lines = [f"gate (no thresholds, as `vae gate {result.run_id}` decides, {scoring}): "
             f"{result.headline} (exit {result.exit_code})"]  # fmt: skip
    for check in result.checks:
        if check.status != "passed" or check.name in ("scenarios", "expect-fail"):
            lines.append(f"  {check.status:<9} {check.name}: {check.message}")
    return lines
