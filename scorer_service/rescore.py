"""Rescoring a recorded run: the one library function the CLI, the servicer and the demo call.

A rescore never changes a recording. It validates everything first (config,
overrides against every scenario, scorer names, session ids; the checks that
need the run are in ``scorer_service.rescore_plan``) so bad input fails
before anything is written; then it creates a new scoring (status
``running``, with its whole config, scorer versions, judge model and prompt
hash), scores the sessions with bounded concurrency, appends the scores as
each session finishes, and closes the scoring with its summary (``complete``, with its ``scope``:
a subset never becomes the run's current scoring unless ``make_current``),
or ``failed`` with the error if it is interrupted or its scores cannot all be
stored (``complete`` is written only once every score is committed) — also
when the judge cannot be used at all (:class:`JudgeUnusableError`): a failed scoring is never
the run's current one. Scenarios that need a judge are refused when none is
configured, unless ``no_judge`` (``scorer_service.judge_need``). A scoring
records its owner (host, process id) so one left ``running`` by a dead
process reads ``interrupted`` (``recordings.scoring_owner``). ``overwrite`` marks the
run's earlier scorings superseded only once the new one is complete, so a
failed rescore never hides a good scoring.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from recordings.errors import StorageError, StoreError
from recordings.locator import Locator, StoreRef, locate
from recordings.models import ScoreRecord, ScoringRecord, SessionRecord, Verdict
from recordings.reader import RecordingReader
from recordings.scenarios.model import Scenario
from recordings.scoring_owner import owner_stamp
from recordings.writer import RecordingWriter, open_writer
from scorer_service.aggregate import SessionOutcome, summarise
from scorer_service.config import ConfigError, ScoringConfig
from scorer_service.context import load_context
from scorer_service.judge.client import JudgeClient, JudgeStats, JudgeUnusableError
from scorer_service.judge.prompt import PROMPT_VERSION, prompt_hash
from scorer_service.lacking import declared_lacks
from scorer_service.registry import build_scorers
from scorer_service.rescore_plan import RescoreError, RescorePlan, plan_rescore, rescore_scope
from scorer_service.scorers.base import Scorer, SignalScore
from scorer_service.session_passes import finish
from scorer_service.timing.metrics import METRIC_VERSION
from scorer_service.transcription.stage import (
    CHANNELS,
    TranscriptionStage,
    make_stage,
    transcription_summary,
)
from scorer_service.transcription.words import rebuild_conversation
from scorer_service.unscored import bot_errors_block, unscored_block

__all__ = ["MODES", "ProgressCallback", "RescoreError", "RescoreResult", "rescore"]

log = logging.getLogger("vae.scorer.rescore")

MODES = ("append", "overwrite")

ProgressCallback = Callable[[int, int, SessionOutcome], Awaitable[None] | None]


@dataclass
class RescoreResult:
    scoring: ScoringRecord
    sessions: list[SessionOutcome]
    judge: JudgeStats


def _new_scoring_id(run_id: str) -> str:
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
    return f"{run_id}.{stamp}-{secrets.token_hex(2)}"


async def _score_session(
    scorers: list[Scorer],
    ctx: Any,
    scoring_id: str,
    lacks: set[str] | None = None,
    reads_conversation: bool = False,
) -> list[ScoreRecord]:
    results: list[SignalScore] = []
    for scorer in scorers:
        try:
            results.extend(await scorer.score(ctx))
        except JudgeUnusableError:
            raise  # stops the rescore: the scoring is recorded failed
        except Exception as exc:  # a scorer bug must not lose the other scores
            log.exception("scorer %s failed on %s", scorer.name, ctx.session.session_id)
            results.append(
                SignalScore(
                    f"scorer.{scorer.name}",
                    Verdict.UNSCORED,
                    None,
                    {},
                    f"scorer {scorer.name} crashed: {exc!r}",
                )
            )
    # What the recording lacks, a text session's audio-only signals, transcription
    # holes, mishearing, composites.
    results = finish(results, ctx, lacks or set(), reads_conversation=reads_conversation)
    sid = ctx.session.session_id
    return [
        ScoreRecord(scoring_id, sid, r.signal, r.verdict, r.value, r.detail, r.error)
        for r in results
    ]


@contextlib.asynccontextmanager
async def _readers(db_path: Locator, n: int) -> AsyncIterator[asyncio.Queue[RecordingReader]]:
    pool: asyncio.Queue[RecordingReader] = asyncio.Queue()
    opened = [await asyncio.to_thread(RecordingReader, db_path) for _ in range(n)]
    for r in opened:
        pool.put_nowait(r)
    try:
        yield pool
    finally:
        for r in opened:
            r.close()


async def rescore(
    db_path: StoreRef,
    run_ref: str,
    config: ScoringConfig,
    *,
    mode: str = "append",
    session_ids: Sequence[str] = (),
    on_progress: ProgressCallback | None = None,
    concurrency: int | None = None,
    make_current: bool = False,
) -> RescoreResult:
    """Score ``run_ref`` (exact id or unique prefix) into a new scoring and return it.

    A subset (``session_ids``, or ``config.scorers`` leaving a scorer out) becomes
    the run's current scoring only with ``make_current``.
    """
    if mode not in MODES:
        raise ConfigError(f"mode must be one of {', '.join(MODES)}")
    config.validate()
    scope = rescore_scope(config, session_ids, make_current=make_current, mode=mode)
    path = locate(db_path)
    workers = concurrency or max(2, config.judge.concurrency if config.judge.enabled else 2)
    async with _readers(path, workers + 1) as pool:
        head = await pool.get()
        plan = await asyncio.to_thread(plan_rescore, head, run_ref, config, session_ids)
        cache_lock = asyncio.Lock()

        async def cache_get(key: str) -> Any:
            async with cache_lock:
                return await asyncio.to_thread(head.judge_cache_get, key)

        async with open_writer(path) as writer:

            async def cache_put(
                key: str, model: str, req: dict[str, Any], res: dict[str, Any]
            ) -> None:
                await writer.put_judge_cache(key, model, req, res)

            judge = (
                JudgeClient(config.judge, cache_get, cache_put) if config.judge.enabled else None
            )
            stage = make_stage(config.transcription, head, writer, cache_lock)
            try:
                scorers = build_scorers(config, judge)
                return await _run(
                    writer, pool, plan, config, mode, scope, scorers, judge, on_progress, stage
                )
            finally:
                if judge is not None:
                    await judge.close()
                if stage is not None:
                    await stage.close()


async def _run(
    writer: RecordingWriter,
    pool: asyncio.Queue[RecordingReader],
    plan: RescorePlan,
    config: ScoringConfig,
    mode: str,
    scope: dict[str, Any],
    scorers: list[Scorer],
    judge: JudgeClient | None,
    on_progress: ProgressCallback | None,
    stage: TranscriptionStage | None = None,
) -> RescoreResult:
    scoring = ScoringRecord(
        scoring_id=_new_scoring_id(plan.run_id),
        run_id=plan.run_id,
        created_ns=time.time_ns(),
        status="running",
        config=config.to_dict(),
        mode=mode,
        versions={
            **{s.name: s.version for s in scorers},
            "metric_version": METRIC_VERSION,
            "prompt_version": PROMPT_VERSION,
            **({"transcriber": stage.describe} if stage is not None else {}),
        },
        judge_model=config.judge.model if config.judge.enabled else "",
        prompt_hash=prompt_hash(config.judge.prompt_template) if config.judge.enabled else "",
        summary={"owner": owner_stamp()},
    )
    await writer.create_scoring(scoring)
    await writer.flush()
    with_audio = any(s.needs_audio for s in scorers) or stage is not None
    outcomes: list[SessionOutcome] = []
    total = len(plan.sessions)

    async def one(session: SessionRecord, scenario: Scenario) -> None:
        reader = await pool.get()
        try:
            ctx = await asyncio.to_thread(
                load_context,
                reader,
                session,
                scenario,
                config,
                plan.run_options,
                with_audio=with_audio,
                channels=CHANNELS if stage is not None else CHANNELS[:2],
            )
        finally:
            pool.put_nowait(reader)
        if stage is not None:  # a stage of this session's scoring: fans out with it
            await writer.add_transcripts(await stage.run(ctx, scoring.scoring_id))
            rebuild_conversation(ctx, config.transcription.transcripts)
        lacks = declared_lacks(plan.run_options)
        include = config.judge.include_conversation
        records = await _score_session(scorers, ctx, scoring.scoring_id, lacks, include)
        if writer.failure is not None:
            raise StorageError(f"scoring stopped: {writer.failure}")
        await writer.add_scores(records)
        outcome = SessionOutcome(
            session.session_id, session.scenario_name, scenario.domain, session.duration_s, records
        )
        outcomes.append(outcome)
        if on_progress is not None:
            maybe = on_progress(len(outcomes), total, outcome)
            if maybe is not None:
                await maybe

    try:
        limit = asyncio.Semaphore(pool.qsize() or 1)

        async def bounded(session: SessionRecord, scenario: Scenario) -> None:
            async with limit:
                await one(session, scenario)

        async with asyncio.TaskGroup() as tg:
            for session, scenario in plan.sessions:
                tg.create_task(bounded(session, scenario))
        # Every score is committed before the scoring says ``complete``, and that
        # status itself before it counts: a store failing at either point takes the
        # ``failed`` branch (a ``complete`` is never salvaged: recordings.writer_faults).
        await writer.flush()
        outcomes.sort(key=lambda o: o.scenario_name)
        summary = summarise(outcomes)
        summary["unscored"] = unscored_block(outcomes, never_ended=plan.skipped)
        summary["bot_errors"] = bot_errors_block(outcomes)
        summary["skipped_unfinished"] = plan.skipped
        summary["scope"] = scope
        stats = judge.stats if judge is not None else JudgeStats()
        summary["judge"] = {
            "requests": stats.requests,
            "cache_hits": stats.cache_hits,
            "errors": stats.errors,
        }
        if stage is not None:
            summary["transcription"] = transcription_summary(stage.summary(), outcomes)
        finished = time.time_ns()
        await writer.finish_scoring(
            scoring.scoring_id, status="complete", summary=summary, finished_ns=finished
        )
        if mode == "overwrite":
            await writer.supersede_scorings(plan.run_id, scoring.scoring_id)
        await writer.flush()
        fields = {"status": "complete", "summary": summary, "finished_ns": finished}
        done = ScoringRecord(**{**_fields(scoring), **fields})
    except BaseException as exc:
        error = exc.exceptions[0] if isinstance(exc, BaseExceptionGroup) else exc
        await writer.finish_scoring(
            scoring.scoring_id,
            status="failed",
            summary={"error": f"{type(error).__name__}: {error}", "sessions_done": len(outcomes)},
            finished_ns=time.time_ns(),
        )
        with contextlib.suppress(StoreError):  # a failed store keeps it for salvage
            await writer.flush()
        if isinstance(error, StoreError):
            raise error from None  # one clear error, not a group, for the CLI and the servicer
        if isinstance(error, JudgeUnusableError):
            raise JudgeUnusableError(
                f"{error}; scoring {scoring.scoring_id} recorded as failed "
                "(never the run's current scoring)"
            ) from error
        raise
    return RescoreResult(done, outcomes, stats)


def _fields(record: ScoringRecord) -> dict[str, Any]:
    return {name: getattr(record, name) for name in ScoringRecord.__dataclass_fields__}
