"""The Twilio Media Streams connector: the bridge plays Twilio's part.

Many production voice agents take phone calls as a WebSocket server speaking
Twilio's Media Streams protocol (pipecat with its ``TwilioFrameSerializer``,
and other frameworks). ``vae run --agent-connector twilio+ws://host:port/ws``
dials such an agent once per session (either side of a run) and behaves like
Twilio during a call:

1. at SessionStart: ``connected``, then ``start`` with the account, call and
   stream sids (options, or derived from the session id), the media format
   (μ-law, 8 kHz, mono) and custom parameters (``scenario``, ``session_id``,
   ``run_id``, ``role`` and the ``custom_parameters`` option);
2. the peer's audio (the bridge's open-mic frames, already at 8 kHz) goes out
   as 20 ms ``media`` messages, μ-law, base64;
3. the agent's ``media`` is queued and played in real time
   (:mod:`.playout`): ``clear`` drops what has not played yet (a
   barge-in) and is recorded; a ``mark`` is echoed once the audio queued
   before it has played (and at once on ``clear``), as Twilio does;
4. the agent closing the socket cleanly (close code 1000 or 1001, or none),
   or sending ``stop``, is the agent hanging up: its queued audio plays out,
   then the call ends as the agent's end tool (the user's hang-up when the bot
   plays the user); a close with any other code (1011 internal error, 1013
   try again later, 1006 connection lost) is no hang-up: it is recorded as an
   error-level log naming the code and the session ends as
   ``bot_disconnected``; when the bridge ends the call, it sends ``stop``;
5. at SessionEnding: the final state is fetched from ``final_state_url`` when
   set (HTTP GET, a JSON document; ``{session_id}``, ``{call_sid}`` and
   ``{stream_sid}`` are filled in), else there is none; a fetch that fails
   (an HTTP error, a timeout, a body that is not JSON) leaves none and is
   recorded as an error-level log naming the URL and the error.

This module is the socket: dialling, the real-time receive loop, sending.
Messages are built and parsed by :mod:`.protocol`; what each of the agent's
messages does to the line and records is :mod:`.agent_line`'s; the final
state's fetch is :mod:`.final_state`'s; audio is coded by :mod:`.mulaw`.
Capacity, pools and retries are the seam's (:mod:`.pool`).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from typing import Any

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, ConnectionClosedOK, WebSocketException

from vae.bridge_service.connectors.base import (
    BotEvent,
    BotInfo,
    BotInput,
    BotProtocolError,
    BridgeOutput,
    ConnectorConfig,
    ConnectorError,
    DtmfOut,
    PeerAudio,
    SessionEndingOut,
    SessionStartInfo,
)
from vae.bridge_service.connectors.options import check_urls
from vae.bridge_service.connectors.tool_backend import twilio_parameters
from vae.bridge_service.connectors.trace_context import twilio_parameters as trace_parameters
from vae.bridge_service.connectors.twilio import mulaw
from vae.bridge_service.connectors.twilio.agent_line import AgentLine, mark_answered
from vae.bridge_service.connectors.twilio.final_state import fetch_final_state
from vae.bridge_service.connectors.twilio.options import TwilioOptions, parse_options, stream_sid
from vae.bridge_service.connectors.twilio.protocol import (
    RATE,
    AgentMessage,
    AgentStop,
    Outgoing,
    StreamIds,
    parse,
)
from vae.recordings.models import Side

__all__ = ["TwilioEndpoint", "TwilioOptions", "check_config", "dial", "parse_options"]


class TwilioEndpoint:
    #: The caller's keys go to the agent as ``dtmf`` messages (bridge_service/session/dtmf_out.py).
    sends_dtmf_messages = True
    """One session's side played by a Media Streams bot (a :class:`SideEndpoint`)."""

    def __init__(
        self,
        ws: ClientConnection,
        url: str,
        role: Side,
        options: TwilioOptions,
        custom: dict[str, str],
    ) -> None:
        self.role = role
        self.url = url
        self.options = options
        self.custom = custom
        self.send_rate = self.receive_rate = RATE
        self.bot = BotInfo("twilio-media-streams", "", {"connector": "twilio", "url": url})
        self._ws = ws
        self._frame_s = options.media_ms / 1000
        self._line = AgentLine(role, options.media_ms, options.max_queue_s)
        self._out: Outgoing | None = None
        self._caller = bytearray()
        self._caller_ms = 0
        self._started = asyncio.Event()
        self._ending = asyncio.Event()
        self._hung_up = False
        self.ids: StreamIds | None = None
        self._session_id = ""

    # ------------------------------------------------------------ agent -> bridge
    async def receive(self) -> AsyncIterator[BotInput]:
        await self._started.wait()
        t0 = time.monotonic()
        n = 0
        recv: asyncio.Future[Any] | None = None
        gone = False  # the socket closed cleanly or the bot sent stop: it hung up
        broken: ConnectionClosed | None = None  # closed with an error: the bot left
        try:
            while not self._ending.is_set():
                due = t0 + n * self._frame_s
                if time.monotonic() >= due:
                    for item in await self._play(n):
                        yield item
                    n += 1
                    if gone and not self._line.playout.queued_samples and not self._hung_up:
                        self._hung_up = True
                        yield self._line.hang_up()
                    continue
                if recv is None and not gone:
                    recv = asyncio.ensure_future(self._ws.recv())
                wake = asyncio.ensure_future(self._ending.wait())
                waits = {wake} if recv is None else {recv, wake}
                try:
                    await asyncio.wait(
                        waits, timeout=due - time.monotonic(), return_when="FIRST_COMPLETED"
                    )
                finally:
                    wake.cancel()
                if recv is None or not recv.done():
                    continue
                try:
                    data = recv.result()
                except ConnectionClosedOK:
                    gone = True  # 1000/1001 (or no status): a deliberate hang-up
                    continue
                except ConnectionClosed as exc:
                    broken = exc  # 1011, 1013, 1006 (killed)...: not a hang-up
                    break
                finally:
                    recv = None
                message = parse(data)
                gone = gone or isinstance(message, AgentStop)
                for item in await self._handle(message):
                    yield item
        finally:
            if recv is not None:
                recv.cancel()
                with contextlib.suppress(BaseException):
                    await recv
        if broken is not None:
            code = broken.rcvd.code if broken.rcvd is not None else 1006
            yield self._line.broken(str(broken), code)
            if not self._ending.is_set():
                return  # the session records the bot as disconnected
        for item in await fetch_final_state(self.options, self.ids, self._session_id):
            yield item

    async def _play(self, n: int) -> list[BotInput]:
        audio, marks = self._line.play(n)
        items: list[BotInput] = [audio]
        for name in marks:
            items.append(await self._answer_mark(name, "played"))
        return items

    async def _handle(self, message: AgentMessage) -> list[BotInput]:
        items, cleared = self._line.take(message)
        for name in cleared:
            items.append(await self._answer_mark(name, "cleared"))
        return items

    async def _answer_mark(self, name: str, why: str) -> BotEvent:
        if self._out is not None:
            with contextlib.suppress(ConnectionClosed):
                await self._ws.send(self._out.mark(name))
        return mark_answered(name, why)

    # ------------------------------------------------------------ bridge -> agent
    async def send(self, message: BridgeOutput) -> bool:
        if isinstance(message, PeerAudio):
            if self._out is None or self._ws.close_code is not None:
                return True  # before the call, or after the bot hung up: nobody listens
            if self._ws.transport.get_write_buffer_size() > self.options.max_buffer_bytes:
                return False  # the bot is not reading: drop audio, never control
            self._caller += mulaw.encode(message.pcm)
            size = self._line.playout.frame_samples  # one μ-law byte per sample
            while len(self._caller) >= size:
                chunk = bytes(self._caller[:size])
                del self._caller[:size]
                try:
                    await self._ws.send(self._out.media(chunk, self._caller_ms))
                except ConnectionClosed:
                    # The bot hung up while this frame was on its way: nobody listens,
                    # as above (not a reader too slow for its audio).
                    return True
                self._caller_ms += self.options.media_ms
            return True
        if isinstance(message, DtmfOut):
            if self._out is None or self._ws.close_code is not None:
                return True
            with contextlib.suppress(ConnectionClosed):
                for digit in message.digits:
                    await self._ws.send(self._out.dtmf(digit))
            return True
        if isinstance(message, SessionStartInfo):
            self._session_id = message.session_id
            o = self.options
            self.ids = StreamIds(
                o.account_sid,
                o.call_sid or stream_sid("CA", message.session_id),
                o.stream_sid or stream_sid("MZ", message.session_id),
            )
            self._out = Outgoing(self.ids)
            params = {
                "scenario": message.scenario_name,
                "session_id": message.session_id,
                "run_id": message.run_id,
                "role": str(message.role),
                **twilio_parameters(message),
                **trace_parameters(message),
                **self.custom,
            }
            try:
                await self._ws.send(self._out.connected())
                await self._ws.send(self._out.start(params))
            finally:
                self._started.set()  # also when the bot already left: receive sees it
        elif isinstance(message, SessionEndingOut):
            if self._out is not None and not self._hung_up:
                with contextlib.suppress(ConnectionClosed):
                    await self._ws.send(self._out.stop())
            self._ending.set()
        return True

    async def close(self, error: BotProtocolError | None = None) -> None:
        self._started.set()
        self._ending.set()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self._ws.close(1000 if error is None else 1008, "vae"), 5.0)


def check_config(config: ConnectorConfig) -> tuple[TwilioOptions, dict[str, str]]:
    """The options and custom parameters of ``config``; raises for wrong ones or a bad URL."""
    parsed = parse_options(config.options)
    check_urls(config, "twilio", ("ws://", "wss://"), prefix="twilio+")
    return parsed


async def dial(config: ConnectorConfig, role: Side) -> TwilioEndpoint:
    """Open the WebSocket to the bot at ``config.url`` (``twilio+ws://`` or ``ws://``)."""
    options, custom = check_config(config)
    url = config.url.removeprefix("twilio+")
    try:
        ws = await connect(url, max_size=16 * 1024 * 1024, open_timeout=options.open_timeout_s)
    except (OSError, WebSocketException, TimeoutError) as exc:
        raise ConnectorError(f"cannot reach Twilio Media Streams bot at {url}: {exc}") from exc
    return TwilioEndpoint(ws, url, role, options, custom)
