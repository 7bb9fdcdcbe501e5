"""Rescoring a recorded run: the one library function the CLI, the servicer and the demo call.

A rescore never changes a recording. It validates everything first (config,
overrides against every scenario, scorer names, session ids; the checks that
need the run are in ``vae.scorer_service.scoring.rescore_plan``) so bad input fails
before anything is written; then it creates a new scoring (status
``running``, with its whole config, scorer versions, judge model and prompt
hash), has a *runner* score the sessions and store their scores, each
handed back as it is stored (where that per-session work runs:
``vae.scorer_service.scoring.session_work`` — this process with bounded concurrency by
default, or Ray tasks, ``vae.scorer_service.ray_scoring.runner``), then builds the
summary from what it was handed and closes the scoring (``complete``, with
its ``scope``: a subset never becomes the run's current scoring unless
``make_current``),
or ``failed`` with the error if it is interrupted or its scores cannot all be
stored (``complete`` is written only once every score is committed) — also
when the judge cannot be used at all (:class:`JudgeUnusableError`): a failed scoring is never
the run's current one. Scenarios that need a judge are refused when none is
configured, unless ``no_judge`` (``vae.scorer_service.judge.need``). A scoring
records its owner (host, process id) so one left ``running`` by a dead
process reads ``interrupted`` (``vae.recordings.write.scoring_owner``). ``overwrite`` marks the
run's earlier scorings superseded only once the new one is complete, so a
failed rescore never hides a good scoring.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from vae.recordings.backends.locator import StoreRef, locate
from vae.recordings.errors import StoreError
from vae.recordings.models import ScoringRecord
from vae.recordings.read.reader import RecordingReader
from vae.recordings.write.scoring_owner import owner_stamp
from vae.recordings.write.writer import RecordingWriter, open_writer
from vae.scorer_service.config import ConfigError, ScoringConfig
from vae.scorer_service.judge.client import JudgeStats, JudgeUnusableError
from vae.scorer_service.judge.prompt import PROMPT_VERSION, prompt_hash
from vae.scorer_service.ledger.aggregate import SessionOutcome, summarise
from vae.scorer_service.ledger.unscored import bot_errors_block, unscored_block
from vae.scorer_service.scoring.redacted import redaction_summary
from vae.scorer_service.scoring.registry import build_scorers
from vae.scorer_service.scoring.rescore_plan import (
    RescoreError,
    RescorePlan,
    plan_rescore,
    rescore_scope,
)
from vae.scorer_service.scoring.runner import ScoringJob, SessionRunner
from vae.scorer_service.scoring.session_work import LocalRunner
from vae.scorer_service.timing.metrics import METRIC_VERSION
from vae.scorer_service.transcription.stage import describe_stage, transcription_summary

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


async def rescore(
    db_path: StoreRef,
    run_ref: str,
    config: ScoringConfig,
    *,
    mode: str = "append",
    session_ids: Sequence[str] = (),
    on_progress: ProgressCallback | None = None,
    concurrency: int | None = None,
    runner: SessionRunner | None = None,
    make_current: bool = False,
) -> RescoreResult:
    """Score ``run_ref`` (exact id or unique prefix) into a new scoring and return it.

    A subset (``session_ids``, or ``config.scorers`` leaving a scorer out) becomes
    the run's current scoring only with ``make_current``.

    ``runner`` is where the sessions are scored: this process by default
    (``concurrency`` sessions at once), or e.g. a
    :class:`vae.scorer_service.ray_scoring.runner.RayRunner`.
    """
    if mode not in MODES:
        raise ConfigError(f"mode must be one of {', '.join(MODES)}")
    config.validate()
    scope = rescore_scope(config, session_ids, make_current=make_current, mode=mode)
    # A path or a URL, as text: the runner may hand it to other processes.
    locator = str(locate(db_path))
    # The transcription stage's engine and parameters (a bad configuration stops here).
    transcriber = await describe_stage(config.transcription)
    runner = runner or LocalRunner(concurrency)
    head = await asyncio.to_thread(RecordingReader, locator)
    try:
        plan = await asyncio.to_thread(plan_rescore, head, run_ref, config, session_ids)
    finally:
        head.close()
    # The scorers' names and versions, and whether any reads audio (no judge client needed).
    scorers = build_scorers(config, None)
    await runner.prepare()
    job = ScoringJob(
        locator=locator,
        scoring_id=_new_scoring_id(plan.run_id),
        config=config,
        run_options=plan.run_options,
        with_audio=any(s.needs_audio for s in scorers) or transcriber is not None,
    )
    versions: dict[str, object] = {
        **{s.name: s.version for s in scorers},
        "metric_version": METRIC_VERSION,
        "prompt_version": PROMPT_VERSION,
        **({"transcriber": transcriber} if transcriber is not None else {}),
    }
    async with open_writer(locator) as writer:
        return await _run(writer, plan, job, mode, scope, versions, runner, on_progress)


async def _run(
    writer: RecordingWriter,
    plan: RescorePlan,
    job: ScoringJob,
    mode: str,
    scope: dict[str, Any],
    versions: dict[str, object],
    runner: SessionRunner,
    on_progress: ProgressCallback | None,
) -> RescoreResult:
    config = job.config
    scoring = ScoringRecord(
        scoring_id=job.scoring_id,
        run_id=plan.run_id,
        created_ns=time.time_ns(),
        status="running",
        config=config.to_dict(),
        mode=mode,
        versions=versions,
        judge_model=config.judge.model if config.judge.enabled else "",
        prompt_hash=prompt_hash(config.judge.prompt_template) if config.judge.enabled else "",
        summary={"owner": owner_stamp()},
    )
    await writer.create_scoring(scoring)
    await writer.flush()
    outcomes: list[SessionOutcome] = []
    total = len(plan.sessions)

    async def emit(outcome: SessionOutcome) -> None:
        outcomes.append(outcome)
        if on_progress is not None:
            maybe = on_progress(len(outcomes), total, outcome)
            if maybe is not None:
                await maybe

    try:
        stats = await runner.run(job, plan.sessions, writer, emit)
        # A runner that handed back fewer sessions than planned never judged the rest:
        # the scoring fails rather than reading complete without them.
        missing = {s.session_id for s, _ in plan.sessions} - {o.session_id for o in outcomes}
        if missing:
            raise RuntimeError(
                f"no scores came back for {len(missing)} session(s): {', '.join(sorted(missing))}"
            )
        # Every score is committed before the scoring says ``complete``, and that
        # status itself before it counts: a store failing at either point takes the
        # ``failed`` branch (a ``complete`` is never salvaged: vae.recordings.backends.faults).
        await writer.flush()
        outcomes.sort(key=lambda o: o.scenario_name)
        summary = summarise(outcomes)
        summary["unscored"] = unscored_block(outcomes, never_ended=plan.skipped)
        summary["bot_errors"] = bot_errors_block(outcomes)
        summary["skipped_unfinished"] = plan.skipped
        summary["scope"] = scope
        summary["judge"] = {
            "requests": stats.judge.requests,
            "cache_hits": stats.judge.cache_hits,
            "errors": stats.judge.errors,
        }
        if (redaction := redaction_summary(config, plan.run_options)) is not None:
            summary["redaction"] = redaction
        if "transcriber" in versions:
            asr = {
                "engine": versions["transcriber"],
                "transcripts": config.transcription.transcripts,
            }
            summary["transcription"] = transcription_summary({**asr, **stats.asr}, outcomes)
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
    return RescoreResult(done, outcomes, stats.judge)


def _fields(record: ScoringRecord) -> dict[str, Any]:
    return {name: getattr(record, name) for name in ScoringRecord.__dataclass_fields__}
