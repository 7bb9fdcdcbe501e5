"""Two rules of a rescore: ``--no-judge`` leaves judge signals unscored (never
``not_applicable``), and a subset rescore never becomes the run's current scoring
unless ``make_current``.

Both tests failed on the code before the rules (a non-gating JUDGE_PASSED read
``not_applicable``; a ``--session`` rescore became current because it was newest).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.factories import RunInfo
from vae.recordings.models import Verdict
from vae.recordings.read.reader import RecordingReader
from vae.scorer_service import signals
from vae.scorer_service.config import ConfigError, ScoringConfig
from vae.scorer_service.ledger import scorings as ledger
from vae.scorer_service.scoring.rescore import rescore

NO_AUDIO = ["action_match", "db_state_match", "db_state_assertion", "judge", "clean_exit"]


def by_scenario(db_path: Path, scoring_id: str, signal: str) -> dict[str, tuple[Verdict, str]]:
    with RecordingReader(db_path) as reader:
        names = {s.session_id: s.scenario_name for s in reader.sessions("2024-06-01T10-00-00")}
        return {
            names[s.session_id]: (s.verdict, s.error)
            for s in reader.scores(scoring_id)
            if s.signal == signal
        }


async def test_no_judge_leaves_a_non_gating_judge_signal_unscored(
    db_path: Path, recorded_run: RunInfo
) -> None:
    result = await rescore(db_path, "2024", ScoringConfig(no_judge=True))
    judge = by_scenario(db_path, result.scoring.scoring_id, signals.JUDGE_PASSED)
    # No scenario of the run gates on JUDGE_PASSED: it is still "not checked", not
    # "nothing to check".
    assert {name: v for name, (v, _) in judge.items()} == {
        "book_ok": Verdict.UNSCORED,
        "book_wrong": Verdict.UNSCORED,
        "db_case": Verdict.UNSCORED,
    }
    assert all(error.startswith("no_judge:") for _, error in judge.values())
    nl = by_scenario(db_path, result.scoring.scoring_id, signals.NL_ASSERTION)
    assert nl["book_ok"][0] is Verdict.UNSCORED and nl["book_ok"][1].startswith("no_judge:")
    # Nothing to check: the scenario has no NL assertions.
    assert nl["book_wrong"][0] is Verdict.NOT_APPLICABLE
    # A non-gating unscored signal leaves the composite decided.
    success = by_scenario(db_path, result.scoring.scoring_id, signals.IS_SUCCESSFUL)
    assert success["book_wrong"][0] is Verdict.FAILED
    assert success["db_case"][0] is Verdict.FAILED


async def test_a_subset_rescore_never_becomes_current_unless_asked(
    db_path: Path, recorded_run: RunInfo
) -> None:
    full = await rescore(db_path, "2024", ScoringConfig(no_judge=True))
    sid = recorded_run.session_ids["book_wrong"]
    one = await rescore(db_path, "2024", ScoringConfig(no_judge=True), session_ids=[sid])
    only = await rescore(db_path, "2024", ScoringConfig(scorers=NO_AUDIO, no_judge=True))
    with RecordingReader(db_path) as reader:
        current = ledger.current_scoring(reader, recorded_run.run_id)
        assert current is not None and current.scoring_id == full.scoring.scoring_id
        stored = reader.scoring(one.scoring.scoring_id)
    assert stored is not None and stored.status == "complete"
    assert stored.summary["scope"] == {
        "subset": True,
        "sessions": [sid],
        "scorers_left_out": [],
        "current": False,
    }
    assert only.scoring.summary["scope"]["scorers_left_out"] == [
        "heard",
        "keypad",
        "timing",
        "tokens",
        "tool_calls",
    ]
    # Overwrite would supersede the complete scoring: refused, nothing written.
    with pytest.raises(ConfigError, match="--make-current"):
        await rescore(db_path, "2024", ScoringConfig(no_judge=True), session_ids=[sid],
                      mode="overwrite")  # fmt: skip
    with RecordingReader(db_path) as reader:
        assert len(reader.scorings()) == 3
    made = await rescore(
        db_path, "2024", ScoringConfig(no_judge=True), session_ids=[sid], make_current=True
    )
    with RecordingReader(db_path) as reader:
        current = ledger.current_scoring(reader, recorded_run.run_id)
    assert current is not None and current.scoring_id == made.scoring.scoring_id
    # Every scorer and every session is no subset, whatever the flags.
    again = await rescore(db_path, "2024", ScoringConfig(no_judge=True))
    assert again.scoring.summary["scope"]["subset"] is False
