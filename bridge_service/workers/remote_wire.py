"""The front door's end of one ``BridgeWorker.RunSession`` call: an attempt at a worker.

Why a module of its own: this is the protobuf edge of dispatching (the wire
to the worker), kept apart from the decisions of ``dispatch`` (which worker,
when to redirect, what a lost worker means for the run). A
:class:`RemoteAttempt` sends the plan, waits for ``Accepted`` (bounded: a
worker that does not answer takes nothing, and the front door serves the
session itself), forwards end requests (cancel, shutdown), and reads
``Started`` and ``Ended``. A call that breaks — the worker died — raises
:class:`WorkerGone`.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeAlias

import grpc

from vae.bridge_service.config import StopReason
from vae.bridge_service.runs.attempt import SessionResult
from vae.bridge_service.session.plan import SessionPlan
from vae.bridge_service.workers.convert import assign_pb, end_pb, result_from_ended
from vae.internal.v1 import worker_pb2, worker_pb2_grpc
from vae.recordings.models import Side
from vae.serving import client_channel

#: The front door's client of one worker's internal service.
#: (The async stub type exists only in the generated .pyi: a string alias.)
WorkerStub: TypeAlias = "worker_pb2_grpc.BridgeWorkerAsyncStub"


def open_control(address: str, secret: str) -> tuple[grpc.aio.Channel, WorkerStub]:
    """A channel to a worker's internal service (loopback), with its secret as the token."""
    channel = client_channel(address, token=secret)
    stub: WorkerStub = worker_pb2_grpc.BridgeWorkerStub(channel)
    return channel, stub


class WorkerGone(Exception):
    """The call to the worker broke or ended without a result.

    ``answered``: the worker process itself ended the call (an error status or
    no result: a bug there), as opposed to a connection that broke (it died).
    """

    def __init__(self, message: str, answered: bool = False) -> None:
        super().__init__(message)
        self.answered = answered


class RemoteAttempt:
    """One attempt running at a worker; a :class:`~vae.bridge_service.runs.dispatch.LiveSession`."""

    def __init__(
        self,
        stub: WorkerStub,
        plan: SessionPlan,
        tickets: dict[Side, str],
    ) -> None:
        self._stub = stub
        self._plan = plan
        self._tickets = tickets
        self._outbox: asyncio.Queue[worker_pb2.FrontDoorMessage | None] = asyncio.Queue()
        self._call: Any = None
        self._finished = False

    @property
    def plan(self) -> SessionPlan:
        return self._plan

    async def _requests(self) -> AsyncIterator[worker_pb2.FrontDoorMessage]:
        while (message := await self._outbox.get()) is not None:
            yield message

    async def open(self, accept_within_s: float) -> None:
        """Hand the worker the plan; return once its tickets are valid."""
        arrive_within_s = self._plan.settings.pairing_timeout_s
        self._outbox.put_nowait(assign_pb(self._plan, self._tickets, arrive_within_s))
        self._call = self._stub.RunSession(self._requests())
        try:
            reply = await asyncio.wait_for(self._read(), accept_within_s)
        except (grpc.aio.AioRpcError, TimeoutError) as exc:
            raise WorkerGone(_why(exc)) from exc
        if reply is grpc.aio.EOF or reply.WhichOneof("message") != "accepted":
            raise WorkerGone("the worker did not accept the session")

    async def _read(self) -> Any:
        """The next reply. The call cancelled under us (its channel was closed when the
        worker's exit was noticed) is the worker gone, not this task being cancelled."""
        try:
            return await self._call.read()
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                raise
            raise WorkerGone("the call to the worker was cancelled: its channel closed") from None

    def request_end(self, reason: StopReason, detail: str = "") -> None:
        self._outbox.put_nowait(end_pb(reason, detail))

    async def outcome(self, on_started: Callable[[], Awaitable[None]]) -> SessionResult | None:
        """Follow the attempt to its end: the recorded result (None: never recorded)."""
        while True:
            try:
                reply = await self._read()
            except grpc.aio.AioRpcError as exc:
                broken = exc.code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED)
                raise WorkerGone(_why(exc), answered=not broken) from exc
            if reply is grpc.aio.EOF:
                raise WorkerGone("the worker ended the call without a result", answered=True)
            which = reply.WhichOneof("message")
            if which == "started":
                await on_started()
            elif which == "ended":
                self._finished = True
                return result_from_ended(self._plan.session_id, reply.ended)

    def close(self) -> None:
        """Half-close; a call that did not end with a result is cancelled."""
        self._outbox.put_nowait(None)
        if self._call is not None and not self._finished and not self._call.done():
            self._call.cancel()


def _why(exc: BaseException) -> str:
    if isinstance(exc, grpc.aio.AioRpcError):
        return f"{exc.code().name}: {exc.details()}"
    if isinstance(exc, TimeoutError):
        return "no answer in time"
    return str(exc) or type(exc).__name__
