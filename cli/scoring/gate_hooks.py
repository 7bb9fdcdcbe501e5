"""Where ``vae rescore``, ``vae run`` and ``vae demo`` hand what they produced to the gate.

Why a module: each command keeps its own rules when no gate option is given;
with one, the command's ending is the gate's, and the glue for that (which
scoring to gate, what to do when the command could not produce one) is the
same shape in all three. Keeping it here leaves each command with a couple of
lines. Exit codes: docs/ci.md ("Exit codes").
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, NoReturn

import click

from vae.cli.gate.gate_output import evaluate, finish, undecided

if TYPE_CHECKING:
    from vae.recordings.backends.locator import Locator
    from vae.scorer_service.gate import GateSpec


def started_ns() -> int:
    """Now, to find the scoring a command creates from here on."""
    return time.time_ns()


def _latest_scoring(db_path: Locator, run_ref: str, since_ns: int) -> str | None:
    """The newest scoring of ``run_ref`` created since ``since_ns`` (the command's own)."""
    from vae.recordings.read.reader import RecordingReader
    from vae.recordings.read.selection import select_run

    if not run_ref or not db_path.exists():
        return None
    try:
        with RecordingReader(db_path) as reader:
            run_id = select_run(reader, run_ref)
            mine = [s for s in reader.scorings(run_id) if s.created_ns >= since_ns]
    except Exception:  # the store cannot tell: the caller reports the cause it has
        return None
    return mine[-1].scoring_id if mine else None


def could_not_score(
    db_path: Locator, run_ref: str, since_ns: int, spec: GateSpec, opts: dict[str, Any],
    reason: str, as_json: bool,
) -> NoReturn:  # fmt: skip
    """Scoring stopped (a judge that cannot be used, a scorer that failed): exit 3.

    The scoring the command recorded as failed is gated when it can be read,
    so the JUnit file and the scorecard say why; otherwise a result holding
    only ``reason``.
    """
    click.echo(f"error: {reason}", err=True)
    scoring_id = _latest_scoring(db_path, run_ref, since_ns)
    if scoring_id is not None:
        result = evaluate(db_path, run_ref, spec, opts, scoring_id=scoring_id)
    else:
        result = undecided(run_ref, spec, f"could not score run {run_ref}: {reason}", opts)
    finish(result, opts, as_json=as_json)
    raise AssertionError("finish exits")  # pragma: no cover


def gate_scoring(
    db_path: Locator, scoring: Any, outcomes: list[Any], spec: GateSpec, opts: dict[str, Any],
    as_json: bool,
) -> NoReturn:  # fmt: skip
    """``vae rescore``'s ending with a gate: its summary, then the gate on that very scoring."""
    from vae.cli.scoring.scores_cmd import emit_scoring
    from vae.scorer_service.ledger.as_dicts import scoring_as_dict

    document = scoring_as_dict(scoring, outcomes) if as_json else None
    if not as_json:
        emit_scoring(scoring, outcomes, as_json=False)
    result = evaluate(db_path, scoring.run_id, spec, opts, scoring_id=scoring.scoring_id)
    finish(result, opts, as_json=as_json, document=document)
    raise AssertionError("finish exits")  # pragma: no cover
