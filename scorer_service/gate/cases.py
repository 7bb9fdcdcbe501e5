"""One :class:`Case` per scenario of a run (per trial for repeats): its verdict and why.

Why a module: JUnit test cases, the Markdown list of failing scenarios and the
pytest plugin's items are the same thing — one scenario as run, with its
verdict in one scoring, the one-line reason and every signal that failed or
could not be decided. They read it from here, so a failure looks the same in
every CI view.

Rules (those of the report, :mod:`vae.scorer_service.report.session_entry`):

- a case is each scenario the run froze (``name`` or ``name#k``), with its
  latest attempt that was not superseded;
- its verdict is the scoring's ``is_successful`` (passed / failed / unscored /
  not_applicable); a scenario with no session, or a session the scoring has
  no verdict for, is ``unscored`` with the cause — never passed;
- ``signals`` lists every success signal (and a stall) that failed or is
  unscored, the gating ones first, each with its reasons;
- ``reason`` is the first gating signal's first reason, ``SIGNAL: why`` (for a
  scenario built to fail that passed: why that fails the gate);
- ``expect_fail`` comes from the frozen scenario (its field or its
  ``expect-fail`` tag) and ``outcome`` reads the verdict against it
  (:mod:`vae.recordings.scenarios.expect`: ``xfailed``, ``xpassed``).

Bot text (reasons, transcripts) is kept as recorded: each writer escapes it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from vae.recordings.models import ScoringRecord, SessionRecord, Verdict
from vae.recordings.read.export import transcript
from vae.recordings.read.reader import RecordingReader
from vae.recordings.scenarios import expect
from vae.recordings.trials import split_trial
from vae.scorer_service import signals
from vae.scorer_service.ledger.aggregate import SessionOutcome
from vae.scorer_service.ledger.reasons import reasons
from vae.scorer_service.ledger.scorings import session_outcomes
from vae.scorer_service.ledger.unscored import missing_cause

#: Verdicts in the order a reader needs them.
ORDER = ("failed", "unscored", "passed", "not_applicable")


@dataclass(frozen=True)
class SignalResult:
    signal: str
    #: failed | unscored
    verdict: str
    #: In the scenario's success_signals (or a stall): it decides the verdict.
    gating: bool
    reasons: list[str] = field(default_factory=list)

    def line(self) -> str:
        why = "; ".join(self.reasons) or self.verdict
        role = "" if self.gating else " (not gating)"
        return f"{self.signal} {self.verdict}{role}: {why}"


@dataclass(frozen=True)
class Case:
    #: The scenario as run: ``name``, or ``name#k`` for trial k.
    name: str
    scenario: str
    trial: int
    domain: str
    session_id: str | None
    #: passed | failed | unscored | not_applicable
    verdict: str
    reason: str = ""
    signals: list[SignalResult] = field(default_factory=list)
    duration_s: float = 0.0
    stop_reason: str = ""
    #: Why an unscored case has no verdict (judge_error, no_judge, unfinished: …).
    causes: list[str] = field(default_factory=list)
    #: What each side said, for failing and unscored cases only: [{side, text, t_s}].
    transcript: list[dict[str, Any]] = field(default_factory=list)
    #: The scenario is built to fail (``expect_fail``, or the ``expect-fail`` tag).
    expect_fail: bool = False

    @property
    def outcome(self) -> str:
        """passed | failed | xfailed | xpassed | unscored | not_applicable."""
        return expect.outcome(self.verdict, self.expect_fail)

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "scenario": self.scenario,
            "trial": self.trial,
            "domain": self.domain,
            "session_id": self.session_id,
            "verdict": self.verdict,
            "expect_fail": self.expect_fail,
            "outcome": self.outcome,
            "reason": self.reason,
            "signals": [
                {"signal": s.signal, "verdict": s.verdict, "gating": s.gating,
                 "reasons": list(s.reasons)}
                for s in self.signals
            ],
            "causes": list(self.causes),
            "duration_s": self.duration_s,
            "stop_reason": self.stop_reason,
        }  # fmt: skip


def _signal_results(outcome: SessionOutcome, gating: set[str]) -> list[SignalResult]:
    found = []
    for name in (*signals.SUCCESS_SIGNALS, signals.STALLED):
        score = outcome.get(name)
        if score is None or score.verdict not in (Verdict.FAILED, Verdict.UNSCORED):
            continue
        gate = name in gating or name == signals.STALLED
        found.append(SignalResult(name, str(score.verdict), gate, reasons(score)))
    found.sort(key=lambda s: (not s.gating, s.verdict != str(Verdict.FAILED)))
    return found


def _one_line(verdict: str, results: list[SignalResult], outcome: SessionOutcome) -> str:
    if verdict not in ("failed", "unscored"):
        return ""
    for s in results:
        if s.gating and (s.verdict == verdict or verdict == "failed"):
            return f"{s.signal}: {s.reasons[0] if s.reasons else s.verdict}"
    composite = outcome.get(signals.IS_SUCCESSFUL)
    causes = composite.detail.get("causes") if composite is not None else None
    if isinstance(causes, list) and causes:
        return ", ".join(str(c) for c in causes)
    return composite.error if composite is not None and composite.error else verdict


def _case(
    reader: RecordingReader,
    name: str,
    domain: str,
    gating: set[str],
    session: SessionRecord | None,
    outcome: SessionOutcome | None,
    scored: bool,
    expect_fail: bool = False,
) -> Case:
    base, trial = split_trial(name)
    common: dict[str, Any] = {"name": name, "scenario": base, "trial": trial or 0}
    common["domain"] = domain
    common["expect_fail"] = expect_fail
    if session is None:
        return Case(**common, session_id=None, verdict="unscored", causes=["not run"],
                    reason="not run: the run recorded no session of this scenario")  # fmt: skip
    common["session_id"] = session.session_id
    common["duration_s"] = round(session.duration_s, 2)
    common["stop_reason"] = session.stop_reason or ""
    composite = outcome.get(signals.IS_SUCCESSFUL) if outcome is not None else None
    if outcome is None or composite is None:
        why = missing_cause(session) if scored else "no scoring"
        return Case(**common, verdict="unscored", reason=why, causes=[why],
                    transcript=transcript(reader, session.session_id))  # fmt: skip
    verdict = str(composite.verdict)
    results = _signal_results(outcome, gating)
    said = transcript(reader, session.session_id) if verdict in ("failed", "unscored") else []
    listed = composite.detail.get("causes")
    causes = [str(c) for c in listed] if isinstance(listed, list) and verdict == "unscored" else []
    why = expect.UNEXPECTED_PASS if expect_fail and verdict == "passed" else ""
    return Case(**common, verdict=verdict, reason=why or _one_line(verdict, results, outcome),
                signals=results, causes=causes or ([verdict] if verdict == "unscored" else []),
                transcript=said)  # fmt: skip


def run_cases(reader: RecordingReader, run_id: str, scoring: ScoringRecord | None) -> list[Case]:
    """Every scenario of ``run_id`` as frozen, in run order, with ``scoring``'s verdicts."""
    outcomes = {o.session_id: o for o in session_outcomes(reader, scoring)} if scoring else {}
    latest = reader.latest_attempts(run_id)
    cases = []
    for rs in reader.run_scenarios(run_id):
        listed = rs.scenario.get("success_signals")
        gating = {str(s) for s in listed} if isinstance(listed, list) else set()
        session = latest.get(rs.scenario_name)
        outcome = outcomes.get(session.session_id) if session is not None else None
        scored = scoring is not None
        cases.append(_case(reader, rs.scenario_name, rs.domain, gating, session, outcome, scored,
                           expect.expects_failure(rs.scenario)))  # fmt: skip
    frozen = {c.name for c in cases}
    for name, session in sorted(latest.items()):
        if name not in frozen:  # a session with no frozen scenario (an imported run)
            outcome = outcomes.get(session.session_id)
            cases.append(_case(reader, name, "", set(), session, outcome, scoring is not None))
    return cases
