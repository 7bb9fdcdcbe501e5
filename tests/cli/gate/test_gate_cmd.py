"""`vae gate` and the gate options of `vae rescore`: exit codes 0 / 1 / 3 / 2 and the files.

0 the gate passed, 1 the agent failed it, 3 it could not be decided, 2 the
gate was called wrong — kept apart in every case here, on real scored runs.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from junitparser import Error, JUnitXml

from tests.factories import write_run_sync
from tests.helpers import closed_port
from tests.scorer_service.conftest import standard_sessions
from tests.scorer_service.gate.runs import built_to_fail, judge_gated, set_status, standard
from tests.scorer_service.report.runs import RUN_A, RUN_B, make_pair
from vae.cli.main import vae
from vae.recordings.read.reader import RecordingReader

NO_STEP = {"GITHUB_STEP_SUMMARY": None}


def invoke(*args: str, env: dict[str, str | None] | None = None) -> Result:
    return CliRunner().invoke(vae, list(args), env={**NO_STEP, **(env or {})})


def test_a_threshold_met_exits_0_and_missed_exits_1_with_the_numbers(tmp_path: Path) -> None:
    db = str(tmp_path / "vae.db")
    standard(Path(db))
    met = invoke("gate", "2024", "--db", db, "--min-success", "30%")
    assert met.exit_code == 0, met.output
    assert met.stdout.startswith("gate: passed (exit 0)")
    missed = invoke("gate", "2024", "--db", db, "--min-success", "0.5",
                    "--min-success", "restaurant=0.5")  # fmt: skip
    assert missed.exit_code == 1, missed.output
    assert "gate: failed: the agent missed the gate (exit 1)" in missed.stdout
    assert "success rate 33.3% (1/3 decided) is below 50.0% by 16.7 points" in missed.stdout
    assert "book_wrong  ACTION_MATCH: reference is not a subset" in missed.stdout
    from_env = invoke("gate", "2024", "--db", db, env={"VAE_MIN_SUCCESS": "0.9"})
    assert from_env.exit_code == 1 and "below 90.0%" in from_env.stdout


def test_a_regression_against_the_baseline_exits_1(tmp_path: Path) -> None:
    db = str(tmp_path / "vae.db")
    make_pair(Path(db))
    result = invoke("gate", RUN_B, "--db", db, "--baseline", RUN_A, "--json")
    assert result.exit_code == 1, result.output
    doc = json.loads(result.stdout)
    assert doc["status"] == "failed" and doc["exit_code"] == 1
    assert [r["scenario"] for r in doc["baseline"]["regressions"]] == ["change_flight"]
    compared = invoke("compare", RUN_A, RUN_B, "--db", db, "--json")
    assert json.loads(compared.stdout)["counts"]["regression"] == 1  # counted alike
    allowed = invoke("gate", RUN_B, "--db", db, "--baseline", RUN_A, "--max-regressions", "1")
    assert allowed.exit_code == 0, allowed.output


def test_unscored_no_scoring_an_incomplete_and_an_empty_run_exit_3(tmp_path: Path) -> None:
    db = tmp_path / "vae.db"
    judge_gated(db)
    unscored = invoke("gate", "judged", "--db", str(db))
    assert unscored.exit_code == 3, unscored.output
    assert "gate: could not decide (exit 3)" in unscored.stdout
    assert "1 session(s) have no verdict (no_judge: 1); at most 0 allowed" in unscored.stdout
    assert invoke("gate", "judged", "--db", str(db), "--max-unscored", "1").exit_code == 0
    scenarios, sessions = standard_sessions()
    write_run_sync(db, scenarios, sessions, run_id="raw")
    raw = invoke("gate", "raw", "--db", str(db), "--min-success", "0")
    assert raw.exit_code == 3 and "run raw has no scoring" in raw.stdout
    standard(db, "cut")
    set_status(db, "cut", "cancelled", "")
    cut = invoke("gate", "cut", "--db", str(db))
    assert cut.exit_code == 3 and "run cut did not complete (cancelled)" in cut.stdout
    write_run_sync(db, [], [], run_id="empty")
    empty = invoke("gate", "empty", "--db", str(db))
    assert empty.exit_code == 3 and "the run has no sessions" in empty.stdout


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--min-success", "1.5"], "is above 1"),
        (["--min-success", "most"], "'most' is not a rate"),
        (["--min-success", "airline=0.5"], "the run has no domain 'airline'"),
        (["--pass-k", "0=0.5"], "K must be a whole number >= 1"),
        (["--max-regressions", "1"], "--max-regressions needs --baseline RUN"),
        (["--max-unscored", "-1"], "-1 is not in the range x>=0"),
        (["--baseline", "2024"], "is the gated run"),
        (["--baseline", "nope"], "no run matches 'nope'"),
        (["--scoring", "nope"], "no scoring matches 'nope'"),
    ],
)
def test_bad_options_exit_2(tmp_path: Path, args: list[str], says: str) -> None:
    db = str(tmp_path / "vae.db")
    standard(Path(db))
    result = invoke("gate", "2024", "--db", db, *args)
    assert result.exit_code == 2, result.output
    assert says in result.stderr


def test_an_output_that_cannot_be_written_exits_2(tmp_path: Path) -> None:
    db = str(tmp_path / "vae.db")
    standard(Path(db))
    (tmp_path / "a-file").write_text("")
    target = tmp_path / "a-file" / "junit.xml"  # its folder is a file
    result = invoke("gate", "2024", "--db", db, "--junit-xml", str(target))
    assert result.exit_code == 2 and f"--junit-xml {target}: cannot write it" in result.stderr
    blocked = tmp_path / "step-dir"
    blocked.mkdir()
    warned = invoke("gate", "2024", "--db", db, "--min-success", "0.3",
                    env={"GITHUB_STEP_SUMMARY": str(blocked)})  # fmt: skip
    assert (
        warned.exit_code == 0 and "warning: cannot append to $GITHUB_STEP_SUMMARY" in warned.stderr
    )  # a summary that cannot be appended warns; the gate's verdict stands


def test_unknown_run_and_missing_database_exit_2(tmp_path: Path) -> None:
    db = str(tmp_path / "vae.db")
    standard(Path(db))
    assert "no run matches 'nope'" in invoke("gate", "nope", "--db", db).stderr
    missing = invoke("gate", "x", "--db", str(tmp_path / "none.db"))
    assert missing.exit_code == 2 and "no database at" in missing.stderr


def test_files_for_ci_and_the_github_step_summary(tmp_path: Path) -> None:
    db = str(tmp_path / "vae.db")
    standard(Path(db))
    step = tmp_path / "step.md"
    step.write_text("earlier step\n")
    junit, md = tmp_path / "out" / "junit.xml", tmp_path / "out" / "summary.md"
    args = ["gate", "2024", "--db", db, "--min-success", "0.5", "--junit-xml", str(junit),
            "--summary-md", str(md), "--report", str(tmp_path / "r.html"),
            "--report-url", "https://ci.example/runs/1"]  # fmt: skip
    result = invoke(*args, env={"GITHUB_STEP_SUMMARY": str(step)})
    assert result.exit_code == 1, result.output
    assert f"wrote {junit}, {md}, $GITHUB_STEP_SUMMARY" in result.stdout
    summary = md.read_text()
    assert step.read_text() == "earlier step\n" + summary  # appended, not replaced
    assert "[report](https://ci.example/runs/1)" in summary and "r.html" in summary
    assert (tmp_path / "r.html").read_text().startswith("<!DOCTYPE html>")
    suites = {s.name: s for s in JUnitXml.fromfile(str(junit))}
    assert {p.name: p.value for p in suites["vae gate"].properties()}["vae.report"].endswith(
        "r.html"
    )
    quiet = invoke(*args, "--no-step-summary", env={"GITHUB_STEP_SUMMARY": str(step)})
    assert quiet.exit_code == 1 and step.read_text().count("## ❌") == 1


def test_rescore_with_gate_options_gates_its_new_scoring(tmp_path: Path) -> None:
    db = tmp_path / "vae.db"
    scenarios, sessions = standard_sessions()
    write_run_sync(db, scenarios, sessions)
    base = ["rescore", "--run", "2024", "--db", str(db), "--no-judge"]
    junit = tmp_path / "j.xml"
    ok = invoke(*base, "--min-success", "0.3", "--junit-xml", str(junit), "--json")
    assert ok.exit_code == 0, ok.output
    doc = json.loads(ok.stdout)  # one document: the scoring, with the gate inside
    assert doc["gate"]["scoring_id"] == doc["scoring_id"] and doc["gate"]["status"] == "passed"
    assert junit.exists()
    missed = invoke(*base, "--min-success", "0.9")
    assert missed.exit_code == 1 and "below 90.0%" in missed.stdout
    assert "Scoring 2024" in missed.stdout  # the rescore's own summary comes first


def test_rescore_gate_conflicts_and_bad_baseline_exit_2_before_scoring(tmp_path: Path) -> None:
    db = tmp_path / "vae.db"
    standard(db)
    base = ["rescore", "--run", "2024", "--db", str(db), "--no-judge"]
    both = invoke(*base, "--allow-unscored", "--min-success", "0.5")
    assert both.exit_code == 2 and "--allow-unscored" in both.stderr
    from_env = invoke(*base, "--junit-xml", "j.xml", env={"VAE_ALLOW_UNSCORED": "1"})
    assert from_env.exit_code == 2 and "--max-unscored N" in from_env.stderr
    under = invoke(*base, "--fail-under", "0.5", "--min-success", "0.5")
    assert under.exit_code == 2 and "use --min-success RATE" in under.stderr
    bad = invoke(*base, "--baseline", "nope")
    assert bad.exit_code == 2 and "--baseline: no run matches 'nope'" in bad.stderr
    with RecordingReader(db) as reader:
        assert len(reader.scorings()) == 1  # nothing was scored by the refused calls


def test_a_judge_that_cannot_be_used_is_could_not_decide_not_failed(tmp_path: Path) -> None:
    db = tmp_path / "vae.db"
    judge_gated(db)
    junit, md = tmp_path / "j.xml", tmp_path / "s.md"
    with closed_port() as port:
        result = invoke(
            "rescore", "--run", "judged", "--db", str(db), "--min-success", "0.5",
            "--judge-base-url", f"http://127.0.0.1:{port}/v1", "--judge-model", "m",
            "--junit-xml", str(junit), "--summary-md", str(md),
        )  # fmt: skip
    assert result.exit_code == 3, result.output
    assert "cannot be used" in result.stderr
    assert "gate: could not decide (exit 3)" in result.stdout
    suites = {s.name: s for s in JUnitXml.fromfile(str(junit))}
    scored = next(c for c in suites["vae gate"] if c.name == "scored")
    (error,) = scored.result
    assert isinstance(error, Error) and "failed: JudgeUnusableError" in error.message
    assert md.read_text().startswith("## ⚠️ vae gate: could not decide (exit 3)")


def test_without_thresholds_every_scenario_must_end_as_built(tmp_path: Path) -> None:
    """Exit codes of the per-scenario rule: a failing scenario 1 (named), expected failures 0,
    an unexpected pass 1 whatever the thresholds; the same on `vae rescore` with gate options."""
    db = tmp_path / "vae.db"
    standard(db)
    failing = invoke("gate", "2024", "--db", str(db))
    assert failing.exit_code == 1, failing.output
    assert re.search(r"FAILED +scenarios +2 scenario\(s\) failed their gating signals: "
                     "book_wrong, db_case", failing.stdout)  # fmt: skip
    assert "  failed     book_wrong  ACTION_MATCH: " in failing.stdout
    assert "  failed     db_case  DB_STATE_MATCH: " in failing.stdout
    built_to_fail(db, "kept", tagged=("book_wrong", "db_case"))
    kept = invoke("gate", "kept", "--db", str(db), "--json")
    assert kept.exit_code == 0, kept.output
    doc = json.loads(kept.stdout)
    assert (doc["status"], doc["rule"]) == ("passed", "scenarios")
    assert (doc["counts"]["xfailed"], doc["counts"]["failed"]) == (2, 0)
    assert {c["name"]: c["outcome"] for c in doc["cases"]}["book_wrong"] == "xfailed"
    built_to_fail(db, "xpass", tagged=("book_ok", "book_wrong"), field=("db_case",))
    for extra in ([], ["--min-success", "0"], ["--max-unscored", "3"]):
        xpass = invoke("gate", "xpass", "--db", str(db), *extra)
        assert xpass.exit_code in (1, 3), (extra, xpass.output)
        assert re.search(r"FAILED +expect-fail +1 scenario\(s\) built to fail unexpectedly "
                         "passed: book_ok", xpass.stdout), extra  # fmt: skip
        assert "  XPASS      book_ok  unexpectedly passed: built to fail (expect-fail)" \
            in xpass.stdout  # fmt: skip
    # With --min-success nothing is left to rate (all three are built to fail): could not decide.
    assert invoke("gate", "xpass", "--db", str(db), "--min-success", "0").exit_code == 3
    assert invoke("gate", "xpass", "--db", str(db)).exit_code == 1
    # `vae rescore` with only a file option gates on the same rule.
    scenarios, sessions = standard_sessions()
    write_run_sync(db, scenarios, sessions, run_id="rescored")
    junit = tmp_path / "r.xml"
    rescored = invoke("rescore", "--run", "rescored", "--db", str(db), "--no-judge",
                      "--junit-xml", str(junit))  # fmt: skip
    assert rescored.exit_code == 1, rescored.output
    assert "2 scenario(s) failed their gating signals: book_wrong, db_case" in rescored.stdout
    (rule,) = next(c for s in JUnitXml.fromfile(str(junit)) for c in s
                   if c.name == "scenarios").result  # fmt: skip
    assert "book_wrong, db_case" in rule.message
