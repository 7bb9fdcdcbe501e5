"""``vae demo`` end to end on a smaller suite: bridge, bots, scorer, judge, report.

Everything runs for real, in-process: the bridge and the scorer serve gRPC on
loopback, the scripted bots speak paced audio, the stand-in judge answers over
HTTP through the ``openai`` client, and the report is written. The suite keeps
one scenario per failure the demo is built to show, plus passing ones, so that
every success signal gets real verdicts.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from click.testing import CliRunner

from cli.main import vae
from recordings.reader import RecordingReader

SUITE = Path(__file__).resolve().parents[2] / "examples" / "suite"
SMALL = [
    "restaurant_book_table",  # passes: ACTION_MATCH, DB_STATE_MATCH, CLEAN_EXIT
    "restaurant_cancel_booking",  # passes: + DB_STATE_ASSERTION, JUDGE_PASSED
    "retail_order_status_noisy",  # passes over a noisy line: NL_ASSERTION, JUDGE_PASSED
    "airline_wrong_date",  # fails: wrong action
    "retail_exchange_db_mismatch",  # fails: DB mismatch
    "retail_refund_promise",  # fails: an NL assertion
    "restaurant_hang_up",  # fails: no clean exit
    "restaurant_stalled_agent",  # fails: a stalled agent
]
SIGNALS = {
    "ACTION_MATCH", "DB_STATE_MATCH", "DB_STATE_ASSERTION", "NL_ASSERTION", "JUDGE_PASSED",
    "CLEAN_EXIT",
}  # fmt: skip


def suite(tmp_path: Path, names: list[str]) -> Path:
    folder = tmp_path / f"suite-{len(names)}"
    folder.mkdir()
    for name in names:
        shutil.copy(SUITE / f"{name}.yaml", folder)
    return folder


def run_demo(db: Path, folder: Path) -> dict[str, object]:
    args = ["demo", "--db", str(db), "--suite", str(folder), "--concurrency", "8", "--json"]
    result = CliRunner().invoke(vae, args)
    assert result.exit_code == 0, result.output
    # --json: exactly one JSON document on stdout (logs, if any, go to stderr).
    doc: dict[str, object] = json.loads(result.stdout)
    return doc


def test_demo_runs_scores_and_reports_a_mixed_scorecard(tmp_path: Path) -> None:
    db = tmp_path / "demo.db"
    doc = run_demo(db, suite(tmp_path, SMALL))
    report = Path(str(doc["report"]))
    assert report.exists() and "<audio" in report.read_text()
    sessions = {s["scenario"]: s for s in doc["sessions"]}  # type: ignore[attr-defined]
    assert set(sessions) == set(SMALL)

    for name in ("restaurant_book_table", "restaurant_cancel_booking", "retail_order_status_noisy"):
        assert sessions[name]["verdict"] == "passed", sessions[name]
    expected_failures = {
        "airline_wrong_date": {"ACTION_MATCH", "JUDGE_PASSED"},
        "retail_exchange_db_mismatch": {"DB_STATE_MATCH"},
        "retail_refund_promise": {"NL_ASSERTION"},
        "restaurant_hang_up": {"CLEAN_EXIT"},
        "restaurant_stalled_agent": {"stalled", "ACTION_MATCH", "CLEAN_EXIT"},
    }
    for name, failing in expected_failures.items():
        assert sessions[name]["verdict"] == "failed"
        assert set(sessions[name]["failing"]) == failing, (name, sessions[name])
    assert sessions["restaurant_hang_up"]["stop_reason"] == "user_hang_up"
    assert sessions["restaurant_stalled_agent"]["stop_reason"] == "inactivity_timeout"

    with RecordingReader(db) as reader:
        (scoring,) = reader.scorings(str(doc["run_id"]))
        verdicts = {(s.signal, str(s.verdict)) for s in reader.scores(scoring.scoring_id)}
        judge_rows = [s for s in reader.scores(scoring.scoring_id) if s.signal == "NL_ASSERTION"]
    for signal in SIGNALS:
        assert (signal, "passed") in verdicts or (signal, "failed") in verdicts, signal
    assert scoring.judge_model == "vae-offline-judge"
    assert any(r.detail.get("verdicts") for r in judge_rows), "real verdicts from the judge"
    summary = doc["summary"]
    assert summary["success_rate"] == 3 / 8  # type: ignore[index]

    # Running it again keeps both runs (and both scorings).
    tiny = tmp_path / "tiny"
    tiny.mkdir()
    (tiny / "hello.yaml").write_text(
        "name: hello\nmax_duration: 20\nsuccess_signals: [CLEAN_EXIT]\n"
        "user: {script: [Hello.]}\nagent: {script: [Hi., {say: Bye., end: true}]}\n"
    )
    again = run_demo(db, tiny)
    assert again["run_id"] != doc["run_id"]
    # ...and compares the new run with the previous one, in the JSON and the report.
    baseline = again["baseline"]
    assert isinstance(baseline, dict) and baseline["run_a"] == doc["run_id"]
    changes = {s["scenario"]: s["change"] for s in baseline["scenarios"]}
    assert changes["hello"] == "only_b" and set(changes) == {"hello", *SMALL}
    assert "Against the baseline run" in Path(str(again["report"])).read_text()
    assert doc["baseline"] is None, "the first demo on a fresh database has nothing to compare"
    with RecordingReader(db) as reader:
        assert {r.run_id for r in reader.list_runs()} == {doc["run_id"], again["run_id"]}
        assert len(reader.scorings()) == 2


def test_a_broken_suite_is_refused_naming_the_file_and_field(tmp_path: Path) -> None:
    folder = tmp_path / "broken"
    folder.mkdir()
    (folder / "bad.yaml").write_text("name: bad\nmax_duration: -3\n")
    db = tmp_path / "demo.db"
    result = CliRunner().invoke(vae, ["demo", "--db", str(db), "--suite", str(folder)])
    assert result.exit_code == 2, result.output
    assert "bad.yaml" in result.output and "max_duration" in result.output
    with RecordingReader(db) as reader:
        assert reader.list_runs() == [], "nothing was started"
