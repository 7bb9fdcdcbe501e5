"""The scorers a config selects, by name (what ``vae rescore --scorer-name`` lists)."""

from __future__ import annotations

from vae.scorer_service.config import ConfigError, ScoringConfig
from vae.scorer_service.judge.client import JudgeClient
from vae.scorer_service.scorer import Scorer
from vae.scorer_service.scorers.action_match import ActionMatchScorer
from vae.scorer_service.scorers.clean_exit import CleanExitScorer, TokenUsageScorer
from vae.scorer_service.scorers.db_assertion import DbStateAssertionScorer
from vae.scorer_service.scorers.db_state import DbStateMatchScorer
from vae.scorer_service.scorers.heard import HeardScorer
from vae.scorer_service.scorers.judge import JudgeScorer
from vae.scorer_service.scorers.keypad import KeypadScorer
from vae.scorer_service.scorers.timing import TimingScorer
from vae.scorer_service.scorers.tool_calls import ToolCallsScorer

SCORER_NAMES = (
    "action_match",
    "db_state_match",
    "db_state_assertion",
    "judge",
    "clean_exit",
    "timing",
    "tokens",
    "heard",
    "keypad",
    "tool_calls",
)


def build_scorers(config: ScoringConfig, judge: JudgeClient | None) -> list[Scorer]:
    """Instantiate the selected scorers (all when ``config.scorers`` is empty)."""
    wanted = list(config.scorers) or list(SCORER_NAMES)
    unknown = [n for n in wanted if n not in SCORER_NAMES]
    if unknown:
        raise ConfigError(f"unknown scorer {unknown[0]!r} (choose from {', '.join(SCORER_NAMES)})")
    try:
        timing = TimingScorer(config.timing) if "timing" in wanted else None
    except ValueError as exc:
        raise ConfigError(str(exc)) from exc
    made: dict[str, Scorer] = {
        "action_match": ActionMatchScorer(),
        "db_state_match": DbStateMatchScorer(),
        "db_state_assertion": DbStateAssertionScorer(),
        "judge": JudgeScorer(config.judge, judge, no_judge=config.no_judge),
        "clean_exit": CleanExitScorer(),
        "tokens": TokenUsageScorer(),
        "heard": HeardScorer(config.transcription.transcripts),
        "keypad": KeypadScorer(),
        "tool_calls": ToolCallsScorer(),
    }
    if timing is not None:
        made["timing"] = timing
    return [made[name] for name in SCORER_NAMES if name in wanted]
