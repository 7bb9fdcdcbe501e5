"""The score ledger: reading scorings back, choosing one, comparing two.

Scorings are only ever appended (and, with overwrite, marked superseded);
these queries read them through ``RecordingReader`` plus a little SQL of
their own. A scoring reference is an exact scoring id or a unique prefix.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from vae.recordings.errors import StoreError
from vae.recordings.models import ScoringRecord, Verdict
from vae.recordings.read.reader import RecordingReader
from vae.recordings.read.selection import select_run
from vae.scorer_service import signals
from vae.scorer_service.ledger.aggregate import SessionOutcome


class ScoringNotFoundError(StoreError):
    """No scoring (or several) match a reference."""


class ScoringMismatchError(StoreError, ValueError):
    """A scoring was named together with a run it does not belong to (INVALID_ARGUMENT)."""


def resolve_scoring(reader: RecordingReader, ref: str) -> ScoringRecord:
    exact = reader.scoring(ref)
    if exact is not None:
        return exact
    ids = [
        r[0]
        for r in reader.conn.execute(
            "SELECT scoring_id FROM scorings WHERE substr(scoring_id, 1, ?) = ?", (len(ref), ref)
        )
    ]
    if len(ids) == 1 and ref:
        found = reader.scoring(ids[0])
        assert found is not None
        return found
    if not ids or not ref:
        raise ScoringNotFoundError(f"no scoring matches {ref!r}")
    raise ScoringNotFoundError(f"{ref!r} matches {len(ids)} scorings: {', '.join(ids[:10])}")


def list_scorings(reader: RecordingReader, run_ref: str = "") -> list[ScoringRecord]:
    run_id = select_run(reader, run_ref) if run_ref else None
    return reader.scorings(run_id)


def may_be_current(scoring: ScoringRecord) -> bool:
    """False for a subset rescore (``--session``/``--only``) made without ``--make-current``."""
    scope = scoring.summary.get("scope")
    return not (isinstance(scope, dict) and scope.get("current") is False)


def current_scoring(reader: RecordingReader, run_id: str) -> ScoringRecord | None:
    """The run's newest complete scoring that nothing superseded and that may be current
    (a subset rescore is not, unless it was made with ``make_current``)."""
    live = [
        s
        for s in reader.scorings(run_id)
        if s.status == "complete" and s.superseded_by is None and may_be_current(s)
    ]
    return live[-1] if live else None


def session_outcomes(reader: RecordingReader, scoring: ScoringRecord) -> list[SessionOutcome]:
    """The scoring's scores grouped per session, with scenario name and domain."""
    domains = {s.scenario_name: s.domain for s in reader.run_scenarios(scoring.run_id)}
    by_session: dict[str, SessionOutcome] = {}
    for score in reader.scores(scoring.scoring_id):
        outcome = by_session.get(score.session_id)
        if outcome is None:
            session = reader.session(score.session_id)
            name = session.scenario_name if session else ""
            duration = session.duration_s if session else 0.0
            outcome = SessionOutcome(score.session_id, name, domains.get(name, ""), duration)
            by_session[score.session_id] = outcome
        outcome.scores.append(score)
    return sorted(by_session.values(), key=lambda o: (o.scenario_name, o.session_id))


@dataclass(frozen=True)
class Flip:
    session_id: str
    scenario_name: str
    signal: str
    verdict_a: Verdict | None
    verdict_b: Verdict | None
    value_a: float | None
    value_b: float | None


#: Signals compared by verdict (measurements differ by value only and are left out).
COMPARED = (*signals.SUCCESS_SIGNALS, *signals.COMPOSITES, signals.STALLED)


def compare(
    reader: RecordingReader, a: ScoringRecord, b: ScoringRecord
) -> tuple[list[Flip], dict[str, Any]]:
    """Per-session, per-signal verdict flips from ``a`` to ``b``, and rate changes.

    A signal present in one scoring only is counted in ``summary["missing"]``,
    never as a flip.
    """
    left = {o.session_id: o for o in session_outcomes(reader, a)}
    right = {o.session_id: o for o in session_outcomes(reader, b)}
    flips: list[Flip] = []
    missing = 0
    for sid in sorted(set(left) | set(right)):
        lo, ro = left.get(sid), right.get(sid)
        either = lo or ro
        name = either.scenario_name if either is not None else ""
        for signal in COMPARED:
            sa = lo.get(signal) if lo else None
            sb = ro.get(signal) if ro else None
            va = sa.verdict if sa else None
            vb = sb.verdict if sb else None
            if va is None or vb is None:
                # Not produced by one scoring (another scorer set, a session
                # only one of them scored): missing, never a flip.
                missing += va != vb
                continue
            if va != vb:
                flips.append(
                    Flip(
                        sid,
                        name,
                        signal,
                        va,
                        vb,
                        sa.value if sa else None,
                        sb.value if sb else None,
                    )
                )
    summary: dict[str, Any] = {"scoring_a": a.scoring_id, "scoring_b": b.scoring_id}
    rates: dict[str, Any] = {}
    for key in ("success_rate", "task_success_rate", "judge_mean"):
        rates[key] = _delta(a.summary.get(key), b.summary.get(key))
    sig_a = a.summary.get("signals", {})
    sig_b = b.summary.get("signals", {})
    for name in signals.SUCCESS_SIGNALS:
        ra = sig_a.get(name, {}).get("rate") if isinstance(sig_a, dict) else None
        rb = sig_b.get(name, {}).get("rate") if isinstance(sig_b, dict) else None
        rates[name] = _delta(ra, rb)
    summary["rates"] = rates
    summary["flips"] = len(flips)
    summary["missing"] = missing
    return flips, summary


def _delta(a: Any, b: Any) -> dict[str, Any]:
    change = b - a if isinstance(a, int | float) and isinstance(b, int | float) else None
    return {"a": a, "b": b, "change": change}
