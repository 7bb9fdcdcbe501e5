"""The report's content and HTML on a scored synthetic run."""

from __future__ import annotations

import base64
import io
import re
from pathlib import Path

import pytest
import soundfile as sf

from recordings.export import stereo_mix
from recordings.reader import RecordingReader
from scorer_service.config import ScoringConfig
from scorer_service.report import render_html, report_data
from scorer_service.report.audio import session_audio_uri
from tests.factories import SessionSpec, Turn, scenario, write_run_sync
from tests.scorer_service.report.runs import make_run, score


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
    assert sessions["book_table"]["failing"] == []
    bad = sessions["change_flight"]
    assert bad["verdict"] == "failed"
    failing = {f["signal"]: f["reasons"] for f in bad["failing"]}
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
    assert "tool" in kinds and "barge_in" in kinds
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
    assert "<script" not in html and "<link" not in html
    assert not re.search(r'(src|href)="(https?:)?//', html), "nothing is fetched at view time"
    assert html.count("<audio") == 2 and html.count('class="timeline"') == 2
    assert 'class="chart success"' in html and 'class="chart signals"' in html


def test_a_run_without_scoring_still_reports_its_recordings(tmp_path: Path) -> None:
    db = tmp_path / "vae.db"
    run_id = make_run(db)
    with RecordingReader(db) as reader:
        data = report_data(reader, run_id, include_audio=False)
        html = render_html(reader, run_id)
    assert data["scoring"] is None
    assert {s["verdict"] for s in data["sessions"]} == {"not scored"}
    assert "no scoring yet" in html


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
