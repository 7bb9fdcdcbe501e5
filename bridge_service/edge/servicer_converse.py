"""``BridgeService.Converse``: the RPC's lifecycle for one bot's stream.

One stream is one bot in one session. The handler reads ``Join`` (refusing
anything else with ``INVALID_ARGUMENT`` naming the field), answers ``Joined``,
and parks a :class:`GrpcEndpoint` (:mod:`vae.bridge_service.edge.converse_endpoint`,
which moves the messages) in the pairing pool. Two tasks serve the stream from
then on, both inside the handler's TaskGroup: the endpoint's reader and, once
a session took the stream, its writer.

When the session closes the endpoint with a :class:`BotProtocolError` — or
the bot breaks the protocol while still waiting — the stream ends with
``INVALID_ARGUMENT`` naming the state and the message (``RESOURCE_EXHAUSTED``
naming the limit for a :class:`BotLimitError`); otherwise it ends OK after
``SessionEnded``. A bug ends it with ``INTERNAL`` and an error id
(:func:`vae.status.internal_error`), never an unexplained ``UNKNOWN``.

The same handler serves a worker process of ``--workers N``: there the
waiting room is a ticket desk (``vae.bridge_service.workers.tickets``), which
admits a Join only with a ticket it issued — a forged one is
``PERMISSION_DENIED``, a spent or expired one ``FAILED_PRECONDITION`` — and
may release a waiting stream (its session gave up): it gets ``WaitTimeout``.
A stream whose session runs at a worker gets ``Redirect`` and ends OK.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import Any

import grpc

from vae.bridge.v1 import bridge_pb2
from vae.bridge_service.audio.framing import negotiate
from vae.bridge_service.config import BridgeSettings, RunSettings
from vae.bridge_service.connectors.base import BotLimitError, BotProtocolError
from vae.bridge_service.edge.converse_endpoint import GrpcEndpoint
from vae.bridge_service.edge.convert import join_info
from vae.bridge_service.edge.convert_tiers import join_capabilities
from vae.bridge_service.edge.protocol_state import ProtocolState, Undecodable
from vae.bridge_service.runs.pairing import TicketRefused, Waiting, WaitingRoom
from vae.status import internal_error

log = logging.getLogger("vae.bridge.converse")

#: How long a refused bot's remaining messages are read before its status is sent.
_DRAIN_S = 0.5


async def _abort_for(context: Any, error: BotProtocolError) -> None:
    """End the stream with the status of a refused message (names state/limit)."""
    code = (
        grpc.StatusCode.RESOURCE_EXHAUSTED
        if isinstance(error, BotLimitError)
        else grpc.StatusCode.INVALID_ARGUMENT
    )
    await context.abort(code, str(error))


class ConverseHandler:
    def __init__(self, pool: WaitingRoom, settings: BridgeSettings) -> None:
        self.pool = pool
        self.settings = settings

    async def __call__(self, context: Any) -> None:
        try:
            await self._converse(context)
        except (grpc.aio.AbortError, asyncio.CancelledError):
            raise
        except BaseExceptionGroup as group:
            # An abort inside the handler's TaskGroup arrives wrapped: the status
            # is already set, so pass the abort on (aborting again is a misuse).
            bugs, expected = group.split(
                lambda e: not isinstance(e, grpc.aio.AbortError | asyncio.CancelledError)
            )
            if bugs is not None:
                await internal_error(context, log, "Converse", bugs)
            leaf: BaseException | None = expected
            while isinstance(leaf, BaseExceptionGroup):
                leaf = leaf.exceptions[0]
            assert leaf is not None
            raise leaf from None
        except Exception as exc:
            await internal_error(context, log, "Converse", exc)

    async def _converse(self, context: Any) -> None:
        first = await context.read()
        if first is grpc.aio.EOF:
            return
        if isinstance(first, Undecodable):
            await context.abort(
                grpc.StatusCode.INVALID_ARGUMENT,
                f"message: {first.size} bytes could not be decoded as a BotMessage ({first.error})",
            )
        which = first.WhichOneof("message")
        if which != "join":
            await context.abort(
                grpc.StatusCode.INVALID_ARGUMENT,
                f"the first message must be Join, got {which or 'an empty message'}",
            )
        try:
            side, bot, send_rate, receive_rate = join_info(first.join)
            framing = negotiate(first.join.frame_ms, first.join.frames_per_message)
        except BotProtocolError as exc:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc))
            raise  # unreachable: abort raises
        try:
            self.pool.admit(first.join.ticket, side)
        except TicketRefused as exc:
            code = (
                grpc.StatusCode.PERMISSION_DENIED
                if exc.forged
                else grpc.StatusCode.FAILED_PRECONDITION
            )
            await context.abort(code, str(exc))
        limit = self.settings.max_waiting_streams
        if self.pool.waiting() >= limit:
            await context.abort(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                f"max_waiting_streams: {limit} streams are already waiting for a session",
            )
        endpoint = GrpcEndpoint(
            side,
            bot,
            send_rate,
            receive_rate,
            self.settings.max_outgoing_frames,
            ProtocolState(
                self.settings.max_events_per_s, self.settings.max_final_state_chunk_bytes
            ),
            framing,
            join_capabilities(first.join),
            accepts_redirect=first.join.accepts_redirect,
        )
        entry = Waiting(endpoint, first.join.run_filter, ticket=first.join.ticket)
        wait_s = self.settings.wait_timeout_s
        await context.write(
            bridge_pb2.BridgeMessage(
                joined=bridge_pb2.Joined(
                    stream_id=entry.stream_id,
                    frame_ms=framing.resolve(RunSettings.frame_ms).frame_ms,
                    wait_timeout_ms=int(wait_s * 1000),
                )
            )
        )
        log.info("stream %s joined as %s (%s %s)", entry.stream_id, side, bot.name, bot.version)
        left = asyncio.Event()
        joined_at = time.monotonic()
        async with asyncio.TaskGroup() as tg:
            reader = tg.create_task(endpoint.read_loop(context, left))
            await self.pool.add(entry)
            try:
                taken = await self._wait_for_session(entry, left)
            finally:
                # A cancelled RPC (the client went away) skips the removal below;
                # marking the entry first means it is never handed to a session.
                if not entry.assigned.is_set():
                    entry.left = True
            if not taken:
                await self.pool.remove(entry)
                if endpoint.violation is not None:
                    await asyncio.wait({reader}, timeout=_DRAIN_S)
                    reader.cancel()
                    await _abort_for(context, endpoint.violation)
                if not left.is_set():
                    waited_s = wait_s
                    if entry.released.is_set():  # let go early: say how long it really was
                        waited_s = time.monotonic() - joined_at
                    waited_ms = int(waited_s * 1000)
                    await context.write(
                        bridge_pb2.BridgeMessage(
                            wait_timeout=bridge_pb2.WaitTimeout(waited_ms=waited_ms)
                        )
                    )
                reader.cancel()
                return
            writer = tg.create_task(endpoint.write_loop(context))
            await endpoint.closed.wait()
            # A bot that stopped reading must not hold the stream open forever.
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(writer), 2.0)
            writer.cancel()
            if endpoint.error is not None:
                await asyncio.wait({reader}, timeout=_DRAIN_S)
            reader.cancel()
        if endpoint.error is not None:
            await _abort_for(context, endpoint.error)

    async def _wait_for_session(self, entry: Waiting, left: asyncio.Event) -> bool:
        """True once a session took the stream; False on timeout, release, or if the bot left."""
        assigned = asyncio.ensure_future(entry.assigned.wait())
        gone = asyncio.ensure_future(left.wait())
        released = asyncio.ensure_future(entry.released.wait())
        try:
            await asyncio.wait(
                [assigned, gone, released],
                timeout=self.settings.wait_timeout_s,
                return_when=asyncio.FIRST_COMPLETED,
            )
        finally:
            assigned.cancel()
            gone.cancel()
            released.cancel()
        return entry.assigned.is_set()
