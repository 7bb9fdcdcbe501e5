"""The per-scenario rule (no threshold) and the unexpected passes, on recorded, scored runs.

``standard`` runs: book_ok passes, book_wrong and db_case fail their gating
signals. Which of them are built to fail (the ``expect-fail`` tag, or the
``expect_fail`` field) decides the gate without thresholds; a threshold
replaces that rule, leaves the scenarios built to fail out of its figures,
and an unexpected pass fails the gate whatever was given.
"""

from __future__ import annotations

from pathlib import Path

from tests.factories import SessionSpec, ToolCallSpec, conversation, scenario, write_run_sync
from tests.scorer_service.gate.runs import NO_JUDGE, built_to_fail, standard
from tests.scorer_service.report.runs import RUN_A, RUN_B, make_pair, score
from vae.scorer_service.gate import GateResult, GateSpec, gate
from vae.scorer_service.gate.checks import Check


def check(result: GateResult, name: str) -> Check:
    return next(c for c in result.checks if c.name == name)


def outcomes(result: GateResult) -> dict[str, str]:
    return {c.name: c.outcome for c in result.cases}


def test_without_thresholds_a_failing_scenario_fails_the_gate_naming_it(tmp_path: Path) -> None:
    db = tmp_path / "vae.db"
    result = gate(db, standard(db), GateSpec())
    assert (result.status, result.exit_code, result.rule) == ("failed", 1, "scenarios")
    assert check(result, "scenarios").message == (
        "2 scenario(s) failed their gating signals: book_wrong, db_case — without a threshold "
        "every scenario must pass unless built to fail (expect-fail); 1 passed"
    )
    assert [c.name for c in result.checks] == ["completed", "scored", "decided", "max-unscored",
                                               "scenarios"]  # fmt: skip
    # --max-unscored bounds what could not be decided: it is not a threshold on the agent.
    assert gate(db, "2024", GateSpec(max_unscored=3)).exit_code == 1


def test_expected_failures_keep_the_gate_green_and_say_so(tmp_path: Path) -> None:
    db = tmp_path / "vae.db"
    run = built_to_fail(db, "tagged", tagged=("book_wrong",), field=("db_case",))
    result = gate(db, run, GateSpec())
    assert (result.status, result.exit_code) == ("passed", 0)
    assert outcomes(result) == {"book_ok": "passed", "book_wrong": "xfailed", "db_case": "xfailed"}
    assert [c.verdict for c in result.cases] == ["passed", "failed", "failed"]  # verdicts stand
    assert check(result, "scenarios").message == (
        "no scenario failed unexpectedly: 1 passed, 2 failed as expected (expect-fail)"
    )
    assert check(result, "expect-fail").message == (
        "2 built to fail: 2 failed as expected, none unexpectedly passed"
    )
    assert result.counts["xfailed"] == 2 and result.counts["rated"] == 1
    assert result.success_rate == 1.0  # over the scenarios expected to pass
    doc = result.as_dict()
    assert doc["rule"] == "scenarios"
    assert {c["name"]: (c["expect_fail"], c["outcome"]) for c in doc["cases"]} == {
        "book_ok": (False, "passed"), "book_wrong": (True, "xfailed"),
        "db_case": (True, "xfailed"),
    }  # fmt: skip
    failing = {c.name: c.reason for c in result.cases}
    assert failing["book_wrong"].startswith("ACTION_MATCH: reference is not a subset")


def test_one_expected_failure_not_marked_fails_naming_it(tmp_path: Path) -> None:
    db = tmp_path / "vae.db"
    result = gate(db, built_to_fail(db, "one-left", tagged=("book_wrong",)), GateSpec())
    assert result.exit_code == 1
    assert check(result, "scenarios").message.endswith(
        "1 scenario(s) failed their gating signals: db_case — without a threshold every scenario "
        "must pass unless built to fail (expect-fail); 1 passed, 1 failed as expected"
    )


def test_an_unexpected_pass_fails_the_gate_whatever_the_thresholds(tmp_path: Path) -> None:
    db = tmp_path / "vae.db"
    run = built_to_fail(db, "xpass", field=("book_ok",), tagged=("book_wrong", "db_case"))
    plain = gate(db, run, GateSpec())
    assert (plain.status, plain.exit_code) == ("failed", 1)
    assert outcomes(plain)["book_ok"] == "xpassed"
    assert check(plain, "scenarios").status == "passed"
    unexpected = check(plain, "expect-fail")
    assert unexpected.status == "failed" and unexpected.actual == 1
    assert unexpected.message.startswith(
        "1 scenario(s) built to fail unexpectedly passed: book_ok (fixed? then remove expect-fail"
    )
    (case,) = [c for c in plain.cases if c.name == "book_ok"]
    assert case.verdict == "passed" and case.reason.startswith("unexpectedly passed: built to fail")
    # A threshold replaces the per-scenario rule, never this check.
    lenient = gate(db, run, GateSpec(min_success=0.0, max_unscored=1))
    assert check(lenient, "expect-fail").status == "failed"
    # ...here with nothing left to rate (all three are built to fail): could not decide.
    assert lenient.exit_code == 3 and check(lenient, "min-success").message == (
        "success rate: no decided session; 3 built to fail left out"
    )
    other = built_to_fail(db, "xpass-rated", field=("book_ok",), tagged=("book_wrong",))
    rated = gate(db, other, GateSpec(min_success=0.0))  # db_case, failed, is rated: 0% >= 0%
    assert check(rated, "min-success").status == "passed"
    assert rated.exit_code == 1 and check(rated, "expect-fail").status == "failed"


def test_a_threshold_replaces_the_rule_and_leaves_expected_failures_out(tmp_path: Path) -> None:
    db = tmp_path / "vae.db"
    run = built_to_fail(db, "rates", tagged=("book_wrong",))  # db_case fails, not expected
    result = gate(db, run, GateSpec(min_success=0.5))
    assert (result.exit_code, result.rule) == (0, "thresholds")
    assert "scenarios" not in {c.name for c in result.checks}
    assert check(result, "min-success").message == (
        "success rate 50.0% (1/2 decided; 1 built to fail left out) meets 50.0%"
    )
    strict = gate(db, run, GateSpec(min_success=1.0))
    assert (
        strict.exit_code == 1
        and "below 100.0% by 50.0 points" in check(strict, "min-success").message
    )
    domain = gate(db, run, GateSpec(min_success_domains={"restaurant": 1.0}))
    assert check(domain, "min-success restaurant").message == (
        "restaurant success rate 100.0% (1/1 decided; 1 built to fail left out) meets 100.0%"
    )


def test_a_regression_of_a_scenario_built_to_fail_is_not_counted(tmp_path: Path) -> None:
    db = tmp_path / "vae.db"
    make_pair(db)  # in B, change_flight regressed
    counted = gate(db, RUN_B, GateSpec(baseline=RUN_A))
    assert counted.exit_code == 1 and check(counted, "max-regressions").actual == 1
    # The same regression where B's suite marks change_flight as built to fail (a known bug).
    other = tmp_path / "known.db"
    make_pair(other, built_to_fail_in_b=("change_flight",))
    known = gate(other, RUN_B, GateSpec(baseline=RUN_A))
    assert known.exit_code == 0, [c.as_dict() for c in known.checks]
    assert check(known, "max-regressions").message == (
        f"0 regression(s) against baseline {RUN_A} (at most 0); 1 built to fail not counted"
    )
    assert check(known, "expect-fail").status == "passed"


def test_pass_k_leaves_repeated_scenarios_built_to_fail_out(tmp_path: Path) -> None:
    db = tmp_path / "vae.db"
    names = [f"book#{k}" for k in (1, 2, 3)] + ["neg#1", "neg#2"]
    docs = [scenario(n, reference_answer={"tool": "book", "name": "Ann"},
                     tags=["expect-fail"] if n.startswith("neg") else [])
            for n in names]  # fmt: skip
    booked = {"book#3": "Bob", "neg#1": "Zed", "neg#2": "Zed"}
    specs = [
        SessionSpec(n, turns=conversation(2),
                    tool_calls=[ToolCallSpec("book", {"name": booked.get(n, "Ann")}, at_s=3.0)])
        for n in names
    ]  # fmt: skip
    write_run_sync(db, docs, specs, run_id="trials")
    score(db, "trials", NO_JUDGE)
    result = gate(db, "trials", GateSpec(pass_k={1: 0.6, 2: 0.3}))
    assert outcomes(result) == {"book#1": "passed", "book#2": "passed", "book#3": "failed",
                                "neg#1": "xfailed", "neg#2": "xfailed"}  # fmt: skip
    # Over book alone (neg, built to fail, left out): pass^1 = 2/3, pass^2 = 1/3.
    assert check(result, "pass^1").message == "pass^1 66.7% meets 60.0%"
    assert check(result, "pass^2").message == "pass^2 33.3% meets 30.0%"
    assert result.exit_code == 0
