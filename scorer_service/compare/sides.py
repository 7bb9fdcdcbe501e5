"""One run's result per scenario, as a comparison needs it: :class:`SideResult`.

A scenario's trials (one session, or K with ``--repeat``) are folded into one
verdict — ``failed`` if any decided trial failed, ``passed`` if every decided
trial passed, else ``unscored`` or ``not_applicable`` — with the counts kept so
the comparison can use pass^k, and the first reason of each failing gating
signal so a flip explains itself (after the mishearing that explains it, if
one does). A run with no scoring gives ``unscored``.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from vae.recordings.models import ScoringRecord, SessionRecord, Verdict
from vae.recordings.read.reader import RecordingReader
from vae.recordings.trials import base_name
from vae.scorer_service import signals
from vae.scorer_service.ledger.aggregate import SessionOutcome
from vae.scorer_service.ledger.scorings import session_outcomes


@dataclass(frozen=True)
class SideResult:
    scenario: str
    domain: str
    #: passed | failed | unscored | not_applicable (folded over trials).
    verdict: str
    trials: int
    passed: int
    failed: int
    session_ids: list[str]
    #: Folded verdict of every signal that was scored, by name.
    signals: dict[str, str] = field(default_factory=dict)
    #: ``[signal, first reason]`` of each failing gating signal (or stall).
    failing: list[tuple[str, str]] = field(default_factory=list)
    #: Why a signal could not be decided (judge errors and the like).
    undecided_reasons: list[str] = field(default_factory=list)
    #: A failing signal's mishearing, when one explains it ("the agent heard ...").
    misheard: dict[str, str] = field(default_factory=dict)
    duration_s: float = 0.0

    @property
    def failing_signals(self) -> set[str]:
        return {sig for sig, _ in self.failing}


def fold(verdicts: list[Verdict | None]) -> str:
    """The scenario's verdict over its trials (``None``: that trial was not scored)."""
    if Verdict.FAILED in verdicts:
        return str(Verdict.FAILED)
    if Verdict.PASSED in verdicts:
        return str(Verdict.PASSED)
    if verdicts and all(v is Verdict.NOT_APPLICABLE for v in verdicts):
        return str(Verdict.NOT_APPLICABLE)
    return str(Verdict.UNSCORED)


def _first_reason(outcome: SessionOutcome, signal: str) -> str:
    # Imported here: vae.scorer_service.report imports this module (report baselines).
    from vae.scorer_service.ledger.reasons import misheard, reasons

    score = outcome.get(signal)
    heard = misheard(score)
    found = [r for r in (reasons(score) if score is not None else []) if r != heard]
    return found[0] if found else "failed"


def _misheard(outcome: SessionOutcome, signal: str) -> str:
    from vae.scorer_service.ledger.reasons import misheard

    return misheard(outcome.get(signal))


def _side(
    name: str, domain: str, sessions: list[SessionRecord], outcomes: dict[str, SessionOutcome]
) -> SideResult:
    composites: list[Verdict | None] = []
    per_signal: dict[str, list[Verdict | None]] = defaultdict(list)
    failing: dict[str, str] = {}
    heard: dict[str, str] = {}
    undecided: list[str] = []
    for s in sessions:
        o = outcomes.get(s.session_id)
        comp = o.get(signals.IS_SUCCESSFUL) if o else None
        composites.append(comp.verdict if comp else None)
        if o is None or comp is None:
            continue
        gating = comp.detail.get("gating")
        gates = [str(g) for g in gating] if isinstance(gating, list) else []
        for sig in (*signals.SUCCESS_SIGNALS, signals.STALLED):
            score = o.get(sig)
            if score is None:
                continue
            per_signal[sig].append(score.verdict)
            gate = sig in gates or sig == signals.STALLED
            if score.verdict is Verdict.FAILED and gate and sig not in failing:
                failing[sig] = _first_reason(o, sig)
                if _misheard(o, sig):
                    heard[sig] = _misheard(o, sig)
            if score.verdict is Verdict.UNSCORED and gate:
                undecided.append(f"{sig} unscored: {_first_reason(o, sig)}")
    return SideResult(
        scenario=name,
        domain=domain,
        verdict=fold(composites),
        trials=len(sessions),
        passed=sum(1 for v in composites if v is Verdict.PASSED),
        failed=sum(1 for v in composites if v is Verdict.FAILED),
        session_ids=[s.session_id for s in sessions],
        signals={sig: fold(v) for sig, v in per_signal.items()},
        failing=sorted(failing.items()),
        undecided_reasons=sorted(set(undecided)),
        misheard=heard,
        duration_s=round(sum(s.duration_s for s in sessions), 2),
    )


def side_results(
    reader: RecordingReader, run_id: str, scoring: ScoringRecord | None
) -> dict[str, SideResult]:
    """Each scenario of ``run_id`` (trials grouped) with ``scoring``'s verdicts."""
    outcomes = {o.session_id: o for o in session_outcomes(reader, scoring)} if scoring else {}
    domains = {rs.scenario_name: rs.domain for rs in reader.run_scenarios(run_id)}
    groups: dict[str, list[SessionRecord]] = defaultdict(list)
    for s in sorted(reader.latest_attempts(run_id).values(), key=lambda s: s.scenario_name):
        groups[base_name(s.scenario_name)].append(s)
    return {
        name: _side(name, domains.get(items[0].scenario_name, ""), items, outcomes)
        for name, items in groups.items()
    }
