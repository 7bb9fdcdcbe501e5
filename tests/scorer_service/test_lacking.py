"""Rescoring an imported call: signals needing what a recording lacks are unscored."""

from __future__ import annotations

from pathlib import Path

from recordings.importers.calls import import_calls
from recordings.models import Verdict
from scorer_service.config import ScoringConfig
from scorer_service.rescore import rescore
from tests.recordings.calls_fixture import write_pair, write_sidecars


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
    assert scores["is_successful"].verdict is Verdict.UNSCORED
    assert scores["is_task_successful"].verdict is Verdict.UNSCORED
