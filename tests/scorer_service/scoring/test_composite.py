"""CLEAN_EXIT by end policy, the composites, the stall rule and aggregation."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.factories import SessionSpec, scenario, write_run
from vae.recordings.models import ScoreRecord, SessionRecord, SessionStatus, Verdict
from vae.recordings.scenarios.parse import scenario_from_dict
from vae.scorer_service import signals
from vae.scorer_service.config import ScoringConfig
from vae.scorer_service.context import ScoringContext, TranscriptLine
from vae.scorer_service.ledger.aggregate import SessionOutcome, pass_hat_k, summarise
from vae.scorer_service.scorer import SignalScore
from vae.scorer_service.scorers.clean_exit import CleanExitScorer
from vae.scorer_service.scoring.composite import composites
from vae.scorer_service.scoring.rescore import rescore

P, F, NA, U = Verdict.PASSED, Verdict.FAILED, Verdict.NOT_APPLICABLE, Verdict.UNSCORED


def make_ctx(
    stop: str | None = "end_tool",
    policy: str = "tool-only",
    last: str | None = "agent",
    agent_turns: int = 3,
    min_turns: int = 0,
    gating: list[str] | None = None,
    user_turns: int = 0,
) -> ScoringContext:
    sc = scenario_from_dict(
        {"name": "s", "success_signals": gating or ["ACTION_MATCH", "JUDGE_PASSED", "CLEAN_EXIT"]}
    )
    session = SessionRecord(
        "sid",
        "run",
        "s",
        1,
        SessionStatus.ENDED,
        0,
        10**9,
        stop,
        user_turns=user_turns,
        agent_turns=agent_turns,
    )
    lines = [TranscriptLine(last, 1.0, "bye")] if last else []
    return ScoringContext(session, sc, "d", False, min_turns, policy, transcripts=lines)


CLEAN_CASES: list[tuple[str, str | None, str, str | None, Verdict]] = [
    ("end tool", "end_tool", "tool-only", "agent", P),
    ("enum spelling", "STOP_REASON_END_TOOL", "tool-only", "agent", P),
    ("established [EXIT]", "[EXIT]", "tool-only", "agent", P),
    ("hang-up under tool-only", "user_hang_up", "tool-only", "user", F),
    ("hang-up under valid-terminal-state", "user_hang_up", "valid-terminal-state", "user", P),
    (
        "timeout after the user's last words",
        "inactivity_timeout",
        "valid-terminal-state",
        "user",
        P,
    ),
    (
        "timeout after the agent's last words",
        "inactivity_timeout",
        "valid-terminal-state",
        "agent",
        F,
    ),
    ("max duration", "max_duration", "valid-terminal-state", "user", F),
    ("bot disconnected", "bot_disconnected", "tool-only", "agent", F),
    ("not ended", None, "tool-only", "agent", NA),
    ("cancelled: unfinished, not a verdict", "cancelled", "valid-terminal-state", "user", U),
    ("a peer never joined", "peer_never_joined", "tool-only", None, U),
]


@pytest.mark.parametrize(
    ("stop", "policy", "last", "expected"),
    [c[1:] for c in CLEAN_CASES],
    ids=[c[0] for c in CLEAN_CASES],
)
async def test_clean_exit(
    stop: str | None, policy: str, last: str | None, expected: Verdict
) -> None:
    [score] = await CleanExitScorer().score(make_ctx(stop, policy, last))
    assert score.verdict is expected
    assert score.detail["end_policy"] == policy


def s(signal: str, verdict: Verdict) -> SignalScore:
    return SignalScore(signal, verdict)


COMPOSITE_CASES: list[tuple[str, dict[str, Verdict], int, int, Verdict, Verdict]] = [
    ("all pass", {"ACTION_MATCH": P, "JUDGE_PASSED": P, "CLEAN_EXIT": P}, 3, 0, P, P),
    ("one fails", {"ACTION_MATCH": F, "JUDGE_PASSED": P, "CLEAN_EXIT": P}, 3, 0, F, F),
    ("only clean exit fails", {"ACTION_MATCH": P, "JUDGE_PASSED": P, "CLEAN_EXIT": F}, 3, 0, F, P),
    (
        "not applicable left out",
        {"ACTION_MATCH": NA, "JUDGE_PASSED": P, "CLEAN_EXIT": P},
        3,
        0,
        P,
        P,
    ),
    (
        "judge error is neither pass nor fail",
        {"ACTION_MATCH": P, "JUDGE_PASSED": U, "CLEAN_EXIT": P},
        3,
        0,
        U,
        U,
    ),
    (
        "a failure is decided beside a judge error",
        {"ACTION_MATCH": F, "JUDGE_PASSED": U, "CLEAN_EXIT": P},
        3,
        0,
        F,
        F,
    ),
    ("gating signal never scored", {"ACTION_MATCH": P, "CLEAN_EXIT": P}, 3, 0, U, U),
    ("nothing applies", {"ACTION_MATCH": NA, "JUDGE_PASSED": NA, "CLEAN_EXIT": NA}, 3, 0, NA, NA),
    ("only unscored", {"ACTION_MATCH": NA, "JUDGE_PASSED": U, "CLEAN_EXIT": NA}, 3, 0, U, U),
    (
        "task composite without clean exit",
        {"ACTION_MATCH": NA, "JUDGE_PASSED": NA, "CLEAN_EXIT": P},
        3,
        0,
        P,
        NA,
    ),
    (
        "stalled fails everything",
        {"ACTION_MATCH": P, "JUDGE_PASSED": P, "CLEAN_EXIT": P},
        1,
        3,
        F,
        F,
    ),
    ("enough turns", {"ACTION_MATCH": P, "JUDGE_PASSED": P, "CLEAN_EXIT": P}, 3, 3, P, P),
    (
        "non-gating signal ignored",
        {"ACTION_MATCH": P, "JUDGE_PASSED": P, "DB_STATE_MATCH": F, "CLEAN_EXIT": P},
        3,
        0,
        P,
        P,
    ),
]


@pytest.mark.parametrize(
    ("verdicts", "turns", "min_turns", "success", "task"),
    [c[1:] for c in COMPOSITE_CASES],
    ids=[c[0] for c in COMPOSITE_CASES],
)
def test_composites(
    verdicts: dict[str, Verdict], turns: int, min_turns: int, success: Verdict, task: Verdict
) -> None:
    ctx = make_ctx(agent_turns=turns, min_turns=min_turns)
    out = {c.signal: c for c in composites(ctx, [s(k, v) for k, v in verdicts.items()])}
    assert out[signals.IS_SUCCESSFUL].verdict is success
    assert out[signals.IS_TASK_SUCCESSFUL].verdict is task
    stalled = out[signals.STALLED].verdict
    assert stalled is (NA if min_turns == 0 else F if turns < min_turns else P)


def outcome(
    name: str, domain: str, verdicts: dict[str, Verdict], **values: float
) -> SessionOutcome:
    scores = [ScoreRecord("sc", name, k, v, values.get(k)) for k, v in verdicts.items()]
    return SessionOutcome(name, name, domain, 60.0, scores)


def test_summary_rates_domains_and_stalls() -> None:
    outcomes = [
        outcome(
            "a",
            "x",
            {"is_successful": P, "is_task_successful": P, "ACTION_MATCH": P, "JUDGE_PASSED": P},
            JUDGE_PASSED=1.0,
        ),
        outcome(
            "b",
            "x",
            {"is_successful": F, "is_task_successful": F, "ACTION_MATCH": F, "JUDGE_PASSED": U},
        ),
        outcome(
            "c",
            "y",
            {
                "is_successful": F,
                "is_task_successful": F,
                "ACTION_MATCH": P,
                "JUDGE_PASSED": P,
                "stalled": F,
            },
            JUDGE_PASSED=0.5,
        ),
        outcome("d", "y", {"is_successful": NA, "is_task_successful": NA, "ACTION_MATCH": NA}),
    ]
    summary: dict[str, Any] = summarise(outcomes)
    assert summary["success_rate"] == pytest.approx(1 / 3)
    assert summary["is_successful"]["not_applicable"] == 1
    # the stalled session is left out of per-signal rates
    assert summary["signals"]["ACTION_MATCH"]["passed"] == 1
    assert summary["signals"]["ACTION_MATCH"]["failed"] == 1
    assert summary["signals"]["JUDGE_PASSED"]["unscored"] == 1
    assert summary["judge_mean"] == pytest.approx(1.0)
    assert summary["stalled"] == ["c"]
    assert summary["domains"]["x"]["success_rate"] == pytest.approx(0.5)
    assert summary["domains"]["y"]["success_rate"] == 0.0
    assert summary["pass_hat_k"] == {}


def test_pass_hat_k() -> None:
    rows = [("t#1", P), ("t#2", P), ("t#3", F), ("u#1", P), ("u#2", P), ("u#3", P)]
    outcomes = [outcome(n, "d", {"is_successful": v}) for n, v in rows]
    got = pass_hat_k(outcomes)
    # t: c=2, n=3 -> pass^1 = 2/3, pass^2 = 1/3, pass^3 = 0 ; u: all 1
    assert got["1"] == pytest.approx((2 / 3 + 1) / 2)
    assert got["2"] == pytest.approx((1 / 3 + 1) / 2)
    assert got["3"] == pytest.approx(0.5)


@pytest.mark.parametrize("stop", ["cancelled", "shutdown", "peer_never_joined", "attempt_crashed"])
@pytest.mark.parametrize("verdict", [P, F])
def test_unfinished_attempt_is_never_decided(stop: str, verdict: Verdict) -> None:
    ctx = make_ctx(stop=stop)
    scores = [s(k, verdict) for k in ("ACTION_MATCH", "JUDGE_PASSED", "CLEAN_EXIT")]
    out = {c.signal: c for c in composites(ctx, scores)}
    for name in (signals.IS_SUCCESSFUL, signals.IS_TASK_SUCCESSFUL):
        assert out[name].verdict is U
        assert out[name].detail["causes"] == [f"unfinished: {stop}"]


@pytest.mark.parametrize("stop", ["cancelled", "shutdown", "peer_never_joined"])
@pytest.mark.parametrize("turns", [0, 1])
def test_unfinished_attempt_is_never_stalled(stop: str, turns: int) -> None:
    """Too few (or no) turns on a cut-off attempt say nothing about the agent."""
    ctx = make_ctx(stop=stop, agent_turns=turns, min_turns=3)
    scores = [s(k, P) for k in ("ACTION_MATCH", "JUDGE_PASSED", "CLEAN_EXIT")]
    out = {c.signal: c for c in composites(ctx, scores)}
    stall = out[signals.STALLED]
    assert stall.verdict is U
    assert stall.error == f"unfinished: {stop}"
    assert stall.detail["causes"] == [f"unfinished: {stop}"]
    records = [
        ScoreRecord("sc", "sid", c.signal, c.verdict, c.value, c.detail, c.error)
        for c in out.values()
    ]
    summary = summarise([SessionOutcome("sid", "s", "d", 1.0, records)])
    assert summary["stalled"] == []
    assert summary["is_successful"]["unscored"] == 1


@pytest.mark.parametrize(
    "stop", ["first_speaker_silent", "bot_error", "bot_disconnected", "end_tool", "max_duration"]
)
@pytest.mark.parametrize("gating", [["DB_STATE_MATCH"], ["DB_STATE_MATCH", "CLEAN_EXIT"]])
def test_finished_attempt_with_zero_turns_fails(stop: str, gating: list[str]) -> None:
    """0 turns: every signal left can only pass vacuously (expected DB == initial DB)."""
    ctx = make_ctx(stop=stop, agent_turns=0, user_turns=0, gating=gating, last=None)
    scores = [s("DB_STATE_MATCH", P), s("CLEAN_EXIT", P)]
    out = {c.signal: c for c in composites(ctx, scores)}
    for name in (signals.IS_SUCCESSFUL, signals.IS_TASK_SUCCESSFUL):
        assert out[name].verdict is F, name
        assert out[name].detail["reason"] == "0 conversation turns"
    assert out[signals.STALLED].verdict is F
    assert out[signals.STALLED].detail["reason"] == "0 conversation turns"
    records = [
        ScoreRecord("sc", "sid", c.signal, c.verdict, c.value, c.detail) for c in out.values()
    ]
    records.append(ScoreRecord("sc", "sid", "DB_STATE_MATCH", P))
    summary = summarise([SessionOutcome("sid", "s", "d", 1.0, records)])
    assert summary["success_rate"] == 0.0
    assert summary["task_success_rate"] == 0.0
    assert summary["stalled"] == ["s"]
    # left out of per-signal rates, like a stall: DB_STATE_MATCH did not pass on evidence
    assert summary["signals"]["DB_STATE_MATCH"]["passed"] == 0


def test_one_user_turn_is_not_zero_turns() -> None:
    ctx = make_ctx(agent_turns=0, user_turns=1, gating=["DB_STATE_MATCH"])
    out = {c.signal: c for c in composites(ctx, [s("DB_STATE_MATCH", P)])}
    assert out[signals.IS_SUCCESSFUL].verdict is P
    assert out[signals.STALLED].verdict is NA


def test_unscored_block_counts_causes() -> None:
    from vae.scorer_service.ledger.unscored import unscored_block, unscored_line

    ctx = make_ctx()
    judged = SignalScore("JUDGE_PASSED", U, None, {}, "judge_error: HTTP 500")
    done = composites(ctx, [s("ACTION_MATCH", P), judged, s("CLEAN_EXIT", P)])
    failing = composites(ctx, [s("ACTION_MATCH", F), judged, s("CLEAN_EXIT", P)])
    outcomes = [
        SessionOutcome(
            n,
            n,
            "d",
            1.0,
            [ScoreRecord("sc", n, c.signal, c.verdict, c.value, c.detail) for c in cs],
        )
        for n, cs in (("a", done), ("b", failing))
    ]
    block = unscored_block(outcomes)
    assert block == {"sessions": 1, "gating": 2, "causes": {"judge_error": 2}, "scenarios": ["a"]}
    line = unscored_line({"unscored": block})
    assert line.startswith("2 session(s) have an unscored gating signal (judge_error: 2)")
    assert summarise(outcomes)["success_rate"] == 0.0  # one decided session, failed


async def test_a_silent_first_speaker_never_passes_on_a_vacuous_db_match(tmp_path: Path) -> None:
    """Real store, real scorers: the agent never spoke and the DB was never touched."""
    db = tmp_path / "vae.db"
    doc = scenario(
        "silent",
        initial_state={"plan": "basic"},
        expected_scenario_db={"plan": "basic"},
        success_signals=["DB_STATE_MATCH"],
    )
    spec = SessionSpec("silent", agent_state={"plan": "basic"}, stop_reason="first_speaker_silent")
    run = await write_run(db, [doc], [spec])
    result = await rescore(db, run.run_id, ScoringConfig())
    [o] = result.sessions
    db_match = o.get(signals.DB_STATE_MATCH)
    assert db_match is not None and db_match.verdict is P  # vacuously: nothing happened
    for name in (signals.IS_SUCCESSFUL, signals.IS_TASK_SUCCESSFUL, signals.STALLED):
        score = o.get(name)
        assert score is not None and score.verdict is F, name
        assert score.detail["reason"] == "0 conversation turns"
    summary = result.scoring.summary
    assert summary["success_rate"] == 0.0
    assert summary["stalled"] == ["silent"]


@pytest.mark.parametrize("alias", ["[EXIT]", "[TIMEOUT]", "exit", "STOP_REASON_BOT_ERROR"])
async def test_clean_exit_reads_stop_reasons_through_the_one_table(alias: str) -> None:
    """CLEAN_EXIT keeps no spelling table of its own: vae.recordings.stop_reasons is the one."""
    from vae.recordings import stop_reasons
    from vae.scorer_service.scorers import clean_exit

    assert not hasattr(clean_exit, "_ALIASES")
    assert not hasattr(clean_exit, "normalise_stop_reason")
    [by_alias] = await CleanExitScorer().score(make_ctx(alias))
    [by_name] = await CleanExitScorer().score(make_ctx(stop_reasons.normalise(alias)))
    assert by_alias.verdict is by_name.verdict
