"""``vae demo`` end to end on a smaller suite: bridge, bots, scorer, judge, report.

Everything runs for real, in-process: the bridge and the scorer serve gRPC on
loopback, the scripted bots speak paced audio, the stand-in judge answers over
HTTP through the ``openai`` client, and the report is written. The suite keeps
one scenario per failure the demo is built to show, plus passing ones, so that
every success signal gets real verdicts.
"""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from vae.bots.runner import BotConfig
from vae.bots.stand_in.openai_server import OpenAICompatibleServer
from vae.bridge.v1 import bridge_pb2
from vae.cli.demo import demo_run
from vae.cli.main import vae
from vae.recordings.read.reader import RecordingReader

SUITE = Path(__file__).resolve().parents[3] / "examples" / "suite"
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


def run_demo(db: Path, folder: Path, *extra: str) -> dict[str, object]:
    args = ["demo", "--db", str(db), "--suite", str(folder), "--concurrency", "8", "--json",
            *extra]  # fmt: skip
    result = CliRunner().invoke(vae, args)
    assert result.exit_code == 0, result.output
    # --json: exactly one JSON document on stdout (logs, if any, go to stderr).
    doc: dict[str, object] = json.loads(result.stdout)
    return doc


def test_demo_runs_scores_and_reports_a_mixed_scorecard(tmp_path: Path) -> None:
    db = tmp_path / "demo.db"
    doc = run_demo(db, suite(tmp_path, SMALL))
    # Five scenarios fail their signals on purpose: still a completed run and exit 0.
    assert doc["run_status"] == "completed" and doc["run_error"] == ""
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


def _demo(db: Path, folder: Path, *extra: str) -> Result:
    args = ["demo", "--db", str(db), "--suite", str(folder), "--tts", "buzz", "--json", *extra]
    return CliRunner().invoke(vae, args)


def test_a_run_that_did_not_complete_exits_1(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No agent bot ever joins: every session is cut off, and the demo must not read 0."""
    real_bots, real_options = demo_run.run_bots, demo_run.run_options

    async def user_only(config: BotConfig, stop: asyncio.Event) -> None:
        if config.role == "user":
            await real_bots(config, stop)

    def quick(concurrency: int, inactivity_s: float) -> bridge_pb2.RunOptions:
        options = real_options(concurrency, inactivity_s)
        options.pairing_timeout_s, options.max_auto_retries = 0.5, 0
        return options

    monkeypatch.setattr(demo_run, "run_bots", user_only)
    monkeypatch.setattr(demo_run, "run_options", quick)
    result = _demo(tmp_path / "demo.db", suite(tmp_path, ["restaurant_book_table"]))
    assert result.exit_code == 1, result.output
    doc = json.loads(result.stdout)
    assert doc["run_status"] == "failed" and "restaurant_book_table" in doc["run_error"]
    assert f"run {doc['run_id']} failed" in result.stderr
    assert [s["verdict"] for s in doc["sessions"]] == ["unscored"]


def test_a_completed_run_with_an_unscored_gating_signal_exits_1(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A judge answering garbage: JUDGE_PASSED is unscored; exit 1 unless --allow-unscored."""

    def garbage_judge() -> OpenAICompatibleServer:
        return OpenAICompatibleServer(lambda _request: {"content": "no verdict here"})

    monkeypatch.setattr(demo_run, "offline_judge_server", garbage_judge)
    folder = suite(tmp_path, ["restaurant_cancel_booking"])
    result = _demo(tmp_path / "demo.db", folder)
    assert result.exit_code == 1, result.output
    doc = json.loads(result.stdout)
    assert doc["run_status"] == "completed"
    assert [s["verdict"] for s in doc["sessions"]] == ["unscored"]
    assert "unscored gating signal" in result.stderr and "--allow-unscored" in result.stderr
    accepted = _demo(tmp_path / "demo.db", folder, "--allow-unscored")
    assert accepted.exit_code == 0, accepted.output
    assert "accepted: --allow-unscored" in accepted.stderr


@pytest.mark.parametrize(
    ("step", "expected"),
    [
        ("score_run", "interrupted while scoring run {run}"),
        ("write_report", "interrupted while writing the report of run {run}"),
    ],
)
def test_ctrl_c_after_the_run_finished_cancels_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, step: str, expected: str
) -> None:
    """The run is recorded ``completed``: the line names what to run, not a resume."""

    def interrupt(*_args: object) -> None:
        raise KeyboardInterrupt

    async def interrupt_async(*_args: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(demo_run, step, interrupt_async if step == "score_run" else interrupt)
    db = tmp_path / "demo.db"
    result = _demo(db, suite(tmp_path, ["restaurant_book_table"]))
    assert result.exit_code == 1, result.output
    with RecordingReader(db) as reader:
        (run,) = reader.list_runs()
    assert run.status == "completed"
    assert expected.format(run=run.run_id) in result.stderr
    assert "cancelled" not in result.stderr and "--resume" not in result.stderr


def test_the_whole_suite_names_the_mishearing_and_hears_everything_else(tmp_path: Path) -> None:
    """The example suite as ``vae demo`` runs it (its size and verdicts read from the files'
    tags): the scenario built to be misheard fails with the mishearing named first — in the
    demo's JSON, on the report's first screen, in ``vae scores show`` (text and JSON) — and
    every other scenario's agent heard its caller exactly (HEARD_CORRECTLY passed, WER 0)."""
    import yaml

    tags = {}
    for path in sorted(SUITE.glob("*.yaml")):
        doc = yaml.safe_load(path.read_text())
        tags[doc["name"]] = set(doc.get("tags", []))
    misheard = {name for name, t in tags.items() if "misheard" in t}
    assert misheard, "the suite has a scenario built to be misheard"
    db = tmp_path / "demo.db"
    # Audio on the virtual clock: the same audio and verdicts as on wall time
    # (tests/cli/demo/test_demo_tiers.py holds the two equal), in a fraction of it.
    doc = run_demo(db, SUITE, "--clock", "virtual")
    sessions = {s["scenario"]: s for s in doc["sessions"]}  # type: ignore[attr-defined]
    assert set(sessions) == set(tags)
    for name, t in tags.items():
        expected = "failed" if "expect-fail" in t else "passed"
        assert sessions[name]["verdict"] == expected, (name, sessions[name])
    heard_first = 'the agent heard "'
    for name in misheard:
        reason = sessions[name]["reason"]
        assert reason.startswith(heard_first) and "; ACTION_MATCH: " in reason, reason
    # The report's first screen: what failed and why, before any session's details.
    html = Path(str(doc["report"])).read_text()
    first_screen = html[: html.index('<details class="session"')]
    for name in misheard:
        shown = sessions[name]["reason"].replace('"', "&quot;")
        assert shown in first_screen
    # The CLI, as text and as JSON.
    scoring = str(doc["scoring_id"])
    shown = CliRunner().invoke(vae, ["scores", "show", scoring, "--db", str(db)])
    assert shown.exit_code == 0, shown.output
    for name in misheard:
        assert f"why: {sessions[name]['reason']}" in shown.output
    as_json = CliRunner().invoke(vae, ["scores", "show", scoring, "--db", str(db), "--json"])
    reasons = {s["scenario_name"]: s["reason"] for s in json.loads(as_json.stdout)["sessions"]}
    for name in misheard:
        assert reasons[name] == sessions[name]["reason"]
    with RecordingReader(db) as reader:
        heard = {
            reader.session(s.session_id).scenario_name: s  # type: ignore[union-attr]
            for s in reader.scores(scoring)
            if s.signal == "HEARD_CORRECTLY"
        }
    for name in set(tags) - misheard:
        assert (str(heard[name].verdict), heard[name].value) == ("passed", 1.0), (name, heard[name])
        assert heard[name].detail["wer"] == 0
    for name in misheard:
        assert str(heard[name].verdict) == "failed" and heard[name].detail["mismatches"]
