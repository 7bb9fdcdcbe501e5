"""``BridgeService``: the gRPC face of the pairing pool and the run manager.

Errors map to status codes naming what was wrong: an invalid scenario source
or option is ``INVALID_ARGUMENT`` (path and field in the message), an unknown
run ``NOT_FOUND``, an ambiguous run prefix ``INVALID_ARGUMENT`` listing the
candidates, a run name already taken ``ALREADY_EXISTS``, a resume of a run
that is still running ``FAILED_PRECONDITION``.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar

import grpc

from vae.bridge.v1 import bridge_pb2, bridge_pb2_grpc
from vae.bridge_service.edge.convert_runs import (
    classification_pb,
    event_pb,
    overrides_from_pb,
    run_pb,
    sources_from_pb,
)
from vae.bridge_service.edge.servicer_converse import ConverseHandler
from vae.bridge_service.replay.convert import replay_request
from vae.bridge_service.runs.manager import RunConflict, RunManager
from vae.recordings.errors import AmbiguousRunError, RunNotFoundError, ScenarioError, StoreError
from vae.status import internal_error

log = logging.getLogger("vae.bridge.servicer")
T = TypeVar("T")


async def _guard(context: Any, work: Callable[[], Awaitable[T]]) -> T:
    try:
        return await work()
    except RunNotFoundError as exc:
        await context.abort(grpc.StatusCode.NOT_FOUND, str(exc))
    except AmbiguousRunError as exc:
        await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc))
    except ScenarioError as exc:
        await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc))
    except (ValueError, TypeError) as exc:
        await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc))
    except RunConflict as exc:
        code = grpc.StatusCode.ALREADY_EXISTS if exc.exists else grpc.StatusCode.FAILED_PRECONDITION
        await context.abort(code, str(exc))
    except StoreError as exc:
        # The database refused (damaged, read-only, full): the server's state, not a bug.
        await context.abort(grpc.StatusCode.FAILED_PRECONDITION, str(exc))
    except grpc.aio.AbortError:
        raise
    except Exception as exc:
        await internal_error(context, log, "BridgeService", exc)
    raise AssertionError("unreachable: abort raises")


class BridgeServicer(bridge_pb2_grpc.BridgeServiceServicer):
    def __init__(self, runs: RunManager, converse: ConverseHandler) -> None:
        self.runs = runs
        self.converse = converse

    async def Converse(  # type: ignore[override]
        self, request_iterator: Any, context: Any
    ) -> None:
        await self.converse(context)

    async def StartRun(
        self, request: bridge_pb2.StartRunRequest, context: Any
    ) -> bridge_pb2.StartRunResponse:
        async def work() -> bridge_pb2.StartRunResponse:
            view, classes = await self.runs.start(
                sources_from_pb(request.sources),
                overrides_from_pb(request.options),
                run_id=request.run_id,
                resume=request.resume,
                dry_run=request.dry_run,
                replay=replay_request(request),
            )
            response = bridge_pb2.StartRunResponse(
                classifications=[classification_pb(c) for c in classes]
            )
            if view is not None:
                response.run.CopyFrom(run_pb(view))
            return response

        return await _guard(context, work)

    async def WatchRun(
        self, request: bridge_pb2.WatchRunRequest, context: Any
    ) -> AsyncIterator[bridge_pb2.WatchRunResponse]:
        run_id = await _guard(context, lambda: self.runs.resolve(request.run_id))
        try:
            async for event in self.runs.watch(run_id):
                yield event_pb(event)
        except Exception as exc:
            await internal_error(context, log, "WatchRun", exc)

    async def GetRun(
        self, request: bridge_pb2.GetRunRequest, context: Any
    ) -> bridge_pb2.GetRunResponse:
        async def work() -> bridge_pb2.GetRunResponse:
            return bridge_pb2.GetRunResponse(run=run_pb(await self.runs.view(request.run_id)))

        return await _guard(context, work)

    async def ListRuns(
        self, request: bridge_pb2.ListRunsRequest, context: Any
    ) -> bridge_pb2.ListRunsResponse:
        async def work() -> bridge_pb2.ListRunsResponse:
            views = await self.runs.list_runs(request.prefix, request.limit)
            return bridge_pb2.ListRunsResponse(runs=[run_pb(v) for v in views])

        return await _guard(context, work)

    async def CancelRun(
        self, request: bridge_pb2.CancelRunRequest, context: Any
    ) -> bridge_pb2.CancelRunResponse:
        async def work() -> bridge_pb2.CancelRunResponse:
            view = await self.runs.cancel(request.run_id, drain=request.drain)
            return bridge_pb2.CancelRunResponse(run=run_pb(view))

        return await _guard(context, work)
