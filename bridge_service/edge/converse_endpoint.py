"""The gRPC stream of one bot as a :class:`SideEndpoint` (what a session talks to).

Why a module of its own: this is the per-message path of ``Converse`` —
bounded queues between the stream and the session, and the reader and writer
loops that move every frame. It changes with flow control and queueing, not
with the RPC's handshake or status rules
(:mod:`vae.bridge_service.edge.servicer_converse`), and keeping it apart keeps that
hot path small and easy to read.

- the reader turns BotMessages into domain inputs for the session; it pauses
  when the session has 256 unprocessed inputs (gRPC flow control then slows
  the bot down instead of the bridge buffering without bound);
- the writer sends control messages first, then audio frames. Audio waits in
  a bounded queue: when the bot stops reading, gRPC's window fills, the
  queue fills, and further frames are dropped (``send`` returns False and the
  session records the drop) — control messages are never dropped. The queue
  holds ``max_outgoing_frames`` frames, whatever the frames per message.

Every message read is first checked against the stream's protocol state
(:mod:`vae.bridge_service.edge.protocol_state`: waiting, in session, ending, ended); a
violation is kept on the endpoint for the handler to turn into a status.
"""

from __future__ import annotations

import asyncio
import collections
from collections.abc import AsyncIterator
from typing import Any

import grpc

from vae.bridge_service.audio.framing import Framing
from vae.bridge_service.connectors.base import (
    BotInfo,
    BotInput,
    BotProtocolError,
    BridgeOutput,
    Capabilities,
    PeerAudio,
    RedirectOut,
)
from vae.bridge_service.edge.convert import bot_input
from vae.bridge_service.edge.convert_out import bridge_message
from vae.bridge_service.edge.protocol_state import ProtocolState
from vae.recordings.models import Side

_MAX_INPUTS = 256


class GrpcEndpoint:
    #: In a text session the caller's keys reach a gRPC bot as BridgeMessage.dtmf.
    takes_dtmf_text = True

    def __init__(
        self,
        role: Side,
        bot: BotInfo,
        send_rate: int,
        receive_rate: int,
        max_frames: int,
        protocol: ProtocolState,
        framing: Framing,
        capabilities: Capabilities | None = None,
        accepts_redirect: bool = False,
    ) -> None:
        self.role = role
        #: What the bot declared at Join (text turns, the virtual clock).
        self.capabilities = capabilities or Capabilities()
        #: The bot set Join.accepts_redirect: its session may run at a worker process.
        self.accepts_redirect = accepts_redirect
        self.protocol = protocol
        #: A protocol violation seen by the reader (also while still waiting).
        self.violation: BotProtocolError | None = None
        #: What the bot asked for at Join (frame length, frames per message).
        self.framing = framing
        self.bot = bot
        self.send_rate = send_rate
        self.receive_rate = receive_rate
        #: The outgoing audio bound is in frames; one message carries several.
        self._max_messages = max(1, max_frames // framing.frames_per_message)
        self._inputs: collections.deque[BotInput] = collections.deque()
        self._input_ready = asyncio.Event()
        self._input_space = asyncio.Event()
        self._input_space.set()
        self._ended: BotProtocolError | None = None
        self._eof = False
        self._control: collections.deque[BridgeOutput | RedirectOut] = collections.deque()
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
            if len(self._audio) >= self._max_messages:
                return False
            self._audio.append(message)
        else:
            self.protocol.on_output(message)
            self._control.append(message)
        self._output_ready.set()
        return True

    async def redirect(self, out: RedirectOut) -> None:
        """Send the bot to the worker that runs its session, then end this stream (OK)."""
        self.protocol.finish()
        self._control.append(out)
        await self.close()

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
