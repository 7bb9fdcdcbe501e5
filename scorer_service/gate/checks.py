"""The gate's checks, one function each: passed, failed (the agent), undecided (we could not tell).

Why a module: each threshold decides on its own figure and says so in one
sentence with the numbers ("success rate 54.5% (6/11 decided) is below 80.0%
by 25.5 points"); the JUnit test case of a failed check, the Markdown table
and the terminal print that sentence unchanged. Whether the run could be
judged at all (completed, scored, anything decided, unscored within bounds)
are checks too, so "we could not tell" is never folded into "the agent got
worse". Rates and regressions leave out the scenarios built to fail
(``expect_fail``): a threshold measures the agent on what it should pass; the
per-scenario rule and the unexpected passes are ``rule.py``'s.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from vae.recordings.models import Verdict
from vae.scorer_service.compare.runs import RunComparison
from vae.scorer_service.gate.cases import Case
from vae.scorer_service.ledger.repeats import averaged, group_trials

PASSED, FAILED, UNDECIDED = "passed", "failed", "undecided"


@dataclass(frozen=True)
class Check:
    #: What was checked: ``completed``, ``scored``, ``decided``, ``max-unscored``,
    #: ``scenarios`` (no threshold), ``min-success``, ``min-success DOMAIN``, ``pass^K``,
    #: ``max-regressions``, ``expect-fail``.
    name: str
    #: passed | failed | undecided
    status: str
    #: The sentence with the numbers.
    message: str
    threshold: float | int | None = None
    actual: float | int | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "status": self.status,
            "message": self.message,
            "threshold": self.threshold,
            "actual": self.actual,
        }


def pct(rate: float | None) -> str:
    return "n/a" if rate is None else f"{rate * 100:.1f}%"


#: Case outcomes counted (``vae.recordings.scenarios.expect``).
OUTCOMES = ("passed", "failed", "xfailed", "xpassed", "unscored", "not_applicable")


def counts(cases: list[Case]) -> dict[str, int]:
    """Per outcome; ``decided``: with a verdict; ``rated``: what rates are over (passed + failed,
    the scenarios built to fail left out)."""
    c = {v: sum(1 for x in cases if x.outcome == v) for v in OUTCOMES}
    c["decided"] = c["passed"] + c["failed"] + c["xfailed"] + c["xpassed"]
    c["rated"] = c["passed"] + c["failed"]
    c["sessions"] = len(cases)
    return c


def rate_of(cases: list[Case]) -> float | None:
    c = counts(cases)
    return c["passed"] / c["rated"] if c["rated"] else None


def _left_out(cases: list[Case]) -> str:
    n = sum(1 for x in cases if x.expect_fail)
    return f"; {n} built to fail left out" if n else ""


def run_state(run_id: str, status: str, error: str) -> Check:
    if status == "completed":
        return Check("completed", PASSED, f"run {run_id} completed")
    detail = f": {error}" if error else ""
    return Check("completed", UNDECIDED, f"run {run_id} did not complete ({status}{detail})")


def scored(run_id: str, scoring_id: str | None, problem: str) -> Check:
    if scoring_id and not problem:
        return Check("scored", PASSED, f"scoring {scoring_id}")
    return Check("scored", UNDECIDED, problem or f"run {run_id} has no scoring "
                 f"(score it with: vae rescore --run {run_id})")  # fmt: skip


def decided(cases: list[Case]) -> Check:
    c = counts(cases)
    if not c["sessions"]:
        return Check("decided", UNDECIDED, "the run has no sessions: nothing to gate", 1, 0)
    if not c["decided"]:
        return Check("decided", UNDECIDED, f"no session was decided (0 of {c['sessions']})", 1, 0)
    return Check(
        "decided", PASSED, f"{c['decided']} of {c['sessions']} sessions decided", 1, c["decided"]
    )


def unscored(cases: list[Case], allowed: int) -> Check:
    none = [x for x in cases if x.verdict == "unscored"]
    causes: dict[str, int] = {}
    for x in none:
        for key in x.causes or ["unknown"]:
            causes[key] = causes.get(key, 0) + 1
    why = ", ".join(f"{k}: {v}" for k, v in sorted(causes.items()))
    if len(none) <= allowed:
        text = f"{len(none)} unscored (at most {allowed} allowed)"
        return Check("max-unscored", PASSED, text + (f" — {why}" if why else ""), allowed,
                     len(none))  # fmt: skip
    return Check(
        "max-unscored",
        UNDECIDED,
        f"{len(none)} session(s) have no verdict ({why}); at most {allowed} allowed",
        allowed,
        len(none),
    )


def min_rate(name: str, label: str, cases: list[Case], threshold: float) -> Check:
    c = counts(cases)
    rate = rate_of(cases)
    shown = f"{label} {pct(rate)} ({c['passed']}/{c['rated']} decided{_left_out(cases)})"
    if rate is None:
        return Check(name, UNDECIDED, f"{label}: no decided session{_left_out(cases)}", threshold,
                     None)  # fmt: skip
    if rate + 1e-9 >= threshold:
        return Check(name, PASSED, f"{shown} meets {pct(threshold)}", threshold, rate)
    gap = (threshold - rate) * 100
    return Check(
        name, FAILED, f"{shown} is below {pct(threshold)} by {gap:.1f} points", threshold, rate
    )


_VERDICTS = {"passed": Verdict.PASSED, "failed": Verdict.FAILED}


def pass_hat_k(cases: list[Case]) -> dict[str, float]:
    """pass^k over the repeated scenarios of ``cases``, those built to fail left out."""
    rows = [(x.session_id or x.name, x.name, x.domain, _VERDICTS.get(x.verdict))
            for x in cases if not x.expect_fail]  # fmt: skip
    return averaged(group_trials(rows).values())["pass_hat_k"]


def pass_k(cases: list[Case], k: int, threshold: float) -> Check:
    name = f"pass^{k}"
    values = pass_hat_k(cases)
    value = values.get(str(k))
    if value is None:
        have = sorted(int(x) for x in values)
        why = (
            f"pass^k goes up to k={have[-1]} (the fewest decided trials of a repeated scenario)"
            if have
            else "no scenario has two or more decided trials (run with --repeat K)"
        )
        return Check(name, UNDECIDED, f"{name} cannot be computed: {why}{_left_out(cases)}",
                     threshold, None)  # fmt: skip
    if value + 1e-9 >= threshold:
        return Check(name, PASSED, f"{name} {pct(value)} meets {pct(threshold)}", threshold, value)
    gap = (threshold - value) * 100
    return Check(name, FAILED, f"{name} {pct(value)} is below {pct(threshold)} by {gap:.1f} "
                 "points", threshold, value)  # fmt: skip


def built_to_fail(cases: list[Case]) -> set[str]:
    """The scenario names (trials folded) the gated run expects to fail."""
    return {x.scenario for x in cases if x.expect_fail}


def regressions(cmp: RunComparison, allowed: int, expected: Collection[str] = ()) -> Check:
    """Regressions against the baseline; a scenario built to fail (``expected``) is not one."""
    name = "max-regressions"
    if cmp.scoring_a is None:
        return Check(name, UNDECIDED, f"baseline run {cmp.run_a} has no scoring: regressions "
                     f"cannot be counted (score it with: vae rescore --run {cmp.run_a})",
                     allowed, None)  # fmt: skip
    found = [s for s in cmp.regressions if s.scenario not in expected]
    names = ", ".join(s.scenario for s in found[:10]) + (" …" if len(found) > 10 else "")
    text = f"{len(found)} regression(s) against baseline {cmp.run_a} (at most {allowed})"
    n = cmp.counts()
    unknown = [f"{n['unscored']} not comparable (unscored)"] if n["unscored"] else []
    unknown += [f"{n['only_a']} only in the baseline"] if n["only_a"] else []
    if len(found) < len(cmp.regressions):
        unknown.append(f"{len(cmp.regressions) - len(found)} built to fail not counted")
    if unknown:  # scenarios no regression could be counted on: say so, even on a pass
        text += f"; {', '.join(unknown)}"
    if len(found) <= allowed:
        return Check(name, PASSED, text, allowed, len(found))
    over = len(found) - allowed
    return Check(name, FAILED, f"{text}, {over} too many: {names}", allowed, len(found))
