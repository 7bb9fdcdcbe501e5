"""ScorerService over gRPC: a thin edge over :mod:`~.scoring.rescore` and the ledger.

Store reads run in threads (the readers are synchronous); every error the
library raises maps to a status code with its message: a run or scoring that
does not exist is NOT_FOUND, a bad config, override or ambiguous reference is
INVALID_ARGUMENT, a report renderer not built yet is UNIMPLEMENTED.

Rescore scores where the service was told to (``vae scorer serve --ray``):
the Ray cluster is the service's deployment, chosen by whoever runs it, not
a field of the request — a client cannot make the service connect anywhere.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncIterator, Callable
from typing import Any, NoReturn, TypeVar

import grpc

from vae.recordings.backends.locator import StoreRef, locate
from vae.recordings.errors import AmbiguousRunError, RunNotFoundError, ScenarioError, StoreError
from vae.recordings.identifiers import InvalidIdentifier
from vae.recordings.read.reader import RecordingReader
from vae.recordings.read.selection import select_run
from vae.scorer.v1 import scorer_pb2, scorer_pb2_grpc
from vae.scorer_service.config import ConfigError
from vae.scorer_service.edge import convert
from vae.scorer_service.judge.client import JudgeUnusableError
from vae.scorer_service.ledger import scorings as ledger
from vae.scorer_service.ledger.aggregate import SessionOutcome
from vae.scorer_service.ledger.scorings import ScoringMismatchError
from vae.scorer_service.ray_scoring.connect import RayScoringError
from vae.scorer_service.scoring.rescore import RescoreError, RescoreResult, rescore
from vae.scorer_service.scoring.runner import SessionRunner
from vae.status import internal_error

log = logging.getLogger("vae.scorer.service")
T = TypeVar("T")
Ctx = grpc.aio.ServicerContext[Any, Any]


async def _abort(context: Ctx, exc: BaseException) -> NoReturn:
    if isinstance(exc, RunNotFoundError | ledger.ScoringNotFoundError | FileNotFoundError):
        code = grpc.StatusCode.NOT_FOUND
    elif isinstance(
        exc,
        AmbiguousRunError
        | ConfigError
        | ScenarioError
        | RescoreError
        | InvalidIdentifier
        | ScoringMismatchError,
    ):
        code = grpc.StatusCode.INVALID_ARGUMENT
    elif isinstance(exc, JudgeUnusableError | RayScoringError):
        # The judge endpoint, or the Ray cluster, cannot be used; the scoring is recorded failed.
        code = grpc.StatusCode.FAILED_PRECONDITION
    elif isinstance(exc, NotImplementedError):
        code = grpc.StatusCode.UNIMPLEMENTED
    elif isinstance(exc, StoreError):
        code = grpc.StatusCode.FAILED_PRECONDITION
    else:
        await internal_error(context, log, "ScorerService", exc)
    await context.abort(code, str(exc) or type(exc).__name__)
    raise AssertionError("unreachable")  # pragma: no cover


class ScorerServicer(scorer_pb2_grpc.ScorerServiceServicer):
    def __init__(self, db_path: StoreRef, runner: SessionRunner | None = None) -> None:
        self.db_path = locate(db_path)
        #: Where Rescore scores sessions: this process by default, or the service's Ray runner.
        self.runner = runner

    async def _read(self, context: Ctx, func: Callable[[RecordingReader], T]) -> T:
        def work() -> T:
            with RecordingReader(self.db_path) as reader:
                return func(reader)

        try:
            return await asyncio.to_thread(work)
        except Exception as exc:
            await _abort(context, exc)

    async def Rescore(
        self, request: scorer_pb2.RescoreRequest, context: Ctx
    ) -> AsyncIterator[scorer_pb2.RescoreResponse]:
        try:
            config = convert.config_from_proto(request.config)
        except ConfigError as exc:
            await _abort(context, exc)
        mode = "overwrite" if request.mode == scorer_pb2.WRITE_MODE_OVERWRITE else "append"
        queue: asyncio.Queue[scorer_pb2.RescoreResponse | None] = asyncio.Queue()

        def progress(done: int, total: int, outcome: SessionOutcome) -> None:
            queue.put_nowait(
                scorer_pb2.RescoreResponse(
                    sessions_done=done,
                    sessions_total=total,
                    session=convert.session_to_proto(outcome),
                )
            )

        task: asyncio.Task[RescoreResult] = asyncio.create_task(
            rescore(
                self.db_path,
                request.run,
                config,
                mode=mode,
                session_ids=list(request.session_ids),
                on_progress=progress,
                make_current=request.make_current,
                runner=self.runner,
            )
        )
        task.add_done_callback(lambda _t: queue.put_nowait(None))
        try:
            while (item := await queue.get()) is not None:
                yield item
            try:
                result = await task
            except Exception as exc:
                await _abort(context, exc)
            n = len(result.sessions)
            yield scorer_pb2.RescoreResponse(
                sessions_done=n,
                sessions_total=n,
                scoring=convert.scoring_to_proto(result.scoring),
            )
        finally:
            if not task.done():
                task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    async def GetScoring(
        self, request: scorer_pb2.GetScoringRequest, context: Ctx
    ) -> scorer_pb2.GetScoringResponse:
        def work(reader: RecordingReader) -> scorer_pb2.GetScoringResponse:
            scoring = ledger.resolve_scoring(reader, request.scoring_id)
            outcomes = ledger.session_outcomes(reader, scoring)
            return scorer_pb2.GetScoringResponse(
                scoring=convert.scoring_to_proto(scoring),
                sessions=[convert.session_to_proto(o) for o in outcomes],
            )

        return await self._read(context, work)

    async def ListScorings(
        self, request: scorer_pb2.ListScoringsRequest, context: Ctx
    ) -> scorer_pb2.ListScoringsResponse:
        def work(reader: RecordingReader) -> scorer_pb2.ListScoringsResponse:
            found = ledger.list_scorings(reader, request.run)
            return scorer_pb2.ListScoringsResponse(
                scorings=[convert.scoring_to_proto(s) for s in found]
            )

        return await self._read(context, work)

    async def CompareScorings(
        self, request: scorer_pb2.CompareScoringsRequest, context: Ctx
    ) -> scorer_pb2.CompareScoringsResponse:
        def work(reader: RecordingReader) -> scorer_pb2.CompareScoringsResponse:
            a = ledger.resolve_scoring(reader, request.scoring_a)
            b = ledger.resolve_scoring(reader, request.scoring_b)
            flips, summary = ledger.compare(reader, a, b)
            return scorer_pb2.CompareScoringsResponse(
                flips=[convert.flip_to_proto(f) for f in flips],
                summary_json=json.dumps(summary, default=str),
            )

        return await self._read(context, work)

    async def GetReport(
        self, request: scorer_pb2.GetReportRequest, context: Ctx
    ) -> scorer_pb2.GetReportResponse:
        from vae.scorer_service import report

        def work(reader: RecordingReader) -> scorer_pb2.GetReportResponse:
            run_id = select_run(reader, request.run)
            scoring = request.scoring_id or None
            compare = request.compare_scoring_id or None
            if request.format == scorer_pb2.REPORT_FORMAT_JSON:
                data = report.report_data(reader, run_id, scoring, compare)
                body = json.dumps(data, default=str, ensure_ascii=False)
                return scorer_pb2.GetReportResponse(
                    content_type="application/json", content=body.encode("utf-8")
                )
            html = report.render_html(reader, run_id, scoring, compare)
            return scorer_pb2.GetReportResponse(
                content_type="text/html; charset=utf-8", content=html.encode("utf-8")
            )

        return await self._read(context, work)
