"""The report's content and HTML on a scored synthetic run."""

from __future__ import annotations

import base64
import io
import re
from pathlib import Path

import pytest
import soundfile as sf

from tests.factories import SessionSpec, Turn, conversation, scenario, write_run, write_run_sync
from tests.scorer_service.conftest import FakeJudge
from tests.scorer_service.report.runs import make_run, score
from vae.recordings.models import SessionRecord, SessionStatus
from vae.recordings.read.export import stereo_mix
from vae.recordings.read.reader import RecordingReader
from vae.recordings.write.writer import open_writer
from vae.scorer_service.config import JudgeSettings, ScoringConfig
from vae.scorer_service.judge.client import JudgeUnusableError
from vae.scorer_service.report import render_html, report_data
from vae.scorer_service.report.audio import session_audio_uri
from vae.scorer_service.report.html import render
from vae.scorer_service.scoring.rescore import rescore


@pytest.fixture
def scored(tmp_path: Path) -> tuple[Path, str, str]:
    db = tmp_path / "vae.db"
    run_id = make_run(db)
    return db, run_id, score(db, run_id)


def test_sessions_carry_verdicts_and_the_reasons_of_failing_signals(
    scored: tuple[Path, str, str],
) -> None:
    db, run_id, scoring_id = scored
    with RecordingReader(db) as reader:
        data = report_data(reader, run_id[:10])  # a unique prefix works
    assert data["run"]["run_id"] == run_id
    assert data["scoring"]["scoring_id"] == scoring_id
    sessions = {s["scenario_name"]: s for s in data["sessions"]}
    assert sessions["book_table"]["verdict"] == "passed"
    # Scored with no judge: JUDGE_PASSED is not gating here, and unscored (not checked).
    (judge,) = sessions["book_table"]["failing"]
    assert judge["signal"] == "JUDGE_PASSED" and judge["verdict"] == "unscored"
    assert not judge["gating"] and "no_judge" in judge["reasons"][0]
    bad = sessions["change_flight"]
    assert bad["verdict"] == "failed"
    failing = {f["signal"]: f["reasons"] for f in bad["failing"] if f["gating"]}
    assert set(failing) == {"ACTION_MATCH", "DB_STATE_MATCH", "CLEAN_EXIT"}
    assert any("friday" in r for r in failing["ACTION_MATCH"])
    assert any("bookings.B1.date" in r and "saturday" in r for r in failing["DB_STATE_MATCH"])
    assert "stop reason: user_hang_up" in failing["CLEAN_EXIT"]
    assert data["summary"]["success_rate"] == 0.5


def test_timeline_data_marks_tool_calls_and_the_barge_in(scored: tuple[Path, str, str]) -> None:
    db, run_id, _ = scored
    with RecordingReader(db) as reader:
        data = report_data(reader, run_id)
    bad = next(s for s in data["sessions"] if s["scenario_name"] == "change_flight")
    kinds = [m["kind"] for m in bad["markers"]]
    assert "barge_in" in kinds and "end" in kinds
    (tool,) = bad["tools"]
    assert tool == {"t_s": 7.5, "side": "agent", "name": "change_flight",
                    "arguments": {"date": "saturday"}, "result": None, "error": "",
                    "kind": "write"}  # fmt: skip
    barge = next(m for m in bad["markers"] if m["kind"] == "barge_in")
    assert barge["t_s"] == pytest.approx(6.0, abs=0.05)
    agent_spans = bad["spans"]["agent"]
    assert agent_spans[0][0] == pytest.approx(0.5, abs=0.03)
    assert [t["side"] for t in bad["transcript"]][:2] == ["agent", "user"]


def test_the_audio_player_holds_the_stereo_recording(scored: tuple[Path, str, str]) -> None:
    db, run_id, _ = scored
    with RecordingReader(db) as reader:
        data = report_data(reader, run_id)
        bad = next(s for s in data["sessions"] if s["scenario_name"] == "change_flight")
        mix, mix_rate = stereo_mix(reader, bad["session_id"])
    mime, payload = re.fullmatch(r"data:(audio/\w+);base64,(.+)", bad["audio"]).groups()  # type: ignore[union-attr]
    samples, rate = sf.read(io.BytesIO(base64.b64decode(payload)))
    assert mime in ("audio/ogg", "audio/flac")
    assert samples.ndim == 2 and samples.shape[1] == 2 and rate == 16000
    assert len(samples) / rate == pytest.approx(len(mix) / mix_rate, abs=0.05)
    # user left, agent right: at 1 s only the agent speaks.
    at = int(1.0 * rate)
    assert abs(samples[at - 200 : at + 200, 1]).max() > 0.1
    assert abs(samples[at - 200 : at + 200, 0]).max() < 0.02


def test_a_second_scoring_can_be_compared(scored: tuple[Path, str, str]) -> None:
    db, run_id, first = scored
    fixed = ScoringConfig(
        overrides={"change_flight": {"reference_answer": {"tool": "change_flight"}}}
    )
    second = score(db, run_id, fixed)
    with RecordingReader(db) as reader:
        data = report_data(reader, run_id, second, first)
        html = render_html(reader, run_id, second, first)
    flips = data["compare"]["flips"]
    assert {(f["scenario_name"], f["signal"], f["a"], f["b"]) for f in flips} >= {
        ("change_flight", "ACTION_MATCH", "failed", "passed")
    }
    assert 'class="diff"' in html and "ACTION_MATCH" in html


def test_html_is_self_contained(scored: tuple[Path, str, str]) -> None:
    db, run_id, _ = scored
    with RecordingReader(db) as reader:
        html = render_html(reader, run_id)
    assert html.startswith("<!DOCTYPE html>")
    assert "<link" not in html and "<script src" not in html
    assert html.count("<script") == 2, "the data block and the inline script only"
    assert not re.search(r'(src|href)="(https?:)?//', html), "nothing is fetched at view time"
    assert html.count("<audio") == 2 and html.count('class="timeline"') == 2
    # the failing session comes first, and the metadata last
    assert html.index("change_flight") < html.index("book_table")
    assert html.index('id="sessions"') < html.index('id="metadata"')
    assert 'class="chart success"' in html and 'class="chart signals"' in html


def test_a_run_without_scoring_still_reports_its_recordings(tmp_path: Path) -> None:
    db = tmp_path / "vae.db"
    run_id = make_run(db)
    with RecordingReader(db) as reader:
        data = report_data(reader, run_id, include_audio=False)
        html = render_html(reader, run_id)
    assert data["scoring"] is None
    assert {s["verdict"] for s in data["sessions"]} == {"not scored"}
    assert "no scoring yet" in html and "Nothing failed" not in html


def test_a_high_rate_recording_is_downsampled_for_the_player(tmp_path: Path) -> None:
    db = tmp_path / "vae.db"
    spec = SessionSpec("hi", turns=[Turn("agent", 0.5, 2.5, "Hello.")], sample_rate=22050)
    run_id = write_run_sync(db, [scenario("hi")], [spec]).run_id
    with RecordingReader(db) as reader:
        sid = reader.sessions(run_id)[0].session_id
        uri = session_audio_uri(reader, sid)
        mix, rate = stereo_mix(reader, sid)
    samples, player_rate = sf.read(io.BytesIO(base64.b64decode(uri.split(",", 1)[1])))
    assert rate == 22050 and player_rate == 16000
    assert len(samples) / player_rate == pytest.approx(len(mix) / rate, abs=0.02)
    assert abs(samples[int(1.5 * player_rate) :, 1][:800]).max() > 0.1  # the agent, right


def test_failing_sessions_come_first_with_a_one_line_reason(scored: tuple[Path, str, str]) -> None:
    db, run_id, _ = scored
    with RecordingReader(db) as reader:
        data = report_data(reader, run_id, include_audio=False)
    first, second = data["sessions"]
    assert (first["scenario_name"], first["verdict"]) == ("change_flight", "failed")
    assert first["reason"].startswith("ACTION_MATCH: ") and "saturday" in first["reason"]
    assert second["reason"] == ""
    assert first["failing_signals"] == ["ACTION_MATCH", "CLEAN_EXIT", "DB_STATE_MATCH"]


def test_db_diff_turn_latencies_and_waveforms(scored: tuple[Path, str, str]) -> None:
    db, run_id, _ = scored
    with RecordingReader(db) as reader:
        data = report_data(reader, run_id, include_audio=False)
    bad = next(s for s in data["sessions"] if s["scenario_name"] == "change_flight")
    (agent_db,) = bad["db"]
    assert agent_db["side"] == "agent" and agent_db["match"] is False
    assert agent_db["diff"] == [
        {"path": "bookings.B1.date", "expected": "friday", "actual": "saturday"}
    ]
    assert agent_db["actual"] == {"bookings": {"B1": {"date": "saturday"}}}
    first = bad["turns"][0]
    assert (first["user_end_s"], first["agent_start_s"]) == pytest.approx((4.0, 4.6), abs=0.05)
    assert first["latency_s"] == pytest.approx(0.6, abs=0.05)
    waves = bad["waveform"]
    assert set(waves) == {"user", "agent"} and len(waves["agent"]) == 360
    at_1s = int(1.0 / bad["end_s"] * 360)  # only the agent speaks at 1 s
    assert waves["agent"][at_1s] > 0.1 and waves["user"][at_1s] < 0.02


def test_bot_component_timings_sit_beside_the_measured_latency(tmp_path: Path) -> None:
    db = tmp_path / "vae.db"
    turns = [Turn("agent", 0.5, 1.5, "Hi."), Turn("user", 2.0, 3.0, "Book."),
             Turn("agent", 3.8, 5.0, "Done.")]  # fmt: skip
    metrics = [(3.7, "agent", "ttfb", 120.0, "ms", "stt"),
               (3.7, "agent", "llm_latency", 0.41, "s", "llm"),
               (3.75, "agent", "ttfb", 0.09, "s", "tts")]  # fmt: skip
    spec = SessionSpec("m", turns=turns, metrics=metrics)
    run_id = write_run_sync(db, [scenario("m")], [spec]).run_id
    score(db, run_id)
    with RecordingReader(db) as reader:
        (s,) = report_data(reader, run_id, include_audio=False)["sessions"]
    (turn,) = s["turns"]
    assert turn["latency_s"] == pytest.approx(0.8, abs=0.05)
    assert turn["components"] == {"stt ttfb": 0.12, "llm llm_latency": 0.41, "tts ttfb": 0.09}


def test_nl_assertions_carry_verdicts_and_reasons(tmp_path: Path) -> None:
    from vae.recordings.models import ScoreRecord, Verdict
    from vae.scorer_service.ledger.aggregate import SessionOutcome
    from vae.scorer_service.report.session_data import assertions

    nl = ScoreRecord("x", "s", "NL_ASSERTION", Verdict.FAILED, 0.5, {"verdicts": [
        {"index": 0, "assertion": "Confirms the date", "passed": False, "reason": "said Saturday"},
        {"index": 1, "assertion": "Is polite", "passed": True, "reason": "thanked"}]})  # fmt: skip
    rows = assertions(SessionOutcome("s", "n", "d", 1.0, [nl]))
    assert [(r["assertion"], r["verdict"], r["reason"]) for r in rows] == [
        ("Confirms the date", "failed", "said Saturday"),
        ("Is polite", "passed", "thanked"),
    ]


def test_audio_can_be_kept_as_files_beside_the_html(scored: tuple[Path, str, str]) -> None:
    db, run_id, _ = scored
    folder = db.parent / "report_audio"
    with RecordingReader(db) as reader:
        data = report_data(reader, run_id, audio_dir=folder)
    for s in data["sessions"]:
        assert s["audio"].startswith("report_audio/")
        assert (db.parent / s["audio"]).stat().st_size > 1000
    assert "data:audio" not in render(data)


def test_repeated_trials_show_pass_hat_k_in_the_report(tmp_path: Path) -> None:
    from tests.factories import ToolCallSpec, conversation

    db = tmp_path / "vae.db"
    doc = scenario("t", reference_answer={"tool": "book", "name": "Ann"},
                   success_signals=["ACTION_MATCH"])  # fmt: skip
    specs = [SessionSpec(f"t#{k}", turns=conversation(1), tool_calls=[
        ToolCallSpec("book", {"name": "Ann" if k != 3 else "Bob"}, at_s=1.0)])
        for k in (1, 2, 3)]  # fmt: skip
    run_id = write_run_sync(db, [{**doc, "name": f"t#{k}"} for k in (1, 2, 3)], specs).run_id
    score(db, run_id)
    with RecordingReader(db) as reader:
        html = render_html(reader, run_id)
    table = html[html.index('<table class="trials">') :]
    table = table[: table.index("</table>")]
    # c=2, n=3: pass^1 66.7% pass@1 66.7%; pass^2 33.3% pass@2 100%; pass^3 0% pass@3 100%
    assert "<td>t</td><td class=num>2/3</td>" in table
    assert "66.7% / 66.7%</td><td class=num>33.3% / 100.0%</td><td class=num>0.0% / 100.0%" in table
    assert "pass^3 / pass@3" in html[html.index('id="scorecard"') :]


async def _run_with_a_session_that_never_ended(db: Path) -> str:
    """``ok`` passes; ``hung`` started and never ended (its bridge stopped)."""
    docs = [scenario("ok"), scenario("hung")]
    run = await write_run(db, docs, [SessionSpec("ok", turns=conversation(2))])
    async with open_writer(db) as writer:
        await writer.start_session(
            SessionRecord(f"{run.run_id}/hung/1", run.run_id, "hung", 1, SessionStatus.RUNNING, 1)
        )
        await writer.flush()
    return run.run_id


async def test_a_session_that_never_ended_is_unscored_in_the_headline_and_the_list(
    tmp_path: Path,
) -> None:
    db = tmp_path / "vae.db"
    run_id = await _run_with_a_session_that_never_ended(db)
    result = await rescore(db, run_id, ScoringConfig())
    assert result.scoring.summary["is_successful"]["unscored"] == 0  # only "ok" was scored
    assert result.scoring.summary["unscored"]["sessions"] == 1
    with RecordingReader(db) as reader:
        data = report_data(reader, run_id, include_audio=False)
        html = render(data)
    hung = next(s for s in data["sessions"] if s["scenario_name"] == "hung")
    assert (hung["verdict"], hung["reason"]) == ("unscored", "unfinished: never ended")
    assert '<span class="unscored-count">1 unscored</span>' in html
    assert "unfinished: never ended: 1" in html
    assert "Nothing failed" not in html
    failing = html[html.index("<h2>What failed") : html.index("</ol>")]
    assert "hung" in failing and "unfinished: never ended" in failing and "ok<" not in failing


async def test_a_scoring_without_an_unscored_block_reads_its_counts(tmp_path: Path) -> None:
    """A NeMo-original scoring's summary has no ``unscored`` block: counts and reasons."""
    db = tmp_path / "vae.db"
    run_id = await _run_with_a_session_that_never_ended(db)
    await rescore(db, run_id, ScoringConfig())
    with RecordingReader(db) as reader:
        data = report_data(reader, run_id, include_audio=False)
    data["summary"].pop("unscored")
    html = render(data)
    assert '<span class="unscored-count">1 unscored</span>' in html
    assert "1× unfinished: never ended" in html and "Nothing failed" not in html


async def test_a_failed_scoring_says_so_in_the_subtitle(
    tmp_path: Path, fake_judge: FakeJudge
) -> None:
    db = tmp_path / "vae.db"
    docs = [scenario("qa", nl_assertions=["The agent greeted the caller"])]
    run = await write_run(db, docs, [SessionSpec("qa", turns=conversation(2))])
    fake_judge.default = "401"
    judge = JudgeSettings(base_url=fake_judge.base_url, model="m", backoff_s=0.01)
    with pytest.raises(JudgeUnusableError):
        await rescore(db, run.run_id, ScoringConfig(judge=judge))
    with RecordingReader(db) as reader:
        (failed,) = reader.scorings()
        data = report_data(reader, run.run_id, failed.scoring_id, include_audio=False)
    html = render(data)
    sub = html[html.index('<div class="sub">') :]
    sub = sub[: sub.index("</div>")]
    assert '<span class="scoring-status">scoring failed: ' in sub and "HTTP 401" in sub
    assert {s["verdict"] for s in data["sessions"]} == {"unscored"}
    assert "Nothing failed" not in html


async def test_a_nemo_original_scoring_counts_the_attempts_it_holds_no_verdict_for(
    tmp_path: Path,
) -> None:
    """The imported scoring has no ``unscored`` block; its crashed attempts are not passes."""
    from tests.interop import nemo_fixture as fx
    from vae.recordings.importers import import_nemo

    db = tmp_path / "vae.db"
    imported = await import_nemo(db, fx.build(tmp_path / "src"))
    with RecordingReader(db) as reader:
        data = report_data(reader, imported.run_id, imported.scoring_id, include_audio=False)
    assert "unscored" not in data["summary"]
    crashed = next(s for s in data["sessions"] if s["scenario_name"] == fx.CRASHED)
    assert (crashed["verdict"], crashed["reason"]) == ("unscored", "unfinished: attempt_crashed")
    html = render(data)
    unscored = sum(1 for s in data["sessions"] if s["verdict"] == "unscored")
    assert unscored >= 1
    assert f'<span class="unscored-count">{unscored} unscored</span>' in html
    failing = html[html.index("<h2>What failed") : html.index("</ol>")]
    assert fx.CRASHED in failing and "unfinished: attempt_crashed" in failing
