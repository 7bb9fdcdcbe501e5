"""Scoring on Ray: the same scoring as a local rescore, and honest verdicts when a task fails.

A real local Ray instance (2 CPUs, ``tests/ray_instance.py``) runs the tasks;
the judge is vae's stand-in served on loopback and reached through the real
``openai`` client. Each comparison scores two copies of one recorded run —
locally and on Ray — so both start from a cold judge cache.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.factories import RunInfo, SessionSpec, ToolCallSpec, conversation, scenario, write_run
from tests.helpers import closed_port
from tests.ray_instance import RayInstance
from tests.scorer_service.conftest import standard_sessions
from vae.bots.stand_in.offline_judge import MODEL, offline_judge_server
from vae.bots.stand_in.offline_judge import _respond as offline_reply
from vae.bots.stand_in.openai_server import OpenAICompatibleServer
from vae.recordings.models import ScoringRecord, Verdict
from vae.recordings.read.reader import RecordingReader
from vae.scorer_service import signals
from vae.scorer_service.config import JudgeSettings, ScoringConfig
from vae.scorer_service.edge.server import start_scorer
from vae.scorer_service.edge.wire_client import remote_rescore
from vae.scorer_service.judge.client import JudgeUnusableError
from vae.scorer_service.ledger import scorings as ledger
from vae.scorer_service.ledger.unscored import unscored_line
from vae.scorer_service.ray_scoring.connect import RayScoringError
from vae.scorer_service.ray_scoring.runner import TASK_NAME, RayRunner
from vae.scorer_service.ray_scoring.task_failure import TASK_FAILED
from vae.scorer_service.scoring.rescore import RescoreResult, rescore

pytestmark = pytest.mark.xdist_group("ray")

#: Scoring fields that say which scoring it is and when; everything else must be equal.
IDENTITY = {"scoring_id", "created_ns", "finished_ns"}


async def varied_run(db: Path) -> RunInfo:
    """Passing, failing, judged, repeated, unfinished and stalled sessions, each distinct."""
    scenarios, sessions = standard_sessions()
    for name, phrase in (("qa_pass", "booked"), ("qa_fail", "refunded")):
        scenarios.append(
            scenario(
                name,
                domain="qa",
                nl_assertions=[f'The agent said "{phrase}"'],
                success_signals=["NL_ASSERTION", "JUDGE_PASSED"],
            )
        )
        sessions.append(
            SessionSpec(
                name,
                turns=conversation(2),
                tool_calls=[ToolCallSpec("note", {"status": "booked", "for": name})],
            )
        )
    for k in (1, 2, 3):
        scenarios.append(scenario(f"trial#{k}", reference_answer={"name": "Ann"}))
        who = "Ann" if k != 2 else "Bob"
        sessions.append(
            SessionSpec(
                f"trial#{k}",
                turns=conversation(2),
                tool_calls=[ToolCallSpec("book", {"name": who, "trial": k})],
            )
        )
    scenarios.append(scenario("cut_off", reference_answer={"name": "Cy"}))
    sessions.append(
        SessionSpec(
            "cut_off",
            turns=conversation(1),
            stop_reason="cancelled",
            tool_calls=[ToolCallSpec("book", {"name": "Cy"})],
        )
    )
    scenarios.append(scenario("silent", reference_answer={"name": "Di"}))
    sessions.append(SessionSpec("silent", tool_calls=[ToolCallSpec("book", {"name": "Dee"})]))
    return await write_run(db, scenarios, sessions)


def judged(base_url: str, **settings: Any) -> ScoringConfig:
    return ScoringConfig(
        judge=JudgeSettings(base_url=base_url, model=MODEL, backoff_s=0.01, **settings)
    )


@pytest.fixture
def judge() -> Iterator[OpenAICompatibleServer]:
    with offline_judge_server() as server:
        yield server


@pytest.fixture
async def two_copies(tmp_path: Path) -> tuple[Path, Path, RunInfo]:
    local, on_ray = tmp_path / "local.db", tmp_path / "ray.db"
    info = await varied_run(local)
    shutil.copy(local, on_ray)
    return local, on_ray, info


def _untimed(detail: Any) -> Any:
    """A score's detail without when its judge call ran (two rescores never share that)."""
    if isinstance(detail, dict) and isinstance(detail.get("usage"), dict):
        usage = {k: v for k, v in detail["usage"].items() if k not in ("started_ns", "ended_ns")}
        return {**detail, "usage": usage}
    return detail


def stored(db: Path, scoring_id: str) -> tuple[ScoringRecord, dict[tuple[str, str], Any]]:
    with RecordingReader(db) as reader:
        scoring = reader.scoring(scoring_id)
        scores = reader.scores(scoring_id)
    assert scoring is not None
    rows = {
        (s.session_id, s.signal): (s.verdict, s.value, _untimed(s.detail), s.error) for s in scores
    }
    return scoring, rows


def assert_same_scoring(a: ScoringRecord, b: ScoringRecord) -> None:
    for name in ScoringRecord.__dataclass_fields__:
        if name not in IDENTITY:
            assert getattr(a, name) == getattr(b, name), name


def returned(result: RescoreResult) -> list[tuple[Any, ...]]:
    return [
        (o.session_id, o.scenario_name, o.domain, o.duration_s,
         sorted((s.signal, s.verdict, s.value, repr(_untimed(s.detail)), s.error)
                for s in o.scores))
        for o in result.sessions
    ]  # fmt: skip


async def test_a_rescore_on_ray_equals_the_local_one_field_by_field(
    ray_instance: RayInstance, two_copies: tuple[Path, Path, RunInfo], judge: Any
) -> None:
    local_db, ray_db, info = two_copies
    config = judged(judge.base_url)
    local = await rescore(local_db, info.run_id, config)
    progress: list[tuple[int, int]] = []
    with RayRunner("auto") as runner:
        on_ray = await rescore(
            ray_db, info.run_id, config, runner=runner,
            on_progress=lambda done, total, _o: progress.append((done, total)),
        )  # fmt: skip
    n = len(info.session_ids)
    assert progress == [(i, n) for i in range(1, n + 1)]
    assert on_ray.scoring.status == "complete" and on_ray.scoring.summary["sessions"] == n
    assert_same_scoring(local.scoring, on_ray.scoring)
    assert returned(local) == returned(on_ray)
    local_stored, local_rows = stored(local_db, local.scoring.scoring_id)
    ray_stored, ray_rows = stored(ray_db, on_ray.scoring.scoring_id)
    assert_same_scoring(local_stored, ray_stored)
    assert local_rows == ray_rows and len(ray_rows) > 10 * n
    # The run really exercised the judge, the repeats and the unfinished/stalled rules.
    summary = on_ray.scoring.summary
    assert summary["judge"] == {"requests": n, "cache_hits": 0, "errors": 0}
    assert summary["pass_hat_k"] and summary["stalled"] == ["silent"]
    assert summary["unscored"]["causes"] == {"unfinished: cancelled": 1}
    qa = {o.scenario_name: o.get(signals.NL_ASSERTION) for o in on_ray.sessions}
    assert qa["qa_pass"].verdict is Verdict.PASSED and qa["qa_fail"].verdict is Verdict.FAILED
    # The judge cache is the store's: a second rescore on Ray costs no judge call.
    with RayRunner("auto") as runner:
        again = await rescore(ray_db, info.run_id, config, runner=runner)
    assert again.scoring.summary["judge"] == {"requests": 0, "cache_hits": n, "errors": 0}


def corrupt_events(db: Path, session_id: str) -> None:
    """Damage one session's recorded events (as a broken disk or a bad tool would)."""
    with sqlite3.connect(db) as conn:
        conn.execute(
            "UPDATE events SET payload_json = '{broken' WHERE session_id = ?", (session_id,)
        )


async def test_a_task_that_raises_leaves_its_sessions_unscored_with_the_cause(
    ray_instance: RayInstance, two_copies: tuple[Path, Path, RunInfo]
) -> None:
    local_db, ray_db, info = two_copies
    broken = info.session_ids["book_wrong"]
    corrupt_events(ray_db, broken)
    config = ScoringConfig(no_judge=True)
    local = await rescore(local_db, info.run_id, config)
    with RayRunner("auto", batch=1) as runner:  # one session per task
        on_ray = await rescore(ray_db, info.run_id, config, runner=runner)
    assert on_ray.scoring.status == "complete"
    failed = next(o for o in on_ray.sessions if o.session_id == broken)
    composite = failed.get(signals.IS_SUCCESSFUL)
    assert composite is not None and composite.verdict is Verdict.UNSCORED
    assert composite.detail["causes"] == [TASK_FAILED]
    assert composite.error.startswith(f"{TASK_FAILED}: JSONDecodeError")
    assert {s.signal: s.verdict for s in failed.scores}[signals.ACTION_MATCH] is Verdict.UNSCORED
    assert all(s.verdict is not Verdict.PASSED for s in failed.scores)
    # Every other session is scored exactly as locally; the summary counts the cause.
    others = [row for row in returned(on_ray) if row[0] != broken]
    assert others == [row for row in returned(local) if row[0] != broken]
    block = on_ray.scoring.summary["unscored"]
    assert block["causes"][TASK_FAILED] == 1 and "book_wrong" in block["scenarios"]
    assert TASK_FAILED in unscored_line(on_ray.scoring.summary)  # so vae rescore exits 1
    _, rows = stored(ray_db, on_ray.scoring.scoring_id)
    assert {sig for sid, sig in rows if sid == broken} == {s.signal for s in failed.scores}


def kill_scoring_workers() -> list[int]:
    """SIGKILL every process running a vae scoring task (Ray titles it ``ray::vae-score``)."""
    killed = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if cmdline.startswith(f"ray::{TASK_NAME}".encode()):
            os.kill(int(pid), signal.SIGKILL)
            killed.append(int(pid))
    return killed


async def test_a_worker_that_dies_leaves_its_sessions_unscored(
    ray_instance: RayInstance, tmp_path: Path
) -> None:
    db = tmp_path / "vae.db"
    info = await varied_run(db)
    arrived, release = threading.Event(), threading.Event()

    def held(request: dict[str, Any]) -> dict[str, Any]:
        arrived.set()
        release.wait(30)
        return offline_reply(request)

    # Every session in one task, held at the judge until its worker is killed.
    with OpenAICompatibleServer(held, model=MODEL) as server, RayRunner("auto", batch=100) as ray:
        scoring = asyncio.create_task(rescore(db, info.run_id, judged(server.base_url), runner=ray))
        try:
            assert await asyncio.to_thread(arrived.wait, 60), "no task reached the judge"
            assert kill_scoring_workers()
        finally:
            release.set()
        result = await scoring
    assert result.scoring.status == "complete"
    assert len(result.sessions) == len(info.session_ids)
    for outcome in result.sessions:
        composite = outcome.get(signals.IS_SUCCESSFUL)
        assert composite is not None and composite.verdict is Verdict.UNSCORED
        assert composite.detail["causes"] == [TASK_FAILED]
        assert "WorkerCrashedError" in composite.error or "died" in composite.error
    assert result.scoring.summary["unscored"]["causes"] == {TASK_FAILED: len(info.session_ids)}


async def test_a_judge_that_cannot_be_used_fails_the_scoring_as_locally(
    ray_instance: RayInstance, tmp_path: Path
) -> None:
    db = tmp_path / "vae.db"
    info = await varied_run(db)
    with closed_port() as port, RayRunner("auto") as runner:
        config = judged(f"http://127.0.0.1:{port}/v1")
        with pytest.raises(JudgeUnusableError, match="recorded as failed"):
            await rescore(db, info.run_id, config, runner=runner)
    with RecordingReader(db) as reader:
        [scoring] = reader.scorings()
        assert scoring.status == "failed" and "cannot be used" in scoring.summary["error"]
        assert ledger.current_scoring(reader, info.run_id) is None


async def test_a_worker_running_other_code_refuses_and_the_scoring_fails(
    ray_instance: RayInstance, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "vae.db"
    info = await varied_run(db)
    # The caller's fingerprint as another vae version would compute it.
    monkeypatch.setattr("vae.scorer_service.ray_scoring.runner.code_id", lambda: "another-version")
    with RayRunner("auto") as runner, pytest.raises(RayScoringError, match="other vae code"):
        await rescore(db, info.run_id, ScoringConfig(no_judge=True), runner=runner)
    with RecordingReader(db) as reader:
        [scoring] = reader.scorings()
    assert scoring.status == "failed" and "other vae code" in scoring.summary["error"]


async def test_a_scorer_service_started_with_ray_scores_every_rescore_there(
    ray_instance: RayInstance, two_copies: tuple[Path, Path, RunInfo]
) -> None:
    local_db, ray_db, info = two_copies
    broken = info.session_ids["book_wrong"]
    corrupt_events(ray_db, broken)  # locally this fails the scoring; on Ray only its task
    config = ScoringConfig(no_judge=True)
    local = await rescore(local_db, info.run_id, config)
    progress: list[int] = []
    with RayRunner("auto", batch=1) as runner:
        running = await start_scorer(ray_db, "127.0.0.1:0", runner=runner)
        try:
            scoring, outcomes = await remote_rescore(
                f"127.0.0.1:{running.port}", info.run_id, config,
                on_progress=lambda done, _total, _o: progress.append(done),
            )  # fmt: skip
        finally:
            await running.stop(grace=0.5)
    assert scoring.status == "complete" and progress == list(range(1, len(outcomes) + 1))
    failed = next(o for o in outcomes if o.session_id == broken).get(signals.IS_SUCCESSFUL)
    assert failed is not None and failed.detail["causes"] == [TASK_FAILED]
    _, local_rows = stored(local_db, local.scoring.scoring_id)
    _, ray_rows = stored(ray_db, scoring.scoring_id)
    assert {k: v for k, v in ray_rows.items() if k[0] != broken} == {
        k: v for k, v in local_rows.items() if k[0] != broken
    }
