"""The one gate function: a run's scoring against a :class:`GateSpec`, as a :class:`GateResult`.

``vae gate``, the gate options of ``vae run|rescore|demo``, the JUnit and
Markdown writers and the pytest plugin all call :func:`gate` (or
:func:`gate_with_reader`), so "did it pass" has one answer. The verdict keeps
three cases apart, as the exit codes do:

- ``passed`` (exit 0): every threshold met — or, with none given, every
  decided scenario passed or failed as it was built to (``rule.py``) — on a
  completed and scored run with at least one decided session and no more
  unscored than allowed, and no scenario built to fail passed;
- ``failed`` (exit 1): the agent missed a threshold or regressed, a scenario
  failed with no threshold given, or one built to fail unexpectedly passed —
  decided on evidence;
- ``undecided`` (exit 3): we could not tell — the run did not complete, has
  no (complete) scoring, no decided session (zero sessions is never a pass),
  more unscored sessions than ``max_unscored``, a threshold with nothing to
  measure, or a baseline with no scoring. Undecided wins over failed: every
  check is still evaluated and reported.

Bad thresholds, an unknown domain, a baseline that is the gated run itself
and unknown run references are usage errors (:class:`GateSpecError`,
``RunSelectionError``): exit 2, raised before any verdict. Regressions are
counted by :func:`vae.scorer_service.compare.runs.compare_with_reader`, exactly as
``vae compare`` counts them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from vae.recordings.backends.locator import StoreRef, locate
from vae.recordings.models import ScoringRecord
from vae.recordings.read.reader import RecordingReader
from vae.recordings.read.selection import select_run
from vae.scorer_service.compare.runs import RunComparison, compare_with_reader
from vae.scorer_service.gate import checks, rule
from vae.scorer_service.gate.cases import Case, run_cases
from vae.scorer_service.gate.checks import FAILED, UNDECIDED, Check
from vae.scorer_service.gate.spec import GateSpec, GateSpecError
from vae.scorer_service.ledger.scorings import current_scoring, resolve_scoring

EXIT_CODES = {"passed": 0, "failed": 1, "undecided": 3}
HEADLINES = {
    "passed": "passed",
    "failed": "failed: the agent missed the gate",
    "undecided": "could not decide",
}


@dataclass(frozen=True)
class GateResult:
    run_id: str
    run_status: str
    run_error: str
    scoring_id: str | None
    spec: GateSpec
    checks: list[Check]
    cases: list[Case]
    summary: dict[str, Any] = field(default_factory=dict)
    comparison: RunComparison | None = None
    #: Where readers find more: ``report`` (a file written), ``report_url``, ``database``.
    links: dict[str, str] = field(default_factory=dict)

    @property
    def status(self) -> str:
        found = {c.status for c in self.checks}
        return UNDECIDED if UNDECIDED in found else FAILED if FAILED in found else "passed"

    @property
    def rule(self) -> str:
        """``scenarios`` (no threshold: every scenario as expected) or ``thresholds``."""
        return "thresholds" if self.spec.has_thresholds else "scenarios"

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.status]

    @property
    def headline(self) -> str:
        return HEADLINES[self.status]

    @property
    def counts(self) -> dict[str, int]:
        return checks.counts(self.cases)

    @property
    def success_rate(self) -> float | None:
        return checks.rate_of(self.cases)

    @property
    def latency_p50_s(self) -> float | None:
        lat = self.summary.get("latency")
        value = lat.get("p50_s") if isinstance(lat, dict) else None
        return float(value) if isinstance(value, int | float) else None

    def domains(self) -> dict[str, dict[str, Any]]:
        out: dict[str, dict[str, Any]] = {}
        for name in sorted({c.domain for c in self.cases}):
            items = [c for c in self.cases if c.domain == name]
            out[name] = {**checks.counts(items), "success_rate": checks.rate_of(items)}
        return out

    def as_dict(self) -> dict[str, Any]:
        cmp = self.comparison
        return {
            "status": self.status,
            "exit_code": self.exit_code,
            "headline": self.headline,
            "rule": self.rule,
            "run_id": self.run_id,
            "run_status": self.run_status,
            "run_error": self.run_error,
            "scoring_id": self.scoring_id,
            "success_rate": self.success_rate,
            "counts": self.counts,
            "domains": self.domains(),
            "latency_p50_s": self.latency_p50_s,
            "checks": [c.as_dict() for c in self.checks],
            "baseline": None
            if cmp is None
            else {
                "run_id": cmp.run_a,
                "scoring_id": cmp.scoring_a,
                "counts": cmp.counts(),
                "regressions": [
                    {"scenario": s.scenario, "reasons": list(s.reasons)} for s in cmp.regressions
                ],
                "undecided": [
                    {"scenario": s.scenario, "change": s.change, "reasons": list(s.reasons)}
                    for s in cmp.undecided
                ],
            },
            "cases": [c.as_dict() for c in self.cases],
            "links": dict(self.links),
        }


def _scoring(
    reader: RecordingReader, run_id: str, ref: str | None
) -> tuple[ScoringRecord | None, str]:
    """(the scoring to gate, why it cannot be used or "")."""
    if not ref:
        current = current_scoring(reader, run_id)
        tried = reader.scorings(run_id)
        if current is None and tried:
            return None, f"run {run_id} has no complete scoring; the latest, " + _why(tried[-1])
        return current, ""
    scoring = resolve_scoring(reader, ref)
    if scoring.run_id != run_id:
        raise GateSpecError(f"scoring {scoring.scoring_id} belongs to run {scoring.run_id}, "
                            f"not {run_id}")  # fmt: skip
    if scoring.status != "complete":
        return None, f"scoring {_why(scoring)}"
    return scoring, ""


def _why(scoring: ScoringRecord) -> str:
    error = scoring.summary.get("error")
    state = "failed" if scoring.status == "failed" else f"is {scoring.status}"
    return f"{scoring.scoring_id} {state}" + (f": {error}" if error else "")


def _threshold_checks(spec: GateSpec, cases: list[Case]) -> list[Check]:
    found: list[Check] = []
    if spec.min_success is not None:
        found.append(checks.min_rate("min-success", "success rate", cases, spec.min_success))
    known = sorted({c.domain for c in cases})
    for domain, rate in sorted(spec.min_success_domains.items()):
        if domain not in known:
            raise GateSpecError(
                f"--min-success: the run has no domain {domain!r} (its domains: "
                f"{', '.join(known) or 'none'})"
            )
        items = [c for c in cases if c.domain == domain]
        found.append(checks.min_rate(f"min-success {domain}", f"{domain} success rate", items,
                                     rate))  # fmt: skip
    for k, rate in sorted(spec.pass_k.items()):
        found.append(checks.pass_k(cases, k, rate))
    return found


def gate_with_reader(
    reader: RecordingReader, run_ref: str, spec: GateSpec, *, scoring_ref: str | None = None
) -> GateResult:
    """:func:`gate` on an open reader."""
    run_id = select_run(reader, run_ref)
    run = reader.get_run(run_id)
    assert run is not None
    comparison = None
    if spec.baseline:
        baseline = select_run(reader, spec.baseline)
        if baseline == run_id:
            raise GateSpecError(f"--baseline {spec.baseline!r} is the gated run {run_id} itself")
    scoring, problem = _scoring(reader, run_id, scoring_ref)
    cases = run_cases(reader, run_id, scoring)
    found = [
        checks.run_state(run_id, str(run.status), run.error),
        checks.scored(run_id, scoring.scoring_id if scoring else None, problem),
        checks.decided(cases),
        checks.unscored(cases, spec.max_unscored),
        *(_threshold_checks(spec, cases) if spec.has_thresholds else [rule.scenarios(cases)]),
    ]
    if spec.baseline:
        comparison = compare_with_reader(
            reader, baseline, run_id, scoring_b=scoring.scoring_id if scoring else None
        )
        expected = checks.built_to_fail(cases)
        found.append(checks.regressions(comparison, spec.regressions_allowed, expected))
    if any(c.expect_fail for c in cases):
        found.append(rule.unexpected_passes(cases))
    return GateResult(
        run_id=run_id,
        run_status=str(run.status),
        run_error=run.error,
        scoring_id=scoring.scoring_id if scoring else None,
        spec=spec,
        checks=found,
        cases=cases,
        summary=dict(scoring.summary) if scoring else {},
        comparison=comparison,
    )


def gate(
    db_path: StoreRef, run_ref: str, spec: GateSpec, *, scoring_ref: str | None = None
) -> GateResult:
    """Gate run ``run_ref`` (exact id or unique prefix) of ``db_path`` on ``spec``.

    Gates the run's current scoring, or ``scoring_ref`` (what a command just
    produced). Raises ``FileNotFoundError`` for a missing database,
    ``RunSelectionError`` / ``ScoringNotFoundError`` for bad references and
    :class:`GateSpecError` for thresholds that do not fit the run.
    """
    if not locate(db_path).exists():
        raise FileNotFoundError(f"no database at {locate(db_path).display()}")
    with RecordingReader(db_path) as reader:
        return gate_with_reader(reader, run_ref, spec, scoring_ref=scoring_ref)
