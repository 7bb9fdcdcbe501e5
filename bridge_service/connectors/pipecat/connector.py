"""The pipecat connector: an unchanged pipecat bot, reached over its WebSocket.

The bot runs its usual pipeline with a WebSocket server transport and
pipecat's ``ProtobufFrameSerializer``; the bridge dials its URL once per
session (``RunOptions.user_connector``/``agent_connector`` with kind
``pipecat``). The conversation, as the established framework speaks it:

1. connect (retries with backoff), RTVI ``client-ready`` -> wait ``bot-ready``;
2. at SessionStart: the scenario's prompt and tools (``update_system_prompt``
   client-message by default, see :mod:`.options`), then
   ``apply_initialization`` when the scenario has initial state or actions,
   then an optional kick-off text;
3. audio both ways: the peer's open-mic frames go out as protobuf audio frames
   at ``receive_rate``; the bot's frames come back at whatever rate each frame
   declares, are downmixed and resampled (streaming, per source rate) to
   ``send_rate`` and split into chunks of at most ``max_chunk_ms``;
4. RTVI messages become vae events (:mod:`.rtvi`); the bot's end tool
   or ``<exit>`` message ends the call (timeouts are the session's);
5. at SessionEnding: ``get_scenario_summary`` and ``get_context_history``
   (id-matched; an error response or unsupported request just leaves that part
   empty) become the final state.

A text session goes through RTVI ``send-text`` (:mod:`.text`);
pipecat cannot follow the virtual clock (StartRun refuses it).

This module is the transport: the WebSocket, the handshake, the receive loop
and sending. What the bot's frames record is decoded by :mod:`.inbound`; what
its RTVI messages mean, what it is sent and the final state from its answers
is the RTVI conversation (:mod:`.conversation`), the same one the WebRTC
connector holds. vae never imports pipecat: frames are encoded by
:mod:`.frames`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator
from typing import Any

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, WebSocketException

from vae.bridge_service.connectors.base import (
    BotInfo,
    BotInput,
    BotProtocolError,
    BridgeOutput,
    Capabilities,
    ConnectorConfig,
    ConnectorError,
    PeerAudio,
    SessionEndingOut,
    opened,
)
from vae.bridge_service.connectors.options import check_urls
from vae.bridge_service.connectors.pipecat.conversation import RtviConversation
from vae.bridge_service.connectors.pipecat.frames import AudioFrame, MessageFrame, encode
from vae.bridge_service.connectors.pipecat.inbound import Inbound
from vae.bridge_service.connectors.pipecat.messages import rtvi_of
from vae.bridge_service.connectors.pipecat.options import PipecatOptions, parse_options
from vae.recordings.models import Side

__all__ = ["PipecatEndpoint", "check_config", "dial"]


class PipecatEndpoint:
    """One session's side played by a pipecat bot (a :class:`SideEndpoint`)."""

    #: Text through RTVI send-text; never the virtual clock.
    capabilities = Capabilities(text=True)

    def __init__(self, ws: ClientConnection, url: str, role: Side, options: PipecatOptions) -> None:
        self.role = role
        self.url = url
        self.options = options
        self.send_rate = options.send_rate
        self.receive_rate = options.receive_rate
        self.bot = BotInfo("pipecat-bot", "", {"connector": "pipecat", "url": url})
        self._ws = ws
        self._early: list[bytes | str] = []
        #: What the bot sends, decoded; ``_in.talk`` is the RTVI conversation.
        self._in = Inbound(role, options)
        self._wake = asyncio.Event()

    # ------------------------------------------------------------ handshake
    async def handshake(self) -> None:
        """``client-ready`` -> ``bot-ready``; frames that arrive first are kept."""
        await self._send_json(self._in.talk.client_ready())
        deadline = time.monotonic() + self.options.ready_timeout_s
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise ConnectorError(f"pipecat bot at {self.url} sent no bot-ready in time")
            try:
                data = await asyncio.wait_for(self._ws.recv(), left)
            except TimeoutError:
                continue
            except ConnectionClosed as exc:
                raise ConnectorError(f"pipecat bot at {self.url} closed during handshake") from exc
            msg = rtvi_of(data)
            if msg is not None and msg.get("type") == "bot-ready":
                self.bot = RtviConversation.bot_info(msg, self.url, "pipecat")
                return
            self._early.append(data)

    # ------------------------------------------------------------ bot -> bridge
    async def receive(self) -> AsyncIterator[BotInput]:
        for data in self._early:
            for item in self._in.handle(data):
                yield item
        self._early.clear()
        recv: asyncio.Future[Any] | None = None
        try:
            while True:
                for item in self._in.talk.due_final():
                    yield item
                if recv is None:
                    recv = asyncio.ensure_future(self._ws.recv())
                # Wait for the bot or for send(SessionEndingOut): the final state may be
                # due with nothing left to receive (no requests configured).
                wake = asyncio.ensure_future(self._wake.wait())
                try:
                    await asyncio.wait({recv, wake}, return_when=asyncio.FIRST_COMPLETED)
                finally:
                    wake.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await wake
                self._wake.clear()
                if not recv.done():
                    continue
                try:
                    data = recv.result()
                except ConnectionClosed:
                    break
                finally:
                    recv = None
                for item in self._in.handle(data):
                    yield item
        finally:
            if recv is not None:
                recv.cancel()
                with contextlib.suppress(BaseException):
                    await recv
        for item in self._in.talk.closing():
            yield item

    # ------------------------------------------------------------ bridge -> bot
    async def send(self, message: BridgeOutput) -> bool:
        if isinstance(message, PeerAudio):
            buffered = self._ws.transport.get_write_buffer_size()
            if buffered > self.options.max_buffer_bytes:
                return False  # the bot is not reading: drop audio, never control
            await self._ws.send(encode(AudioFrame(message.pcm, self.receive_rate, 1)))
            return True
        for msg in self._in.talk.outgoing(message):
            await self._send_json(msg)
        if isinstance(message, SessionEndingOut):
            self._wake.set()  # the final state may be due with nothing left to receive
        return True

    async def _send_json(self, message: dict[str, Any]) -> None:
        await self._ws.send(encode(MessageFrame(json.dumps(message))))

    async def close(self, error: BotProtocolError | None = None) -> None:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self._ws.close(1000 if error is None else 1008, "vae"), 5.0)


def check_config(config: ConnectorConfig) -> PipecatOptions:
    """The options of ``config``; :class:`ConnectorOptionsError` for wrong ones or a bad URL."""
    options = parse_options(config.options)
    check_urls(config, "pipecat", ("ws://", "wss://"))
    return options


async def dial(config: ConnectorConfig, role: Side) -> PipecatEndpoint:
    """Connect to the pipecat bot at ``config.url`` and complete the RTVI handshake."""
    options = check_config(config)
    delay = 0.2
    for attempt in range(1, options.connect_retries + 1):
        try:
            ws = await connect(config.url, max_size=16 * 1024 * 1024, open_timeout=10)
            break
        except (OSError, WebSocketException, TimeoutError) as exc:
            if attempt == options.connect_retries:
                raise ConnectorError(f"cannot reach pipecat bot at {config.url}: {exc}") from exc
            await asyncio.sleep(delay)  # backoff between dial attempts
            delay = min(delay * 2, 5.0)
    endpoint = PipecatEndpoint(ws, config.url, role, options)
    return await opened(endpoint, endpoint.handshake())
