"""``vae compare``: text, JSON, --fail-on-regression, and bad references."""

from __future__ import annotations

import json
import re
from pathlib import Path

from click.testing import CliRunner

from tests.factories import SessionSpec, conversation, scenario, write_run_sync
from tests.scorer_service.report.runs import RUN_A, RUN_B, make_pair, score
from vae.cli.main import vae


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(vae, ["compare", *args], catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def test_text_lists_the_regression_first_with_why_rates_and_config(tmp_path: Path) -> None:
    db = tmp_path / "vae.db"
    make_pair(db)
    code, out, _ = invoke("2024-06-01", "2024-06-02", "--db", str(db))
    assert code == 0, "a regression alone is not a failure without --fail-on-regression"
    rows = [line.split() for line in out.splitlines() if line.startswith("  ")]
    changes = [r[0] for r in rows if r and r[0] in ("REGRESSION", "fix", "same")]
    assert changes[:2] == ["REGRESSION", "fix"]
    assert re.search(
        r"REGRESSION\s+change_flight\s+passed\s+failed\s+ACTION_MATCH: .*saturday", out
    )
    assert re.search(r"domain airline\s+100\.0%\s+0\.0%\s+-100\.0 pp\s+worse", out)
    assert re.search(r"agent bot\s+skyjet-agent 1\.0\s+skyjet-agent 2\.0", out)


def test_json_is_one_document_and_fail_on_regression_exits_1(tmp_path: Path) -> None:
    db = tmp_path / "vae.db"
    make_pair(db)
    code, out, err = invoke(RUN_A, RUN_B, "--db", str(db), "--json", "--fail-on-regression")
    assert code == 1
    doc = json.loads(out)
    assert [(s["scenario"], s["a"], s["b"], s["change"]) for s in doc["scenarios"]] == [
        ("change_flight", "passed", "failed", "regression"),
        ("book_table", "failed", "passed", "fix"),
    ]
    assert all(isinstance(r, str) for s in doc["scenarios"] for r in s["reasons"])
    assert "1 regression(s): change_flight" in err
    # B against itself: nothing regressed, exit 0
    code, out, _ = invoke(RUN_B, RUN_B, "--db", str(db), "--json", "--fail-on-regression")
    assert code == 0 and json.loads(out)["counts"]["same"] == 2


def test_unscored_is_never_a_regression(tmp_path: Path) -> None:
    """Never counted as a regression, but --fail-on-regression cannot pass what it could
    not compare: exit 1 naming them, unless --allow-unscored."""
    db = tmp_path / "vae.db"
    make_pair(db)
    write_run_sync(db, [scenario("change_flight")], [SessionSpec("change_flight")], run_id="r3")
    code, out, err = invoke(RUN_A, "r3", "--db", str(db), "--json", "--fail-on-regression")
    assert code == 1
    assert "r3 has no scoring yet" in err
    doc = json.loads(out)
    assert {s["scenario"]: s["change"] for s in doc["scenarios"]} == {
        "change_flight": "unscored",
        "book_table": "only_a",
    }
    counts = doc["counts"]
    assert counts["regression"] == 0
    assert (counts["unscored"], counts["only_a"]) == (1, 1)
    assert "regression(s)" not in err
    assert (
        "2 scenario(s) not compared: change_flight (unscored), book_table (only in A); exit 1"
        in err
    )
    code, out, err = invoke(
        RUN_A, "r3", "--db", str(db), "--json", "--fail-on-regression", "--allow-unscored"
    )
    assert code == 0
    assert json.loads(out)["counts"]["regression"] == 0
    assert "(accepted: --allow-unscored)" in err
    # without --fail-on-regression nothing fails
    assert invoke(RUN_A, "r3", "--db", str(db), "--json")[0] == 0


def test_a_scenario_in_one_run_only_fails_fail_on_regression(tmp_path: Path) -> None:
    db = tmp_path / "vae.db"
    for run_id, names in (("r1", "xy"), ("r2", "xz")):
        specs = [SessionSpec(n, turns=conversation(1)) for n in names]
        write_run_sync(db, [scenario(n) for n in names], specs, run_id=run_id)
    score(db, "r1")
    score(db, "r2")
    code, _, err = invoke("r1", "r2", "--db", str(db), "--fail-on-regression")
    assert code == 1
    assert "2 scenario(s) not compared: y (only in A), z (only in B)" in err
    code, _, _ = invoke("r1", "r2", "--db", str(db), "--fail-on-regression", "--allow-unscored")
    assert code == 0


def test_bad_references_are_usage_errors(tmp_path: Path) -> None:
    db = tmp_path / "vae.db"
    make_pair(db)
    assert invoke("1999", RUN_B, "--db", str(db))[0] == 2
    assert invoke(RUN_A, RUN_B, "--db", str(tmp_path / "none.db"))[0] == 2
    other = score(db, RUN_A)
    code, _, err = invoke(RUN_A, RUN_B, "--scoring-b", other, "--db", str(db))
    assert code == 2 and "belongs to run" in err


def test_repeated_runs_report_pass_hat_k(tmp_path: Path) -> None:
    db = tmp_path / "vae.db"
    docs = [scenario(f"t#{k}") for k in (1, 2)]
    specs = [SessionSpec(f"t#{k}", turns=conversation(1)) for k in (1, 2)]
    write_run_sync(db, docs, specs, run_id="v1")
    write_run_sync(db, docs, [specs[0], SessionSpec("t#2", turns=conversation(1),
                   stop_reason="user_hang_up")], run_id="v2")  # fmt: skip
    score(db, "v1")
    score(db, "v2")
    code, out, _ = invoke("v1", "v2", "--db", str(db))
    assert code == 0
    assert re.search(r"REGRESSION\s+t\s+passed 2/2\s+failed 1/2\s+pass\^2 100% → 0%", out)
    assert re.search(r"pass\^2\s+100\.0%\s+0\.0%\s+-100\.0 pp\s+worse", out)


def test_scores_diff_of_two_runs_warns_and_compares_by_scenario(tmp_path: Path) -> None:
    from vae.recordings.read.reader import RecordingReader

    db = tmp_path / "vae.db"
    make_pair(db)
    with RecordingReader(db) as reader:
        a, b = (reader.scorings(r)[0].scoring_id for r in (RUN_A, RUN_B))
    result = CliRunner().invoke(vae, ["scores", "diff", a, b, "--db", str(db)])
    assert result.exit_code == 0
    assert f"but {b} scores run {RUN_B}: matching by scenario name" in result.stderr
    assert "flips from" not in result.stdout, "sessions of two runs are never paired"
    assert re.search(r"REGRESSION\s+change_flight", result.stdout)


def test_a_regression_caused_by_a_mishearing_says_so_first(tmp_path: Path) -> None:
    """Run B's agent misheard the date: the regression's reason names the mishearing first."""
    from tests.factories import ToolCallSpec, Turn

    db = tmp_path / "vae.db"
    said = "Move booking S J two two three zero to April twentieth."
    reference = {"tool": "change_flight", "booking_id": "SJ2230", "new_date": "2026-04-20"}

    def spec(heard: str, date: str) -> SessionSpec:
        turns = [Turn("agent", 0.5, 1.5, "Hello."), Turn("user", 2.0, 4.0, said, heard=heard),
                 Turn("agent", 4.6, 6.0, "Done.")]  # fmt: skip
        call = ToolCallSpec("change_flight", {**reference, "new_date": date}, at_s=4.4)
        return SessionSpec("change", turns=turns, tool_calls=[call])

    doc = scenario("change", reference_answer=reference)
    write_run_sync(db, [doc], [spec(said, "2026-04-20")], run_id="heard-a")
    write_run_sync(
        db, [doc], [spec("move booking SJ2230 to April twenty first", "2026-04-21")],
        run_id="heard-b", created_ns=1_717_236_000_000_000_000 + 10**9,
    )  # fmt: skip
    score(db, "heard-a")
    score(db, "heard-b")
    code, out, _ = invoke("heard-a", "heard-b", "--db", str(db), "--json")
    assert code == 0
    (row,) = json.loads(out)["scenarios"]
    assert row["change"] == "regression"
    assert row["reasons"][0].startswith(
        'the agent heard "April twenty first" where the caller said "April twentieth"; '
        "ACTION_MATCH: "
    ), row["reasons"]
    code, text, _ = invoke("heard-a", "heard-b", "--db", str(db))
    assert 'REGRESSION  change  passed  failed  the agent heard "April twenty first"' in re.sub(
        r" {2,}", "  ", text
    )
