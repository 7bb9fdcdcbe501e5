"""A worker's two gRPC faces: the internal ``BridgeWorker`` and its bots' ``BridgeService``.

``BridgeWorker.RunSession`` (loopback only, guarded by the front door's
secret) takes one attempt's plan, registers its tickets, answers
``Accepted``, then ``Started`` and ``Ended`` as the attempt runs
(:mod:`vae.bridge_service.workers.serve_session`). An ``EndSession`` from the front
door (cancel, shutdown) ends the session; the front door going away ends it
with ``shutdown``, gracefully (the bots still get ``SessionEnding``).

The bot-facing ``BridgeService`` of a worker serves ``Converse`` for
redirected bots only (the ticket desk admits them) and refuses run control
with ``FAILED_PRECONDITION`` naming the front door, where runs live.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

import grpc

from vae.bridge.v1 import bridge_pb2, bridge_pb2_grpc
from vae.bridge_service.config import BridgeSettings, StopReason
from vae.bridge_service.edge.servicer_converse import ConverseHandler
from vae.bridge_service.identity import BridgeIdentity
from vae.bridge_service.workers.convert import (
    accepted_pb,
    end_from_pb,
    ended_pb,
    plan_from_assign,
    started_pb,
)
from vae.bridge_service.workers.serve_session import EndBox, serve_attempt
from vae.bridge_service.workers.tickets import TicketDesk
from vae.internal.v1 import worker_pb2_grpc
from vae.recordings.errors import ScenarioError, StoreError
from vae.recordings.write.writer import RecordingWriter
from vae.status import internal_error

log = logging.getLogger("vae.bridge.worker")


class WorkerControl(worker_pb2_grpc.BridgeWorkerServicer):
    def __init__(
        self,
        desk: TicketDesk,
        writer: RecordingWriter,
        settings: BridgeSettings,
        identity: BridgeIdentity,
    ) -> None:
        self.desk = desk
        self.writer = writer
        self.settings = settings
        self.identity = identity
        #: Every attempt this worker holds, waiting for its bots or running.
        self.attempts: dict[str, EndBox] = {}
        self.idle = asyncio.Event()
        self.idle.set()

    def end_all(self, reason: StopReason, detail: str) -> None:
        for ends in list(self.attempts.values()):
            ends.request(reason, detail)

    async def RunSession(  # type: ignore[override]
        self, request_iterator: Any, context: Any
    ) -> None:
        first = await context.read()
        if first is grpc.aio.EOF or first.WhichOneof("message") != "assign":
            await context.abort(
                grpc.StatusCode.INVALID_ARGUMENT, "the first message must be Assign"
            )
        try:
            plan, tickets = plan_from_assign(first.assign, self.settings, self.identity)
        except (ScenarioError, ValueError, TypeError, KeyError) as exc:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"assign: {exc}")
            raise  # unreachable: abort raises
        if plan.session_id in self.attempts:
            await context.abort(
                grpc.StatusCode.ALREADY_EXISTS, f"{plan.session_id} is already assigned here"
            )
        arrival = self.desk.open(plan.session_id, tickets)
        ends = EndBox()
        self.attempts[plan.session_id] = ends
        self.idle.clear()
        try:
            await context.write(accepted_pb())
            await self._serve(context, plan, arrival, ends)
        finally:
            self.desk.close(arrival, "the session was given up")  # a no-op once served
            self.attempts.pop(plan.session_id, None)
            if not self.attempts:
                self.idle.set()

    async def _serve(self, context: Any, plan: Any, arrival: Any, ends: EndBox) -> None:
        async def started(started_ns: int) -> None:
            # The front door gone is handled below (cancellation), never here.
            with contextlib.suppress(Exception):
                await context.write(started_pb(started_ns))

        async def read_ends() -> None:
            while (message := await context.read()) is not grpc.aio.EOF:
                if message.WhichOneof("message") == "end":
                    ends.request(*end_from_pb(message.end))

        async def watch_storage() -> None:
            # As the front door's run manager does: a failed store ends the session now.
            await self.writer.failed.wait()
            why = f"storage failed at {self.identity.label}: {self.writer.failure}"
            ends.request(StopReason.STORAGE_ERROR, why)

        attempt = asyncio.ensure_future(
            serve_attempt(plan, self.desk, arrival, self.writer, ends, started)
        )
        helpers = [asyncio.ensure_future(read_ends()), asyncio.ensure_future(watch_storage())]

        async def stop_helpers() -> None:
            for helper in helpers:
                helper.cancel()
            await asyncio.gather(*helpers, return_exceptions=True)

        try:
            result = await asyncio.shield(attempt)
        except asyncio.CancelledError:
            # The front door went away: end the session gracefully and record it.
            ends.request(StopReason.SHUTDOWN, "the bridge's front door went away")
            await asyncio.gather(attempt, stop_helpers(), return_exceptions=True)
            raise
        except Exception as exc:
            await stop_helpers()
            await internal_error(context, log, "RunSession", exc)
            return
        await stop_helpers()
        # Committed before the front door hears of it: it reads the store right after.
        try:
            await self.writer.flush()
        except StoreError as exc:
            # What the session recorded here may be lost: never report it as it ended.
            why = f"storage failed at {self.identity.label}: {exc}"
            log.error("%s: %s", plan.session_id, why)
            if result is not None:
                result = replace(
                    result, stop_reason=StopReason.STORAGE_ERROR, detail=why, clean_exit=False
                )
        await context.write(ended_pb(result))


class WorkerBridgeServicer(bridge_pb2_grpc.BridgeServiceServicer):
    """A worker's BridgeService: Converse for redirected bots; no run control here."""

    def __init__(self, converse: ConverseHandler, label: str, front_door: str) -> None:
        self.converse = converse
        self.refusal = f"this is {label} of the bridge at {front_door}: send run control there"

    async def Converse(  # type: ignore[override]
        self, request_iterator: Any, context: Any
    ) -> None:
        await self.converse(context)

    async def StartRun(
        self, request: bridge_pb2.StartRunRequest, context: Any
    ) -> bridge_pb2.StartRunResponse:
        await context.abort(grpc.StatusCode.FAILED_PRECONDITION, self.refusal)
        raise AssertionError("unreachable: abort raises")

    async def WatchRun(
        self, request: bridge_pb2.WatchRunRequest, context: Any
    ) -> AsyncIterator[bridge_pb2.WatchRunResponse]:
        await context.abort(grpc.StatusCode.FAILED_PRECONDITION, self.refusal)
        yield bridge_pb2.WatchRunResponse()  # unreachable: makes this a stream handler

    async def GetRun(
        self, request: bridge_pb2.GetRunRequest, context: Any
    ) -> bridge_pb2.GetRunResponse:
        await context.abort(grpc.StatusCode.FAILED_PRECONDITION, self.refusal)
        raise AssertionError("unreachable: abort raises")

    async def ListRuns(
        self, request: bridge_pb2.ListRunsRequest, context: Any
    ) -> bridge_pb2.ListRunsResponse:
        await context.abort(grpc.StatusCode.FAILED_PRECONDITION, self.refusal)
        raise AssertionError("unreachable: abort raises")

    async def CancelRun(
        self, request: bridge_pb2.CancelRunRequest, context: Any
    ) -> bridge_pb2.CancelRunResponse:
        await context.abort(grpc.StatusCode.FAILED_PRECONDITION, self.refusal)
        raise AssertionError("unreachable: abort raises")
