"""Helpers of the failure-table test (tests/cli/test_honest_verdicts.py)."""

from __future__ import annotations

from vae.recordings.read.reader import RecordingReader

IMPORTED = "2024-06-01T10-22-33"
#: Every gating signal, so a judge signal that is not decided shows in the composite.
ALL_SIGNALS = {"*": {"success_signals": ["ACTION_MATCH", "NL_ASSERTION", "JUDGE_PASSED"]}}


def verdicts(reader: RecordingReader, scoring_id: str, signal: str) -> dict[str, str]:
    return {s.session_id: str(s.verdict) for s in reader.scores(scoring_id) if s.signal == signal}
