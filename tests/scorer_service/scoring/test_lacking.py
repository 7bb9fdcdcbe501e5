"""Rescoring an imported call: signals needing what a recording lacks are unscored."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.recordings.calls_fixture import scenario_doc, write_pair, write_sidecars
from tests.scorer_service.conftest import FakeJudge
from vae.recordings.importers.calls import import_calls
from vae.recordings.models import Verdict
from vae.recordings.read.reader import RecordingReader
from vae.recordings.stop_reasons import is_finished
from vae.scorer_service.config import JudgeSettings, ScoringConfig
from vae.scorer_service.scoring.rescore import rescore


async def test_imported_call_signals_are_unscored_never_passed(
    tmp_path: Path, db_path: Path
) -> None:
    write_pair(tmp_path, "call")
    write_sidecars(tmp_path, "call")
    report = await import_calls(db_path, [tmp_path], run_id="calls")
    # The sidecar scenario has an NL assertion: no judge here, on purpose.
    result = await rescore(db_path, report.run_id, ScoringConfig(no_judge=True))
    scores = {s.signal: s for s in result.sessions[0].scores}
    for signal, lacking in (
        ("ACTION_MATCH", "tool_calls"),
        ("DB_STATE_MATCH", "final_state"),
        ("CLEAN_EXIT", "end_reason"),
    ):
        assert scores[signal].verdict is Verdict.UNSCORED, signal
        assert scores[signal].detail["lacks"] == lacking
        assert lacking.replace("_", " ") in scores[signal].error
    # Without it, ACTION_MATCH would have been a failure that says nothing about the agent.
    assert scores["ACTION_MATCH"].detail["verdict_without_it"] == "failed"
    # How the call ended is not recorded: CLEAN_EXIT is unscored for that, never failed.
    assert scores["CLEAN_EXIT"].detail["verdict_without_it"] == "failed"
    assert scores["is_successful"].verdict is Verdict.UNSCORED
    assert scores["is_task_successful"].verdict is Verdict.UNSCORED
    # Unscored because the recording lacks what the gating signals need, not because
    # the call reads unfinished: an imported call ran to its end.
    for composite in ("is_successful", "is_task_successful"):
        causes = scores[composite].detail["causes"]
        assert causes and all(c.startswith("the recording has no") for c in causes), causes
    with RecordingReader(db_path) as reader:
        (session,) = reader.sessions(report.run_id)
    assert session.stop_reason == "recording_ended" and is_finished(session.stop_reason)


@pytest.mark.parametrize(("judge_says", "expected"), [("good", "passed"), ("fail", "failed")])
async def test_an_imported_call_gated_on_what_it_has_is_decided(
    tmp_path: Path, db_path: Path, fake_judge: FakeJudge, judge_says: str, expected: str
) -> None:
    """Gated on the NL assertion, judged from the transcript: passed or failed like any run."""
    write_pair(tmp_path, "call")
    write_sidecars(tmp_path, "call")
    doc = {**scenario_doc(), "success_signals": ["NL_ASSERTION"]}
    (tmp_path / "call.scenario.json").write_text(json.dumps(doc))
    report = await import_calls(db_path, [tmp_path], run_id="calls")
    fake_judge.default = judge_says
    judge = JudgeSettings(
        base_url=fake_judge.base_url,
        model="judge-small",
        api_key="sk-test",
        backoff_s=0.01,
        timeout_s=5.0,
        include_conversation=True,
    )
    result = await rescore(db_path, report.run_id, ScoringConfig(judge=judge))
    scores = {s.signal: s for s in result.sessions[0].scores}
    assert scores["NL_ASSERTION"].verdict is Verdict(expected)
    assert scores["is_successful"].verdict is Verdict(expected)
    assert scores["CLEAN_EXIT"].verdict is Verdict.UNSCORED  # still never guessed
