"""The ledger: overrides, append vs overwrite, comparisons, bad input that writes nothing.

Every test here runs on both back ends: ``db_path`` is the ``store`` fixture
(an SQLite file, a PostgreSQL database), and the recorded run is written there.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from tests.factories import RunInfo
from vae.recordings.backends.connection import open_store_readonly
from vae.recordings.backends.locator import Locator
from vae.recordings.errors import RunNotFoundError, ScenarioError
from vae.recordings.models import Verdict
from vae.recordings.read.reader import RecordingReader
from vae.scorer_service import signals
from vae.scorer_service.config import ConfigError, ScoringConfig, load_overrides
from vae.scorer_service.ledger import scorings as ledger
from vae.scorer_service.scoring.rescore import RescoreError, rescore

NO_AUDIO = ["action_match", "db_state_match", "db_state_assertion", "clean_exit"]


@pytest.fixture
def db_path(store: Locator) -> Locator:
    return store


def recording_digest(db_path: Locator) -> str:
    """A hash of every recording table (everything but the scoring tables)."""
    conn = open_store_readonly(db_path)
    h = hashlib.sha256()
    for table in ("runs", "run_scenarios", "sessions", "audio_segments", "events", "final_states"):
        for row in conn.execute(f"SELECT * FROM {table} ORDER BY 1, 2").fetchall():
            h.update(repr(tuple(row)).encode())
    conn.close()
    return h.hexdigest()


def verdict(db_path: Locator, scoring_id: str, session_id: str, signal: str) -> Verdict:
    with RecordingReader(db_path) as reader:
        return next(s.verdict for s in reader.scores(scoring_id, session_id) if s.signal == signal)


async def test_overrides_change_only_the_new_scoring(
    db_path: Locator, recorded_run: RunInfo
) -> None:
    before = recording_digest(db_path)
    sid = recorded_run.session_ids["book_wrong"]
    first = await rescore(db_path, "2024", ScoringConfig(scorers=NO_AUDIO))
    assert verdict(db_path, first.scoring.scoring_id, sid, signals.ACTION_MATCH) is Verdict.FAILED
    fixed = ScoringConfig(
        scorers=NO_AUDIO,
        overrides={
            "book_wrong": {"reference_answer": {"name": "Bob", "party": 3}},
            "*": {"db_state_assertions": [{"path": "plan", "op": "eq", "value": "gold"}]},
        },
    )
    second = await rescore(db_path, "2024", fixed)
    assert verdict(db_path, second.scoring.scoring_id, sid, signals.ACTION_MATCH) is Verdict.PASSED
    db_sid = recorded_run.session_ids["db_case"]
    assert (
        verdict(db_path, second.scoring.scoring_id, db_sid, signals.DB_STATE_ASSERTION)
        is Verdict.PASSED
    )
    # the first scoring and the recording are untouched
    assert verdict(db_path, first.scoring.scoring_id, sid, signals.ACTION_MATCH) is Verdict.FAILED
    assert recording_digest(db_path) == before
    with RecordingReader(db_path) as reader:
        stored = reader.scoring(second.scoring.scoring_id)
        frozen = reader.run_scenarios(recorded_run.run_id)
    assert stored is not None and stored.config["overrides"]["book_wrong"]
    assert all(s.scenario.get("db_state_assertions") is None for s in frozen)


async def test_append_then_overwrite_supersedes_without_deleting(
    db_path: Locator, recorded_run: RunInfo
) -> None:
    a = await rescore(db_path, "2024", ScoringConfig(scorers=NO_AUDIO))
    b = await rescore(db_path, "2024", ScoringConfig(scorers=NO_AUDIO), mode="append")
    with RecordingReader(db_path) as reader:
        assert [s.superseded_by for s in reader.scorings(recorded_run.run_id)] == [None, None]
    c = await rescore(
        db_path, "2024", ScoringConfig(scorers=NO_AUDIO), mode="overwrite", make_current=True
    )
    with RecordingReader(db_path) as reader:
        rows = {s.scoring_id: s for s in reader.scorings(recorded_run.run_id)}
        assert rows[a.scoring.scoring_id].superseded_by == c.scoring.scoring_id
        assert rows[b.scoring.scoring_id].superseded_by == c.scoring.scoring_id
        assert rows[c.scoring.scoring_id].superseded_by is None
        assert reader.scores(a.scoring.scoring_id), "superseded scores are kept"
        current = ledger.current_scoring(reader, recorded_run.run_id)
        assert current is not None and current.scoring_id == c.scoring.scoring_id
        assert rows[c.scoring.scoring_id].mode == "overwrite"
        assert rows[c.scoring.scoring_id].status == "complete"


async def test_compare_shows_flips(db_path: Locator, recorded_run: RunInfo) -> None:
    a = await rescore(db_path, "2024", ScoringConfig(scorers=NO_AUDIO))
    config = ScoringConfig(
        scorers=NO_AUDIO,
        overrides={"book_wrong": {"reference_answer": {"name": "Bob", "party": 3}}},
    )
    b = await rescore(db_path, "2024", config)
    with RecordingReader(db_path) as reader:
        flips, summary = ledger.compare(
            reader, ledger.resolve_scoring(reader, a.scoring.scoring_id), b.scoring
        )
    changed = {(f.scenario_name, f.signal): (f.verdict_a, f.verdict_b) for f in flips}
    assert changed == {
        ("book_wrong", signals.ACTION_MATCH): (Verdict.FAILED, Verdict.PASSED),
        ("book_wrong", signals.IS_SUCCESSFUL): (Verdict.FAILED, Verdict.PASSED),
        ("book_wrong", signals.IS_TASK_SUCCESSFUL): (Verdict.FAILED, Verdict.PASSED),
    }
    assert summary["rates"]["success_rate"]["change"] == pytest.approx(1 / 3)


async def test_db_state_match_checks_the_user_side(db_path: Locator, recorded_run: RunInfo) -> None:
    result = await rescore(db_path, "2024", ScoringConfig(scorers=NO_AUDIO))
    sid = recorded_run.session_ids["db_case"]
    outcome = next(o for o in result.sessions if o.session_id == sid)
    score = outcome.get(signals.DB_STATE_MATCH)
    assert score is not None and score.verdict is Verdict.FAILED
    assert score.detail["sides"]["agent"]["match"] is True
    assert score.detail["sides"]["user"]["diff"] == [
        {"path": "roaming", "expected": True, "actual": False}
    ]


@pytest.mark.parametrize(
    ("overrides", "error", "match"),
    [
        ({"book_ok": {"reference": 1}}, ConfigError, "book_ok.reference: unknown override"),
        ({"book_ok": {"reference_answer": 5}}, ScenarioError, "reference_answer"),
        ({"nope": {"nl_assertions": ["x"]}}, ConfigError, "not in run"),
        ({"*": {"db_state_assertions": [{"path": "x"}]}}, ScenarioError, "db_state_assertions"),
        ({"*": ["not", "a", "mapping"]}, ConfigError, "expected a mapping"),
    ],
)
async def test_bad_overrides_write_nothing(
    db_path: Locator, recorded_run: RunInfo, overrides: dict[str, object], error: type, match: str
) -> None:
    with pytest.raises(error, match=match):
        await rescore(db_path, "2024", ScoringConfig(scorers=NO_AUDIO, overrides=overrides))  # type: ignore[arg-type]
    with RecordingReader(db_path) as reader:
        assert reader.scorings() == []


async def test_bad_references(db_path: Locator, recorded_run: RunInfo) -> None:
    with pytest.raises(RunNotFoundError):
        await rescore(db_path, "1999", ScoringConfig())
    with pytest.raises(RescoreError, match="no session"):
        await rescore(db_path, "2024", ScoringConfig(), session_ids=["nope"])
    with pytest.raises(ConfigError, match="unknown scorer"):
        await rescore(db_path, "2024", ScoringConfig(scorers=["vibes"]))
    with pytest.raises(ConfigError, match="mode"):
        await rescore(db_path, "2024", ScoringConfig(), mode="replace")
    with RecordingReader(db_path) as reader:
        assert reader.scorings() == []
        with pytest.raises(ledger.ScoringNotFoundError):
            ledger.resolve_scoring(reader, "zzz")


def test_overrides_file_errors(tmp_path: Path) -> None:
    good = tmp_path / "o.yaml"
    good.write_text("'*':\n  nl_assertions: [The agent was polite]\n")
    assert load_overrides(good) == {"*": {"nl_assertions": ["The agent was polite"]}}
    broken = tmp_path / "o.json"
    broken.write_text("{not json")
    with pytest.raises(ConfigError, match="not valid json"):
        load_overrides(broken)
    with pytest.raises(ConfigError, match="cannot read"):
        load_overrides(tmp_path / "missing.yaml")


async def test_stalled_session_fails_composites(db_path: Locator, recorded_run: RunInfo) -> None:
    result = await rescore(db_path, "2024", ScoringConfig(scorers=NO_AUDIO, min_agent_turns=3))
    db_case = next(o for o in result.sessions if o.scenario_name == "db_case")
    assert db_case.stalled  # 2 agent turns < 3
    assert result.scoring.summary["stalled"] == ["db_case"]
    assert result.scoring.summary["signals"]["DB_STATE_MATCH"]["failed"] == 0


async def test_a_crashing_scorer_loses_nothing_else(
    db_path: Locator, recorded_run: RunInfo, monkeypatch: pytest.MonkeyPatch
) -> None:
    from vae.scorer_service.scorers.action_match import ActionMatchScorer

    async def broken(self: ActionMatchScorer, ctx: object) -> list[object]:
        raise RuntimeError("bug in a scorer")

    monkeypatch.setattr(ActionMatchScorer, "score", broken)
    result = await rescore(db_path, "2024", ScoringConfig(scorers=NO_AUDIO))
    assert result.scoring.status == "complete"
    for outcome in result.sessions:
        crashed = outcome.get("scorer.action_match")
        assert crashed is not None and crashed.verdict is Verdict.UNSCORED
        assert "bug in a scorer" in crashed.error
        assert outcome.get(signals.CLEAN_EXIT) is not None
