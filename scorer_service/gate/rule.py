"""The per-scenario rule: what the gate checks when no threshold is given, as pytest does.

Why a module: a gate that passes a failing run by default is a trap — the
first CI job a team writes goes green while the agent fails. So without a
threshold (``--min-success``, ``--pass-k``, ``--baseline``) every decided
scenario must end as expected: one that fails its gating signals fails the
gate (check ``scenarios``), unless it is built to fail (``expect_fail``, the
``expect-fail`` tag), which is an expected failure. A threshold replaces
this rule (it exists to tolerate some failures), but never the other check
here: a scenario built to fail that passed fails the gate whatever the
thresholds (check ``expect-fail``, pytest's strict xfail), since either the
bug was fixed or the failure is no longer caught, and someone must look.
Outcomes are :mod:`vae.recordings.scenarios.expect`'s.
"""

from __future__ import annotations

from vae.recordings.scenarios.expect import EXPECT_FAIL_TAG
from vae.scorer_service.gate.cases import Case
from vae.scorer_service.gate.checks import FAILED, PASSED, UNDECIDED, Check, counts

#: Names listed in one message at most.
SHOWN = 10


def _names(cases: list[Case]) -> str:
    names = [x.name for x in cases[:SHOWN]]
    return ", ".join(names) + (f" and {len(cases) - SHOWN} more" if len(cases) > SHOWN else "")


def _expected(n: int) -> str:
    return f", {n} failed as expected ({EXPECT_FAIL_TAG})" if n else ""


def scenarios(cases: list[Case]) -> Check:
    """No threshold: every decided scenario passed, or failed as it was built to."""
    c = counts(cases)
    failed = [x for x in cases if x.outcome == "failed"]
    if failed:
        also = f", {c['xfailed']} failed as expected" if c["xfailed"] else ""
        text = (f"{len(failed)} scenario(s) failed their gating signals: {_names(failed)} — "
                f"without a threshold every scenario must pass unless built to fail "
                f"({EXPECT_FAIL_TAG}); {c['passed']} passed{also}")  # fmt: skip
        return Check("scenarios", FAILED, text, 0, len(failed))
    if not c["decided"]:
        return Check("scenarios", UNDECIDED, "no scenario was decided: nothing to hold to the rule",
                     0, None)  # fmt: skip
    text = f"no scenario failed unexpectedly: {c['passed']} passed{_expected(c['xfailed'])}"
    return Check("scenarios", PASSED, text, 0, 0)


def unexpected_passes(cases: list[Case]) -> Check:
    """Scenarios built to fail that passed: always a failure (strict xfail)."""
    built = [x for x in cases if x.expect_fail]
    passed = [x for x in built if x.outcome == "xpassed"]
    if passed:
        text = (f"{len(passed)} scenario(s) built to fail unexpectedly passed: {_names(passed)} "
                f"(fixed? then remove {EXPECT_FAIL_TAG}; otherwise the failure is no longer "
                "caught)")  # fmt: skip
        return Check(EXPECT_FAIL_TAG, FAILED, text, 0, len(passed))
    xfailed = sum(1 for x in built if x.outcome == "xfailed")
    text = f"{len(built)} built to fail: {xfailed} failed as expected, none unexpectedly passed"
    return Check(EXPECT_FAIL_TAG, PASSED, text, 0, 0)


def per_scenario(cases: list[Case]) -> list[Check]:
    """The rule's checks alone (``scenarios``; ``expect-fail`` when a scenario is built to fail),
    for a command that keeps its own rules on what could not be decided (``vae demo``)."""
    found = [scenarios(cases)]
    if any(x.expect_fail for x in cases):
        found.append(unexpected_passes(cases))
    return found
