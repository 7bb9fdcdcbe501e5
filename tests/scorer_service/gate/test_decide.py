"""The gate on recorded, scored runs: passed (0), failed (1), could not decide (3), usage."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.factories import SessionSpec, ToolCallSpec, conversation, scenario, write_run_sync
from tests.scorer_service.gate.runs import judge_gated, set_status, standard
from tests.scorer_service.report.runs import RUN_A, RUN_B, make_pair, score
from vae.recordings.errors import RunSelectionError
from vae.scorer_service.compare.runs import compare_runs
from vae.scorer_service.config import ScoringConfig
from vae.scorer_service.gate import GateSpec, GateSpecError, gate


def _check(result: object, name: str) -> object:
    return next(c for c in result.checks if c.name == name)  # type: ignore[attr-defined]


def test_a_threshold_met_passes_and_a_threshold_missed_fails_with_the_numbers(
    tmp_path: Path,
) -> None:
    db = tmp_path / "vae.db"
    run = standard(db)
    met = gate(db, "2024", GateSpec(min_success=0.3))
    assert (met.status, met.exit_code) == ("passed", 0)
    assert met.counts == {"passed": 1, "failed": 2, "xfailed": 0, "xpassed": 0, "unscored": 0,
                          "not_applicable": 0, "decided": 3, "rated": 3,
                          "sessions": 3}  # fmt: skip
    missed = gate(db, run, GateSpec(min_success=0.8, min_success_domains={"restaurant": 0.5}))
    assert (missed.status, missed.exit_code) == ("failed", 1)
    check = _check(missed, "min-success")
    assert check.message == "success rate 33.3% (1/3 decided) is below 80.0% by 46.7 points"
    assert (check.threshold, round(check.actual, 4)) == (0.8, 0.3333)
    assert _check(missed, "min-success restaurant").status == "passed"
    telecom = gate(db, run, GateSpec(min_success_domains={"telecom": 0.5}))
    assert _check(telecom, "min-success telecom").message == (
        "telecom success rate 0.0% (0/1 decided) is below 50.0% by 50.0 points"
    )
    failing = {c.name: c.reason for c in missed.cases if c.verdict == "failed"}
    assert failing["book_wrong"].startswith("ACTION_MATCH: reference is not a subset")
    assert failing["db_case"].startswith("DB_STATE_MATCH:")


def test_a_regression_against_the_baseline_fails_as_vae_compare_counts_it(tmp_path: Path) -> None:
    db = tmp_path / "vae.db"
    make_pair(db)
    result = gate(db, RUN_B, GateSpec(baseline=RUN_A))
    assert (result.status, result.exit_code) == ("failed", 1)
    expected = compare_runs(db, RUN_A, RUN_B).regressions
    assert [s.scenario for s in result.comparison.regressions] == [s.scenario for s in expected]
    check = _check(result, "max-regressions")
    assert check.message == (
        f"1 regression(s) against baseline {RUN_A} (at most 0), 1 too many: change_flight"
    )
    tolerated = gate(db, RUN_B, GateSpec(baseline="2024-06-01", max_regressions=1))
    assert tolerated.exit_code == 0
    assert _check(tolerated, "max-regressions").status == "passed"


def test_a_pass_on_regressions_says_what_could_not_be_compared(tmp_path: Path) -> None:
    db = tmp_path / "vae.db"
    judge_gated(db, "base")  # ask is unscored; book passes
    again = gate(db, judge_gated(db, "again"), GateSpec(baseline="base", max_unscored=1))
    assert again.exit_code == 0
    assert _check(again, "max-regressions").message == (
        "0 regression(s) against baseline base (at most 0); 1 not comparable (unscored)"
    )
    other = gate(db, standard(db), GateSpec(baseline="base"))
    assert _check(other, "max-regressions").message == (
        "0 regression(s) against baseline base (at most 0); 2 only in the baseline"
    )


def test_unscored_sessions_beyond_the_bound_cannot_be_decided(tmp_path: Path) -> None:
    db = tmp_path / "vae.db"
    run = judge_gated(db)
    result = gate(db, run, GateSpec(min_success=0.0))
    assert (result.status, result.exit_code) == ("undecided", 3)
    assert _check(result, "max-unscored").message == (
        "1 session(s) have no verdict (no_judge: 1); at most 0 allowed"
    )
    (case,) = [c for c in result.cases if c.verdict == "unscored"]
    assert case.name == "ask" and case.reason.startswith("JUDGE_PASSED:")
    assert gate(db, run, GateSpec(max_unscored=1)).exit_code == 0


def test_could_not_decide_wins_over_failed_and_every_check_is_reported(tmp_path: Path) -> None:
    db = tmp_path / "vae.db"
    run = judge_gated(db)
    result = gate(db, run, GateSpec(min_success=1.0, max_unscored=0))
    statuses = {c.name: c.status for c in result.checks}
    assert statuses["max-unscored"] == "undecided" and statuses["min-success"] == "passed"
    strict = gate(db, run, GateSpec(min_success=1.0, max_unscored=0, pass_k={1: 0.5}))
    assert strict.exit_code == 3
    cut = standard(db, "cut-short")  # a threshold missed on a run that did not complete
    set_status(db, cut, "failed", "the bridge stopped")
    both = gate(db, cut, GateSpec(min_success=0.8))
    statuses = {c.name: c.status for c in both.checks}
    assert statuses["min-success"] == "failed" and statuses["completed"] == "undecided"
    assert (both.status, both.exit_code) == ("undecided", 3)


def test_no_scoring_a_failed_scoring_an_incomplete_run_and_an_empty_run_cannot_be_decided(
    tmp_path: Path,
) -> None:
    db = tmp_path / "vae.db"
    docs = [scenario("book", reference_answer={"tool": "book"})]
    spec = [SessionSpec("book", turns=conversation(2), tool_calls=[ToolCallSpec("book")])]
    write_run_sync(db, docs, spec, run_id="unscored-run")
    result = gate(db, "unscored-run", GateSpec(min_success=0.5))
    assert result.exit_code == 3 and result.scoring_id is None
    assert _check(result, "scored").message.startswith("run unscored-run has no scoring")
    assert _check(result, "min-success").status == "undecided"

    write_run_sync(db, docs, spec, run_id="cut-short")
    score(db, "cut-short", ScoringConfig(no_judge=True))
    set_status(db, "cut-short", "failed", "the bridge stopped")
    cut = gate(db, "cut-short", GateSpec())
    assert cut.exit_code == 3
    assert _check(cut, "completed").message == (
        "run cut-short did not complete (failed: the bridge stopped)"
    )

    write_run_sync(db, docs, [], run_id="never-ran")
    never = gate(db, "never-ran", GateSpec())
    assert never.exit_code == 3 and never.cases[0].reason.startswith("not run")
    write_run_sync(db, [], [], run_id="empty")
    empty = gate(db, "empty", GateSpec())
    assert empty.exit_code == 3
    assert _check(empty, "decided").message == "the run has no sessions: nothing to gate"


def test_pass_k_on_repeated_trials(tmp_path: Path) -> None:
    db = tmp_path / "vae.db"
    names = [f"book#{k}" for k in (1, 2, 3)]
    docs = [scenario(n, reference_answer={"tool": "book", "name": "Ann"}) for n in names]
    specs = [
        SessionSpec(n, turns=conversation(2), tool_calls=[
            ToolCallSpec("book", {"name": "Ann" if n != "book#3" else "Bob"}, at_s=3.0)])
        for n in names
    ]  # fmt: skip
    write_run_sync(db, docs, specs, run_id="trials")
    score(db, "trials", ScoringConfig(no_judge=True))
    result = gate(db, "trials", GateSpec(pass_k={1: 0.6, 2: 0.5}))
    assert [c.name for c in result.cases] == names
    assert _check(result, "pass^1").message == "pass^1 66.7% meets 60.0%"
    assert _check(result, "pass^2").message == "pass^2 33.3% is below 50.0% by 16.7 points"
    assert result.exit_code == 1
    beyond = gate(db, "trials", GateSpec(pass_k={4: 0.5}))
    assert beyond.exit_code == 3 and "goes up to k=3" in _check(beyond, "pass^4").message


def test_calling_the_gate_wrong_is_a_usage_error(tmp_path: Path) -> None:
    db = tmp_path / "vae.db"
    run = standard(db)
    with pytest.raises(GateSpecError, match="the run has no domain 'airline'"):
        gate(db, run, GateSpec(min_success_domains={"airline": 0.5}))
    with pytest.raises(GateSpecError, match="is the gated run"):
        gate(db, run, GateSpec(baseline="2024"))
    with pytest.raises(RunSelectionError):
        gate(db, "nope", GateSpec())
    with pytest.raises(RunSelectionError):
        gate(db, run, GateSpec(baseline="nope"))
    with pytest.raises(FileNotFoundError):
        gate(tmp_path / "missing.db", run, GateSpec())
