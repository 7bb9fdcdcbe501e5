"""``BridgeService.Converse``: a bot's gRPC stream as a :class:`SideEndpoint`.

One stream is one bot in one session. The handler reads ``Join`` (refusing
anything else with ``INVALID_ARGUMENT`` naming the field), answers ``Joined``,
and parks a :class:`GrpcEndpoint` in the pairing pool. Two tasks serve the
stream from then on, both inside the handler's TaskGroup:

- the reader turns BotMessages into domain inputs for the session; it pauses
  when the session has 256 unprocessed inputs (gRPC flow control then slows
  the bot down instead of the bridge buffering without bound);
- the writer sends control messages first, then audio frames. Audio waits in
  a bounded queue: when the bot stops reading, gRPC's window fills, the
  queue fills, and further frames are dropped (``send`` returns False and the
  session records the drop) — control messages are never dropped.

Every message read is first checked against the stream's protocol state
(:mod:`bridge_service.protocol_state`: waiting, in session, ending, ended).
When the session closes the endpoint with a :class:`BotProtocolError` — or
the bot breaks the protocol while still waiting — the stream ends with
``INVALID_ARGUMENT`` naming the state and the message (``RESOURCE_EXHAUSTED``
naming the limit for a :class:`BotLimitError`); otherwise it ends OK after
``SessionEnded``. A bug ends it with ``INTERNAL`` and an error id
(:func:`vae.status.internal_error`), never an unexplained ``UNKNOWN``.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
from collections.abc import AsyncIterator
from typing import Any

import grpc

from bridge_service.config import BridgeSettings, RunSettings
from bridge_service.connectors.base import (
    BotInfo,
    BotInput,
    BotLimitError,
    BotProtocolError,
    BridgeOutput,
    PeerAudio,
)
from bridge_service.convert import bot_input, bridge_message, join_info
from bridge_service.framing import Framing, negotiate
from bridge_service.pairing import PairingPool, Waiting
from bridge_service.protocol_state import ProtocolState, Undecodable
from recordings.models import Side
from vae.bridge.v1 import bridge_pb2
from vae.status import internal_error

log = logging.getLogger("vae.bridge.converse")

_MAX_INPUTS = 256
#: How long a refused bot's remaining messages are read before its status is sent.
_DRAIN_S = 0.5


class GrpcEndpoint:
    def __init__(
        self,
        role: Side,
        bot: BotInfo,
        send_rate: int,
        receive_rate: int,
        max_frames: int,
        protocol: ProtocolState | None = None,
        framing: Framing | None = None,
    ) -> None:
        self.role = role
        self.protocol = protocol or ProtocolState(max_events_per_s=1_000_000)
        #: A protocol violation seen by the reader (also while still waiting).
        self.violation: BotProtocolError | None = None
        #: What the bot asked for at Join (frame length, frames per message).
        self.framing = framing or Framing()
        self.bot = bot
        self.send_rate = send_rate
        self.receive_rate = receive_rate
        self._max_frames = max_frames
        self._inputs: collections.deque[BotInput] = collections.deque()
        self._input_ready = asyncio.Event()
        self._input_space = asyncio.Event()
        self._input_space.set()
        self._ended: BotProtocolError | None = None
        self._eof = False
        self._control: collections.deque[BridgeOutput] = collections.deque()
        self._audio: collections.deque[PeerAudio] = collections.deque()
        self._output_ready = asyncio.Event()
        self.closed = asyncio.Event()
        self.error: BotProtocolError | None = None

    # ------------------------------------------------------------ SideEndpoint
    async def receive(self) -> AsyncIterator[BotInput]:
        while True:
            while self._inputs:
                item = self._inputs.popleft()
                if len(self._inputs) < _MAX_INPUTS:
                    self._input_space.set()
                yield item
            if self._ended is not None:
                raise self._ended
            if self._eof:
                return
            self._input_ready.clear()
            await self._input_ready.wait()

    async def send(self, message: BridgeOutput) -> bool:
        return self.send_nowait(message)

    def send_nowait(self, message: BridgeOutput) -> bool:
        """Queue a message for the writer task (the open-mic clock never awaits)."""
        if self.closed.is_set():
            return False
        if isinstance(message, PeerAudio):
            if len(self._audio) >= self._max_frames:
                return False
            self._audio.append(message)
        else:
            self.protocol.on_output(message)
            self._control.append(message)
        self._output_ready.set()
        return True

    async def close(self, error: BotProtocolError | None = None) -> None:
        self.error = error
        self.closed.set()
        self._output_ready.set()

    # ------------------------------------------------------------ stream side
    async def _push_input(self, item: BotInput) -> None:
        await self._input_space.wait()
        self._inputs.append(item)
        if len(self._inputs) >= _MAX_INPUTS:
            self._input_space.clear()
        self._input_ready.set()

    def _finish_input(self, error: BotProtocolError | None) -> None:
        self._ended = error
        self._eof = True
        self._input_ready.set()

    async def read_loop(self, context: Any, left: asyncio.Event) -> None:
        """Read the bot's messages until it closes its side or breaks."""
        try:
            while True:
                msg = await context.read()
                if msg is grpc.aio.EOF:
                    self._finish_input(None)
                    break
                try:
                    if not self.protocol.check(msg):
                        continue
                    item = bot_input(msg, self.role)
                except BotProtocolError as exc:
                    self.violation = exc
                    self._finish_input(exc)
                    left.set()
                    await self._drain(context)
                    break
                await self._push_input(item)
        except (grpc.RpcError, asyncio.CancelledError, ConnectionError) as exc:
            self._finish_input(None)
            if isinstance(exc, asyncio.CancelledError):
                raise
        finally:
            left.set()

    @staticmethod
    async def _drain(context: Any) -> None:
        """Discard what a refused bot still sends (until it half-closes or is cancelled).

        A client whose writes fail after the server finished the call may report a
        transport error instead of the status the bridge sent; reading its
        remaining messages for a moment lets the status arrive intact.
        """
        while await context.read() is not grpc.aio.EOF:
            pass

    async def write_loop(self, context: Any) -> None:
        """Control first, then audio, until the session closes this endpoint.

        Frames still queued at the close are sent too (the last words of the
        peer), bounded by the handler's 2 s wait for a bot that stopped reading.
        """
        while True:
            if self._control:
                await context.write(bridge_message(self._control.popleft()))
            elif self._audio:
                await context.write(bridge_message(self._audio.popleft()))
            elif self.closed.is_set():
                return
            else:
                self._output_ready.clear()
                await self._output_ready.wait()


async def _abort_for(context: Any, error: BotProtocolError) -> None:
    """End the stream with the status of a refused message (names state/limit)."""
    code = (
        grpc.StatusCode.RESOURCE_EXHAUSTED
        if isinstance(error, BotLimitError)
        else grpc.StatusCode.INVALID_ARGUMENT
    )
    await context.abort(code, str(error))


class ConverseHandler:
    def __init__(self, pool: PairingPool, settings: BridgeSettings) -> None:
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
        )
        entry = Waiting(endpoint, first.join.run_filter)
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
                    await context.write(
                        bridge_pb2.BridgeMessage(
                            wait_timeout=bridge_pb2.WaitTimeout(waited_ms=int(wait_s * 1000))
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
        """True once a session took the stream; False on timeout or if the bot left."""
        assigned = asyncio.ensure_future(entry.assigned.wait())
        gone = asyncio.ensure_future(left.wait())
        try:
            await asyncio.wait(
                [assigned, gone],
                timeout=self.settings.wait_timeout_s,
                return_when=asyncio.FIRST_COMPLETED,
            )
        finally:
            assigned.cancel()
            gone.cancel()
        return entry.assigned.is_set()
