"""JUnit XML as CI reporters read it (parsed with junitparser), whatever the bots said."""

from __future__ import annotations

import xml.dom.minidom
from dataclasses import replace
from pathlib import Path

from junitparser import Error, Failure, JUnitXml, Skipped, TestSuite

from tests.factories import SessionSpec, ToolCallSpec, Turn, conversation, scenario, write_run_sync
from tests.scorer_service.gate.runs import built_to_fail, judge_gated, standard
from tests.scorer_service.report.runs import score
from vae.scorer_service.config import ScoringConfig
from vae.scorer_service.gate import Case, GateSpec, SignalResult, gate
from vae.scorer_service.gate.junit import write_junit, xml_text

#: What a transcript or a tool argument may hold (the store keeps valid Unicode only).
HOSTILE = ("]]> <b>&amp; </failure> \x00\x07\x1b[31m\x7f \ufffe\uffff 😀 \U0010ffff \r\n"
           "| pipe `tick` *x* [l](javascript:alert(1)) @octocat </script>")  # fmt: skip


def _parse(path: Path) -> dict[str, TestSuite]:
    xml.dom.minidom.parse(str(path))  # a strict parser: well formed, or it raises
    return {suite.name: suite for suite in JUnitXml.fromfile(str(path))}


def _props(suite: TestSuite) -> dict[str, str]:
    return {p.name: p.value for p in suite.properties()}


def test_counts_names_failures_and_properties(tmp_path: Path) -> None:
    db = tmp_path / "vae.db"
    run = standard(db)
    result = gate(db, run, GateSpec(min_success=0.5))
    result = replace(result, links={"report_url": "https://ci.example/run/7", "report": "r.html"})
    suites = _parse(write_junit(result, tmp_path / "junit.xml"))
    assert set(suites) == {"restaurant", "telecom", "vae gate"}
    restaurant = suites["restaurant"]
    assert (restaurant.tests, restaurant.failures, restaurant.errors) == (2, 1, 0)
    cases = {c.name: c for c in restaurant}
    assert set(cases) == {"book_ok", "book_wrong"}
    assert all(c.classname == "restaurant" for c in cases.values())
    assert cases["book_ok"].is_passed
    (failure,) = cases["book_wrong"].result
    assert isinstance(failure, Failure) and failure.type == "ACTION_MATCH"
    assert failure.message == (
        "ACTION_MATCH: reference is not a subset — party: expected 4, recorded 3"
    )
    (db_case,) = list(suites["telecom"])
    body = db_case.result[0].text
    assert "DB_STATE_MATCH failed: user DB roaming" in body and "CLEAN_EXIT failed" in body
    assert "agent: agent turn 0" in db_case.system_out  # what was said, for the reader
    gate_cases = {c.name: c for c in suites["vae gate"]}
    assert set(gate_cases) == {"completed", "scored", "decided", "max-unscored", "min-success"}
    (threshold,) = gate_cases["min-success"].result
    assert isinstance(threshold, Failure)
    assert threshold.message == "success rate 33.3% (1/3 decided) is below 50.0% by 16.7 points"
    assert gate_cases["completed"].is_passed
    props = _props(restaurant)
    assert props == _props(suites["vae gate"])  # every suite carries them
    assert props["vae.run_id"] == run and props["vae.scoring_id"] == result.scoring_id
    assert float(props["vae.latency_p50_s"]) > 0
    assert props["vae.report_url"] == "https://ci.example/run/7" and props["vae.report"] == "r.html"
    assert (props["vae.gate"], props["vae.exit_code"]) == ("failed", "1")


def test_unscored_is_an_error_never_skipped(tmp_path: Path) -> None:
    db = tmp_path / "vae.db"
    suites = _parse(write_junit(gate(db, judge_gated(db), GateSpec()), tmp_path / "j.xml"))
    cases = {c.name: c for c in suites["restaurant"]}
    (error,) = cases["ask"].result
    assert isinstance(error, Error) and error.type == "unscored"
    assert error.message.startswith("unscored: JUDGE_PASSED:")
    assert "causes: no_judge" in error.text
    assert not any(isinstance(r, Skipped) for s in suites.values() for c in s for r in c.result)
    (undecided,) = next(c for c in suites["vae gate"] if c.name == "max-unscored").result
    assert isinstance(undecided, Error)
    assert undecided.message == (
        "could not decide: 1 session(s) have no verdict (no_judge: 1); at most 0 allowed"
    )


def test_repeated_trials_are_one_test_case_each(tmp_path: Path) -> None:
    db = tmp_path / "vae.db"
    names = ["book#1", "book#2"]
    docs = [scenario(n, reference_answer={"tool": "book"}) for n in names]
    specs = [SessionSpec(n, turns=conversation(2), tool_calls=[ToolCallSpec("book", at_s=3)])
             for n in names]  # fmt: skip
    write_run_sync(db, docs, specs, run_id="trials")
    score(db, "trials", ScoringConfig(no_judge=True))
    suites = _parse(write_junit(gate(db, "trials", GateSpec()), tmp_path / "j.xml"))
    assert [c.name for c in suites["restaurant"]] == names


def test_hostile_bot_text_keeps_the_xml_well_formed(tmp_path: Path) -> None:
    db = tmp_path / "vae.db"
    docs = [scenario("hostile", reference_answer={"tool": "book", "name": "Ann"})]
    spec = SessionSpec(
        "hostile",
        turns=[Turn("agent", 0.5, 2.0, HOSTILE), Turn("user", 2.5, 3.5, HOSTILE)],
        tool_calls=[ToolCallSpec("book", {"name": HOSTILE}, at_s=3.0)],
    )
    write_run_sync(db, docs, [spec], run_id="hostile")
    score(db, "hostile", ScoringConfig(no_judge=True))
    result = gate(db, "hostile", GateSpec())
    # A case built in memory may hold what no store keeps: lone surrogates.
    odd = Case("odd\ud800", "odd", 0, "weird <domain> & \ud83d", "s", "unscored",
               reason="judge said \ud800 ]]>", causes=["judge_error \udfff"],
               signals=[SignalResult("JUDGE_PASSED", "unscored", True, ["\x00 ]]> \udc80"])],
               transcript=[{"side": "agent", "text": "\ud800\x0b\x0c", "t_s": 1.0}])  # fmt: skip
    result = replace(result, cases=[*result.cases, odd])
    suites = _parse(write_junit(result, tmp_path / "hostile.xml"))
    (case,) = list(suites["restaurant"])
    failure = case.result[0]
    assert "recorded ]]> <b>&amp; </failure> \\u0000\\u0007\\u001b" in failure.message
    assert "\\ufffe\\uffff 😀" in case.system_out and "</script>" in case.system_out
    assert "\U0010ffff" in case.system_out  # valid characters are kept
    (weird,) = list(suites["weird <domain> & \\ud83d"])
    assert weird.name == "odd\\ud800"
    assert weird.result[0].message == "unscored: judge said \\ud800 ]]>"
    assert xml_text("a\ud800b\x1fc\ufffed\t\n") == "a\\ud800b\\u001fc\\ufffed\t\n"


def test_only_a_passed_verdict_is_a_passing_test_case(tmp_path: Path) -> None:
    db = tmp_path / "vae.db"
    result = gate(db, standard(db), GateSpec())
    odd = Case("odd", "odd", 0, "restaurant", "s", "mystery", reason="no verdict we know")
    suites = _parse(write_junit(replace(result, cases=[odd]), tmp_path / "odd.xml"))
    (case,) = list(suites["restaurant"])
    (error,) = case.result
    assert isinstance(error, Error) and error.message == "mystery: no verdict we know"


def test_an_expected_failure_passes_saying_so_and_an_unexpected_pass_fails(
    tmp_path: Path,
) -> None:
    db = tmp_path / "vae.db"
    run = built_to_fail(db, "xfail", tagged=("book_wrong", "book_ok"), field=("db_case",))
    suites = _parse(write_junit(gate(db, run, GateSpec()), tmp_path / "junit.xml"))
    restaurant = suites["restaurant"]
    assert (restaurant.tests, restaurant.failures, restaurant.errors, restaurant.skipped) == (
        2, 1, 0, 0)  # fmt: skip
    cases = {c.name: c for c in restaurant}
    wrong = cases["book_wrong"]  # failed, as built: a passing test case that says so
    assert wrong.is_passed and wrong.result == []
    assert wrong.system_out.startswith(
        "expected failure (expect-fail): ACTION_MATCH: reference is not a subset"
    )
    assert "book_wrong failed (session " in wrong.system_out
    (db_case,) = list(suites["telecom"])  # built to fail through the field, not the tag
    assert db_case.is_passed and db_case.system_out.startswith("expected failure (expect-fail): ")
    (unexpected,) = cases["book_ok"].result  # passed although built to fail
    assert isinstance(unexpected, Failure) and unexpected.type == "unexpected-pass"
    assert unexpected.message == (
        "unexpectedly passed: built to fail (expect-fail), it passed its gating signals"
    )
    gate_cases = {c.name: c for c in suites["vae gate"]}
    assert gate_cases["scenarios"].is_passed
    (check,) = gate_cases["expect-fail"].result
    assert isinstance(check, Failure) and "unexpectedly passed: book_ok" in check.message
    assert _props(restaurant)["vae.exit_code"] == "1"
    assert not any(isinstance(r, Skipped) for s in suites.values() for c in s for r in c.result)


def test_without_thresholds_each_failing_scenario_and_the_rule_are_failures(
    tmp_path: Path,
) -> None:
    db = tmp_path / "vae.db"
    suites = _parse(write_junit(gate(db, standard(db), GateSpec()), tmp_path / "junit.xml"))
    (rule,) = next(c for c in suites["vae gate"] if c.name == "scenarios").result
    assert isinstance(rule, Failure)
    assert rule.message.startswith("2 scenario(s) failed their gating signals: book_wrong, db_case")
    assert _props(suites["vae gate"])["vae.gate"] == "failed"
