"""The LLM judge through the real ``openai`` client against a loopback server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.factories import SessionSpec, ToolCallSpec, conversation, scenario, write_run
from tests.scorer_service.conftest import FakeJudge
from vae.recordings.models import Verdict
from vae.recordings.read.reader import RecordingReader
from vae.scorer_service import signals
from vae.scorer_service.config import JudgeSettings, ScoringConfig
from vae.scorer_service.judge.client import JudgeUnusableError
from vae.scorer_service.judge.prompt import JudgeOutputError, parse_verdict, prompt_hash
from vae.scorer_service.ledger.scorings import current_scoring
from vae.scorer_service.scoring.rescore import RescoreResult, rescore


def judge_config(judge: FakeJudge, **settings: Any) -> ScoringConfig:
    base: dict[str, Any] = dict(
        base_url=judge.base_url,
        model="judge-small",
        api_key="sk-secret",
        temperature=0.0,
        seed=7,
        max_tokens=300,
        backoff_s=0.01,
        timeout_s=5.0,
    )
    base.update(settings)
    return ScoringConfig(scorers=["judge", "clean_exit"], judge=JudgeSettings(**base))


async def qa_run(db_path: Path, n: int = 1) -> None:
    scenarios = [
        scenario(
            f"qa{i}",
            domain="qa",
            nl_assertions=["The agent answered", "The agent was polite"],
            success_signals=["JUDGE_PASSED", "NL_ASSERTION"],
        )
        for i in range(n)
    ]
    sessions = [
        SessionSpec(f"qa{i}", turns=conversation(2), tool_calls=[ToolCallSpec("answer", {"a": i})])
        for i in range(n)
    ]
    await write_run(db_path, scenarios, sessions)


def by_signal(result: RescoreResult, index: int = 0) -> dict[str, Any]:
    return {s.signal: s for s in result.sessions[index].scores}


async def test_good_verdict(db_path: Path, fake_judge: FakeJudge) -> None:
    await qa_run(db_path)
    result = await rescore(db_path, "2024", judge_config(fake_judge))
    got = by_signal(result)
    assert got[signals.JUDGE_PASSED].verdict is Verdict.PASSED
    assert got[signals.JUDGE_PASSED].value == pytest.approx(0.95)
    nl = got[signals.NL_ASSERTION]
    assert nl.verdict is Verdict.PASSED and nl.value == 1.0
    assert [v["assertion"] for v in nl.detail["verdicts"]] == [
        "The agent answered",
        "The agent was polite",
    ]
    assert got[signals.IS_SUCCESSFUL].verdict is Verdict.PASSED
    body = fake_judge.bodies[0]
    assert body["model"] == "judge-small"
    assert (body["temperature"], body["seed"], body["max_tokens"]) == (0.0, 7, 300)
    user = body["messages"][1]["content"]
    assert "<reference>" in user and '"tool": "answer"' in user
    assert "<conversation>" not in user  # only with include_conversation
    with RecordingReader(db_path) as reader:
        stored = reader.scoring(result.scoring.scoring_id)
    assert stored is not None
    assert stored.judge_model == "judge-small"
    assert stored.prompt_hash == prompt_hash("")
    assert "api_key" not in stored.config["judge"]  # never stored


async def test_include_conversation_and_threshold(db_path: Path, fake_judge: FakeJudge) -> None:
    await qa_run(db_path)
    fake_judge.default = "fail"
    config = judge_config(fake_judge, include_conversation=True, threshold=0.1)
    got = by_signal(await rescore(db_path, "2024", config))
    assert "<conversation>" in fake_judge.bodies[0]["messages"][1]["content"]
    assert got[signals.JUDGE_PASSED].verdict is Verdict.PASSED  # 0.2 >= 0.1
    assert got[signals.NL_ASSERTION].verdict is Verdict.FAILED


async def test_garbage_is_judge_error_not_failure(db_path: Path, fake_judge: FakeJudge) -> None:
    await qa_run(db_path)
    fake_judge.default = "garbage"
    result = await rescore(db_path, "2024", judge_config(fake_judge))
    got = by_signal(result)
    for name in (signals.JUDGE_PASSED, signals.NL_ASSERTION):
        assert got[name].verdict is Verdict.UNSCORED
        assert got[name].error.startswith("judge_error")
    assert got[signals.IS_SUCCESSFUL].verdict is Verdict.UNSCORED  # never FAILED
    assert result.scoring.summary["signals"]["JUDGE_PASSED"]["failed"] == 0
    assert result.judge.requests == 1  # a bad reply is not retried ...
    await rescore(db_path, "2024", judge_config(fake_judge))
    assert fake_judge.requests == 2  # ... nor cached


@pytest.mark.parametrize("status", ["429", "500"])
async def test_transient_error_then_success(
    db_path: Path, fake_judge: FakeJudge, status: str
) -> None:
    await qa_run(db_path)
    fake_judge.behaviours.extend([status, status])
    got = by_signal(await rescore(db_path, "2024", judge_config(fake_judge)))
    assert got[signals.JUDGE_PASSED].verdict is Verdict.PASSED
    assert got[signals.JUDGE_PASSED].detail["attempts"] == 3
    assert fake_judge.requests == 3


async def test_retries_exhausted(db_path: Path, fake_judge: FakeJudge) -> None:
    await qa_run(db_path)
    fake_judge.default = "429"
    got = by_signal(await rescore(db_path, "2024", judge_config(fake_judge, max_retries=2)))
    assert got[signals.JUDGE_PASSED].verdict is Verdict.UNSCORED
    assert "HTTP 429" in got[signals.JUDGE_PASSED].error
    assert fake_judge.requests == 3


async def test_timeout(db_path: Path, fake_judge: FakeJudge) -> None:
    await qa_run(db_path)
    fake_judge.behaviours.append("hang")
    config = judge_config(fake_judge, timeout_s=0.3, max_retries=0)
    got = by_signal(await rescore(db_path, "2024", config))
    assert got[signals.JUDGE_PASSED].verdict is Verdict.UNSCORED
    assert "Timeout" in got[signals.JUDGE_PASSED].error
    # with a retry, the second attempt succeeds
    fake_judge.behaviours.append("hang")
    config = judge_config(fake_judge, timeout_s=0.3, max_retries=1)
    got = by_signal(await rescore(db_path, "2024", config))
    assert got[signals.JUDGE_PASSED].verdict is Verdict.PASSED


async def test_second_rescore_makes_zero_requests(db_path: Path, fake_judge: FakeJudge) -> None:
    await qa_run(db_path, n=3)
    first = await rescore(db_path, "2024", judge_config(fake_judge))
    assert fake_judge.requests == 3 and first.judge.cache_hits == 0
    second = await rescore(db_path, "2024", judge_config(fake_judge, threshold=0.99))
    assert fake_judge.requests == 3  # zero new requests
    assert second.scoring.summary["judge"] == {"requests": 0, "cache_hits": 3, "errors": 0}
    got = by_signal(second)
    assert got[signals.JUDGE_PASSED].detail["cached"] is True
    assert got[signals.JUDGE_PASSED].verdict is Verdict.FAILED  # 0.95 < 0.99: new threshold applied
    # a different prompt is a different question: asked again
    await rescore(db_path, "2024", judge_config(fake_judge, prompt_template="Grade strictly."))
    assert fake_judge.requests == 6


async def test_bounded_concurrency(db_path: Path, fake_judge: FakeJudge) -> None:
    await qa_run(db_path, n=6)
    fake_judge.default = "slow"
    result = await rescore(db_path, "2024", judge_config(fake_judge, concurrency=2))
    assert fake_judge.requests == 6
    assert fake_judge.max_in_flight == 2
    assert result.scoring.summary["signals"]["JUDGE_PASSED"]["passed"] == 6


@pytest.mark.parametrize(
    "text",
    [
        '{"score": 1.5, "reason": "x"}',
        '{"score": "high", "reason": "x"}',
        '{"score": true}',
        '{"score": 0.5, "nl_assertion_verdicts": [{"passed": "yes"}]}',
        "[1, 2]",
        "no json here",
    ],
)
def test_invalid_replies_are_rejected(text: str) -> None:
    with pytest.raises(JudgeOutputError):
        parse_verdict(text)


def test_fenced_and_embedded_json_are_read() -> None:
    assert parse_verdict('Sure!\n```json\n{"score": 0.5, "reason": "ok"}\n```').score == 0.5
    assert parse_verdict('Verdict: {"score": 1, "reason": "fine"} done').score == 1.0


@pytest.mark.parametrize("status", ["401", "403", "404"])
async def test_unusable_judge_fails_the_scoring(
    db_path: Path, fake_judge: FakeJudge, status: str
) -> None:
    await qa_run(db_path, n=3)
    fake_judge.default = status
    with pytest.raises(JudgeUnusableError, match=f"HTTP {status}") as caught:
        await rescore(db_path, "2024", judge_config(fake_judge, concurrency=1))
    assert "recorded as failed" in str(caught.value)
    assert fake_judge.requests == 1  # detected on the first call, never retried
    with RecordingReader(db_path) as reader:
        (scoring,) = reader.scorings()
        assert scoring.status == "failed" and "cannot be used" in str(scoring.summary["error"])
        assert current_scoring(reader, reader.run_ids()[0]) is None


async def test_a_judge_that_answered_once_then_fails_is_judge_error(
    db_path: Path, fake_judge: FakeJudge
) -> None:
    await qa_run(db_path, n=2)
    fake_judge.behaviours.extend(["good", "404"])
    result = await rescore(db_path, "2024", judge_config(fake_judge, concurrency=1))
    assert result.scoring.status == "complete"
    verdicts = sorted(str(by_signal(result, i)[signals.JUDGE_PASSED].verdict) for i in (0, 1))
    assert verdicts == ["passed", "unscored"]
    assert result.scoring.summary["unscored"]["causes"] == {"judge_error": 1}


async def test_cache_is_per_endpoint_and_can_be_bypassed(
    db_path: Path, fake_judge: FakeJudge
) -> None:
    await qa_run(db_path, n=1)
    await rescore(db_path, "2024", judge_config(fake_judge))
    assert fake_judge.requests == 1
    other = FakeJudge()
    other.thread.start()
    try:  # same model name, another endpoint: never a cached reply from the first
        await rescore(db_path, "2024", judge_config(other))
        assert other.requests == 1
    finally:
        other.server.shutdown()
        other.server.server_close()
    await rescore(db_path, "2024", judge_config(fake_judge, no_cache=True))
    assert fake_judge.requests == 2
    await rescore(db_path, "2024", judge_config(fake_judge))
    assert fake_judge.requests == 2  # the fresh reply refreshed the cache
