"""What a scenario expects of its own verdict, and how a verdict reads against it.

Why a module: a suite keeps scenarios that are built to fail — a negative test
proving that a failure is caught, a known bug not fixed yet — as pytest keeps
``xfail`` tests. The gate, the pytest plugin, JUnit, the Markdown summary, the
report, ``vae demo`` and ``vae runs show`` all read a verdict against that
expectation with these few functions, so "expected failure" means one thing:

- a scenario is expected to fail when its ``expect_fail`` field is true; the
  tag ``expect-fail`` sets the field when the file is read (and marks a run
  frozen before the field existed);
- its outcome: ``xfailed`` when it failed as expected, ``xpassed`` when it
  passed although expected to fail ("unexpectedly passed", pytest's strict
  XPASS), otherwise the verdict itself (``passed``, ``failed``, ``unscored``,
  ``not_applicable``: no verdict is held against the expectation);
- the per-scenario rule (what ``vae gate`` applies when no threshold is
  given): a run passes only when no outcome is ``failed`` or ``xpassed``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

#: The tag that marks a scenario built to fail; it sets ``expect_fail``.
EXPECT_FAIL_TAG = "expect-fail"
#: A tag the example suite puts on scenarios built to pass: it contradicts ``expect_fail``.
EXPECT_PASS_TAG = "expect-pass"
#: Why a scenario built to fail that passed fails the gate (its one-line reason everywhere).
UNEXPECTED_PASS = (f"unexpectedly passed: built to fail ({EXPECT_FAIL_TAG}), it passed its "
                   "gating signals")  # fmt: skip
#: Outcomes that break the per-scenario rule.
BREAK_THE_RULE = ("failed", "xpassed")
#: Outcomes in the order a reader needs them (what needs attention first).
ORDER = ("failed", "xpassed", "unscored", "xfailed", "passed", "not_applicable")
#: How an outcome reads in a sentence.
WORDS = {
    "passed": "passed",
    "failed": "failed",
    "xfailed": "expected failure",
    "xpassed": "unexpectedly passed",
    "unscored": "unscored",
    "not_applicable": "not applicable",
}


def expects_failure(scenario: Mapping[str, Any] | None) -> bool:
    """Whether a frozen scenario (its plain data) is expected to fail: field or tag."""
    if not scenario:
        return False
    if scenario.get("expect_fail") is True:
        return True
    tags = scenario.get("tags")
    return isinstance(tags, list) and EXPECT_FAIL_TAG in tags


def outcome(verdict: str, expect_fail: bool) -> str:
    """The verdict read against the expectation (``xfailed``/``xpassed`` or the verdict)."""
    if expect_fail and verdict == "failed":
        return "xfailed"
    if expect_fail and verdict == "passed":
        return "xpassed"
    return verdict


def rule_breakers(outcomes: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    """The ``(name, outcome)`` pairs that break the per-scenario rule, in the order given."""
    return [(name, out) for name, out in outcomes if out in BREAK_THE_RULE]
