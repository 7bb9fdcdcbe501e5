"""Run vs run (and scoring vs scoring): what regressed, what was fixed, and why.

``compare_runs`` is the one implementation behind ``vae compare``,
``vae report --baseline`` and ``vae scores diff``. Scenarios are matched by
name (repeated trials ``name#k`` grouped under ``name``); each run contributes
its latest attempts, scored by the chosen scoring (default: the run's current
one). A scenario's change is decided on pass^k at k = the smaller number of
decided trials of the two sides — with one trial each that is simply its
verdict — so repeats are compared fairly and never counted twice. A side with
no decided trial is ``unscored`` (never a regression or a fix); a scenario
present in one run only is ``only_a`` / ``only_b``, never a flip; a signal that
one scoring did not produce is not a flip either.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from typing import Any

from vae.recordings.backends.locator import StoreRef, locate
from vae.recordings.models import RunRecord, ScoringRecord, Verdict
from vae.recordings.read.reader import RecordingReader
from vae.recordings.read.selection import select_run
from vae.scorer_service.compare.config import ConfigDifference, config_differences
from vae.scorer_service.compare.rates import RateDelta, rate_deltas
from vae.scorer_service.compare.sides import SideResult, side_results
from vae.scorer_service.ledger.repeats import pass_hat
from vae.scorer_service.ledger.scorings import current_scoring, resolve_scoring

CHANGES = ("regression", "fix", "unscored", "only_a", "only_b", "same")
#: Changes that are no verdict on the scenario (``vae compare --fail-on-regression`` fails
#: on them unless ``--allow-unscored``).
UNDECIDED = ("unscored", "only_a", "only_b")


def counts_line(counts: dict[str, int]) -> str:
    """``1 regressions, 2 fixes, 3 unchanged, 1 unscored`` (and ``, 1 only in A`` ...).

    The one line ``vae report --baseline`` and ``vae demo`` print for a
    comparison's counts: the unscored (and one-run-only) scenarios are always
    beside the flips, since nothing says they did not regress.
    """
    parts = [
        f"{counts.get('regression', 0)} regressions",
        f"{counts.get('fix', 0)} fixes",
        f"{counts.get('same', 0)} unchanged",
        f"{counts.get('unscored', 0)} unscored",
    ]
    parts += [f"{counts[k]} {label}" for k, label in _ONE_RUN.items() if counts.get(k)]
    return ", ".join(parts)


_ONE_RUN = {"only_a": "only in A", "only_b": "only in B"}


class CompareError(ValueError):
    """The two sides cannot be compared as asked (no scoring, scoring of another run)."""


@dataclass(frozen=True)
class ScenarioChange:
    scenario: str
    domain: str
    a: SideResult | None
    b: SideResult | None
    #: One of :data:`CHANGES`.
    change: str
    #: Why it flipped (or why it could not be decided), most telling first.
    reasons: list[str] = field(default_factory=list)
    #: The k of the pass^k comparison and both values (None when undecided).
    k: int = 0
    pass_hat_a: float | None = None
    pass_hat_b: float | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "scenario": self.scenario,
            "domain": self.domain,
            "a": self.a.verdict if self.a else None,
            "b": self.b.verdict if self.b else None,
            "change": self.change,
            "reasons": list(self.reasons),
            "k": self.k,
            "pass_hat_k_a": self.pass_hat_a,
            "pass_hat_k_b": self.pass_hat_b,
            "detail_a": asdict(self.a) if self.a else None,
            "detail_b": asdict(self.b) if self.b else None,
        }


@dataclass(frozen=True)
class RunComparison:
    run_a: str
    run_b: str
    scoring_a: str | None
    scoring_b: str | None
    scenarios: list[ScenarioChange]
    rates: list[RateDelta]
    config: list[ConfigDifference]
    warnings: list[str] = field(default_factory=list)

    @property
    def regressions(self) -> list[ScenarioChange]:
        return [s for s in self.scenarios if s.change == "regression"]

    @property
    def undecided(self) -> list[ScenarioChange]:
        """Scenarios not compared: unscored on a side, or in one run only (never a flip,
        but nothing says they did not regress)."""
        return [s for s in self.scenarios if s.change in UNDECIDED]

    def counts(self) -> dict[str, int]:
        return {c: sum(1 for s in self.scenarios if s.change == c) for c in CHANGES}

    def as_dict(self) -> dict[str, Any]:
        return {
            "run_a": self.run_a,
            "run_b": self.run_b,
            "scoring_a": self.scoring_a,
            "scoring_b": self.scoring_b,
            "same_run": self.run_a == self.run_b,
            "warnings": list(self.warnings),
            "counts": self.counts(),
            "scenarios": [s.as_dict() for s in self.scenarios],
            "rates": [r.as_dict() for r in self.rates],
            "config": [c.as_dict() for c in self.config],
        }


def _decide(name: str, a: SideResult | None, b: SideResult | None) -> ScenarioChange:
    either = b or a
    domain = either.domain if either is not None else ""
    if a is None:
        return ScenarioChange(name, domain, a, b, "only_b", ["not in run A"])
    if b is None:
        return ScenarioChange(name, domain, a, b, "only_a", ["not in run B"])
    na, nb = a.passed + a.failed, b.passed + b.failed
    if not na or not nb:
        if a.verdict == b.verdict and a.verdict != str(Verdict.UNSCORED):
            return ScenarioChange(name, domain, a, b, "same")
        why = [f"A: {r}" for r in a.undecided_reasons] + [f"B: {r}" for r in b.undecided_reasons]
        return ScenarioChange(name, domain, a, b, "unscored", why or ["no verdict on one side"])
    k = min(na, nb)
    pa, pb = pass_hat(na, a.passed, k), pass_hat(nb, b.passed, k)
    change = "regression" if pb < pa - 1e-9 else "fix" if pb > pa + 1e-9 else "same"
    reasons: list[str] = []
    if change == "regression":
        reasons = [_why(b, sig, why) for sig, why in b.failing if sig not in a.failing_signals]
        reasons = reasons or [_why(b, sig, why) for sig, why in b.failing]
    elif change == "fix":
        reasons = [
            f"{sig} now passes (was: {why})"
            for sig, why in a.failing
            if sig not in b.failing_signals
        ] or [f"{sig} now passes" for sig, _ in a.failing]
    if change != "same" and max(na, nb) > 1:
        reasons.insert(0, f"pass^{k} {pa:.0%} → {pb:.0%} ({a.passed}/{na} → {b.passed}/{nb})")
    return ScenarioChange(name, domain, a, b, change, reasons, k, pa, pb)


def _why(side: SideResult, signal: str, why: str) -> str:
    """``SIGNAL: reason``, after the mishearing that explains it (vae.scorer_service.heard)."""
    heard = side.misheard.get(signal)
    return f"{heard}; {signal}: {why}" if heard else f"{signal}: {why}"


def _order(c: ScenarioChange) -> tuple[int, str]:
    return CHANGES.index(c.change), c.scenario


def _scoring(
    reader: RecordingReader, run: RunRecord, ref: str | None, side: str
) -> ScoringRecord | None:
    if ref:
        scoring = resolve_scoring(reader, ref)
        if scoring.run_id != run.run_id:
            raise CompareError(
                f"scoring {scoring.scoring_id} belongs to run {scoring.run_id}, not run {side} "
                f"{run.run_id}"
            )
        return scoring
    return current_scoring(reader, run.run_id)


def compare_with_reader(
    reader: RecordingReader,
    run_a: str,
    run_b: str,
    *,
    scoring_a: str | None = None,
    scoring_b: str | None = None,
) -> RunComparison:
    """:func:`compare_runs` on an open reader (the report already holds one)."""
    ids = select_run(reader, run_a), select_run(reader, run_b)
    found = [reader.get_run(i) for i in ids]
    runs = [r for r in found if r is not None]
    assert len(runs) == 2
    scorings = [
        _scoring(reader, runs[0], scoring_a, "A"),
        _scoring(reader, runs[1], scoring_b, "B"),
    ]
    warnings = [
        f"run {side} {run.run_id} has no scoring yet: its scenarios count as unscored "
        f"(score it with: vae rescore --run {run.run_id})"
        for side, run, sc in zip("AB", runs, scorings, strict=True)
        if sc is None
    ]
    sides = [side_results(reader, run.run_id, sc) for run, sc in zip(runs, scorings, strict=True)]
    names = sorted(set(sides[0]) | set(sides[1]))
    changes = sorted((_decide(n, sides[0].get(n), sides[1].get(n)) for n in names), key=_order)
    sessions = [reader.sessions(i) for i in ids]
    config = config_differences(
        runs[0], sessions[0], scorings[0], runs[1], sessions[1], scorings[1]
    )
    return RunComparison(
        ids[0],
        ids[1],
        scorings[0].scoring_id if scorings[0] else None,
        scorings[1].scoring_id if scorings[1] else None,
        changes,
        rate_deltas(scorings[0], scorings[1]),
        config,
        warnings,
    )


@contextmanager
def _reader(db_path: StoreRef) -> Iterator[RecordingReader]:
    locator = locate(db_path)
    if not locator.exists():
        raise FileNotFoundError(f"no database at {locator.display()}")
    with RecordingReader(db_path) as reader:
        yield reader


def compare_runs(
    db_path: StoreRef,
    run_a: str,
    run_b: str,
    *,
    scoring_a: str | None = None,
    scoring_b: str | None = None,
) -> RunComparison:
    """Compare run B against run A (exact ids or unique prefixes), scenario by scenario.

    ``scoring_a``/``scoring_b`` pick a scoring of each run (id or prefix);
    default: each run's current scoring. Raises ``RunSelectionError`` /
    ``ScoringNotFoundError`` for bad references and :class:`CompareError` for a
    scoring that belongs to another run.
    """
    with _reader(db_path) as reader:
        return compare_with_reader(reader, run_a, run_b, scoring_a=scoring_a, scoring_b=scoring_b)


__all__ = [
    "CHANGES",
    "CompareError",
    "ConfigDifference",
    "RateDelta",
    "RunComparison",
    "ScenarioChange",
    "SideResult",
    "compare_runs",
    "compare_with_reader",
]
