"""Run vs run comparison on real scored runs (synthetic recordings, real scoring)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.factories import SessionSpec, conversation, scenario, write_run_sync
from tests.scorer_service.report.runs import RUN_A, RUN_B, make_pair, score
from vae.scorer_service.compare.runs import CompareError, compare_runs
from vae.scorer_service.config import ScoringConfig


def test_a_regression_and_a_fix_are_classified_with_their_reasons(tmp_path: Path) -> None:
    db = tmp_path / "vae.db"
    make_pair(db)
    cmp = compare_runs(db, "2024-06-01", "2024-06-02")  # unique prefixes work
    assert (cmp.run_a, cmp.run_b) == (RUN_A, RUN_B)
    by_name = {s.scenario: s for s in cmp.scenarios}
    flight, table = by_name["change_flight"], by_name["book_table"]
    assert (flight.change, flight.a and flight.a.verdict, flight.b and flight.b.verdict) == (
        "regression",
        "passed",
        "failed",
    )
    assert any(r.startswith("ACTION_MATCH:") and "saturday" in r for r in flight.reasons)
    assert any(r.startswith("DB_STATE_MATCH:") for r in flight.reasons)
    assert table.change == "fix"
    assert any(r.startswith("ACTION_MATCH now passes (was:") for r in table.reasons)
    assert cmp.scenarios[0].change == "regression", "regressions come first"
    assert [r.scenario for r in cmp.regressions] == ["change_flight"]
    success = next(r for r in cmp.rates if r.name == "success rate")
    assert (success.a, success.b, success.change) == (0.5, 0.5, 0.0)
    airline = next(r for r in cmp.rates if r.name == "domain airline")
    assert (airline.a, airline.b, airline.better) == (1.0, 0.0, False)
    diffs = {d.key: (d.a, d.b) for d in cmp.config}
    assert diffs["agent bot"] == ("skyjet-agent 1.0", "skyjet-agent 2.0")
    assert diffs["run.options.seed"] == ("1", "2")
    assert not any(k.startswith("scoring.") for k in diffs), "both scored with the defaults"


def test_the_json_document_has_the_agreed_shape(tmp_path: Path) -> None:
    db = tmp_path / "vae.db"
    make_pair(db)
    doc = json.loads(json.dumps(compare_runs(db, RUN_A, RUN_B).as_dict()))
    row = doc["scenarios"][0]
    assert {"scenario", "a", "b", "change", "reasons"} <= set(row)
    assert row["scenario"] == "change_flight" and row["change"] == "regression"
    assert doc["counts"]["regression"] == 1 and doc["counts"]["fix"] == 1
    assert {"rates", "config", "warnings"} <= set(doc)


def test_missing_scenarios_are_only_a_or_only_b_never_flips(tmp_path: Path) -> None:
    db = tmp_path / "vae.db"
    for run_id, names in (("r1", "xy"), ("r2", "xz")):
        specs = [SessionSpec(n, turns=conversation(1)) for n in names]
        write_run_sync(db, [scenario(n) for n in names], specs, run_id=run_id)
    score(db, "r1")
    score(db, "r2")
    changes = {s.scenario: (s.change, s.a and s.a.verdict, s.b and s.b.verdict)
               for s in compare_runs(db, "r1", "r2").scenarios}  # fmt: skip
    assert changes["y"] == ("only_a", "passed", None)
    assert changes["z"] == ("only_b", None, "passed")
    assert changes["x"] == ("same", "passed", "passed")


def test_an_unscored_run_is_unscored_not_a_regression_and_warns(tmp_path: Path) -> None:
    db = tmp_path / "vae.db"
    make_pair(db)
    write_run_sync(db, [scenario("book_table")], [SessionSpec("book_table")], run_id="r3")
    cmp = compare_runs(db, RUN_A, "r3")
    assert {s.scenario: s.change for s in cmp.scenarios} == {
        "book_table": "unscored",
        "change_flight": "only_a",
    }
    assert cmp.regressions == []
    assert "r3 has no scoring yet" in cmp.warnings[0]


def test_scorings_of_two_scorings_of_one_run_and_their_config_difference(tmp_path: Path) -> None:
    db = tmp_path / "vae.db"
    make_pair(db)
    strict = score(db, RUN_B)
    loose = score(db, RUN_B, ScoringConfig(
        overrides={"change_flight": {"reference_answer": {"tool": "change_flight"}}}))  # fmt: skip
    cmp = compare_runs(db, RUN_B, RUN_B, scoring_a=strict, scoring_b=loose)
    diffs = [d.key for d in cmp.config]
    assert diffs and all(k.startswith("scoring.") for k in diffs)
    assert any("overrides" in k for k in diffs)
    with pytest.raises(CompareError, match="belongs to run"):
        compare_runs(db, RUN_A, RUN_A, scoring_b=loose)


def test_repeated_trials_are_compared_with_pass_hat_k(tmp_path: Path) -> None:
    db = tmp_path / "vae.db"
    doc = scenario("t", reference_answer={"tool": "book", "name": "Ann"},
                   success_signals=["ACTION_MATCH"])  # fmt: skip
    from tests.factories import ToolCallSpec

    def trial(k: int, ok: bool) -> SessionSpec:
        call = ToolCallSpec("book", {"name": "Ann" if ok else "Bob"}, at_s=1.0)
        return SessionSpec(f"t#{k}", turns=conversation(1), tool_calls=[call])

    docs = [{**doc, "name": f"t#{k}"} for k in (1, 2, 3)]
    write_run_sync(db, docs, [trial(1, True), trial(2, True), trial(3, True)], run_id="v1")
    write_run_sync(db, docs, [trial(1, True), trial(2, False), trial(3, True)], run_id="v2")
    score(db, "v1")
    score(db, "v2")
    (row,) = compare_runs(db, "v1", "v2").scenarios
    assert row.scenario == "t" and row.change == "regression" and row.k == 3
    assert (row.pass_hat_a, row.pass_hat_b) == (1.0, 0.0)
    assert row.reasons[0] == "pass^3 100% → 0% (3/3 → 2/3)"
