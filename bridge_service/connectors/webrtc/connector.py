"""The WebRTC connector: an unchanged pipecat bot behind SmallWebRTC's ``/api/offer``.

``vae run --agent-connector webrtc+http://HOST:PORT/api/offer`` (either side)
makes vae the WebRTC client the bot expects, once per session:

1. dial: an aiortc peer connection with one audio transceiver (the peer's
   voice out, the bot's voice in) and a data channel; the offer is posted
   (:mod:`.signalling`) and the answer applied; ICE must connect and the data
   channel open within ``ice_timeout_s``, else the attempt ends
   ``connector_failed`` naming what did not happen (an HTTP error or garbage
   in place of an answer ends it at once). The candidates both sides used are
   recorded. Then RTVI ``client-ready`` -> ``bot-ready`` on the data channel;
2. from there on it is the pipecat websocket connector's conversation
   (``pipecat.conversation``): the scenario's prompt and tools, text turns
   through ``send-text``, RTVI messages as events, the final state through
   ``get_scenario_summary``/``get_context_history``. The same bot records the
   same events and gets the same verdicts either way;
3. audio: the peer's frames go out as a track (:mod:`.media`); the bot's
   track comes back decoded, downmixed and resampled to ``send_rate``.

A data-channel message that is not a JSON object ends the session
``bot_error`` naming it; the connection failing or closing, or the bot's
``peerLeft``, is the bot leaving (``bot_disconnected``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator
from typing import Any

from aiortc import RTCConfiguration, RTCPeerConnection, RTCSessionDescription

from vae.bridge_service.connectors.base import (
    BotEvent,
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
from vae.bridge_service.connectors.pipecat.audio import BotAudioIn
from vae.bridge_service.connectors.pipecat.conversation import RtviConversation
from vae.bridge_service.connectors.webrtc.media import PeerTrack, pcm_of
from vae.bridge_service.connectors.webrtc.options import WebrtcOptions, parse_webrtc_options
from vae.bridge_service.connectors.webrtc.signalling import OfferRefused, offer_url, post_offer
from vae.recordings.models import EventKind, Side

__all__ = ["WebrtcEndpoint", "check_config", "dial"]

_GONE = object()


class WebrtcEndpoint:
    """One session's side played by a SmallWebRTC pipecat bot (a :class:`SideEndpoint`)."""

    capabilities = Capabilities(text=True)

    def __init__(self, url: str, role: Side, options: WebrtcOptions) -> None:
        self.url = url
        self.role = role
        self.options = options
        self.send_rate = options.pipecat.send_rate
        self.receive_rate = options.pipecat.receive_rate
        self.bot = BotInfo("pipecat-bot", "", {"connector": "webrtc", "url": url})
        self.pc = RTCPeerConnection(RTCConfiguration(iceServers=[]))
        self.track = PeerTrack(self.receive_rate)
        self.pc.addTransceiver(self.track, direction="sendrecv")
        self.channel = self.pc.createDataChannel("rtvi")
        self._in = BotAudioIn(self.send_rate, options.pipecat.max_chunk_ms)
        self.talk = RtviConversation(role, options.pipecat, lambda: self._in.offset,
                                     lambda: list(self._in.drain()))  # fmt: skip
        self._inbox: asyncio.Queue[Any] = asyncio.Queue()
        self._opened = asyncio.Event()
        self._ready: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._readers: list[asyncio.Task[None]] = []
        self._wake = asyncio.Event()
        self.candidates: dict[str, list[str]] = {}
        self._wire()

    def _wire(self) -> None:
        @self.channel.on("open")
        def opened() -> None:
            self._opened.set()

        @self.channel.on("message")
        def message(data: Any) -> None:
            self._on_data(data)

        @self.channel.on("close")
        def closed() -> None:
            self._inbox.put_nowait(_GONE)

        @self.pc.on("track")
        def track(track: Any) -> None:
            if track.kind == "audio":
                self._readers.append(asyncio.ensure_future(self._read_track(track)))

        @self.pc.on("connectionstatechange")
        def state() -> None:
            if self.pc.connectionState in ("failed", "closed"):
                self._inbox.put_nowait(_GONE)

    # ------------------------------------------------------------ dial
    async def connect(self) -> None:
        """Offer, answer, ICE and the data channel within ``ice_timeout_s``; then RTVI ready."""
        deadline = time.monotonic() + self.options.ice_timeout_s
        await self.pc.setLocalDescription(await self.pc.createOffer())
        offer = self.pc.localDescription
        left = max(0.1, deadline - time.monotonic())
        answer = await post_offer(self.url, offer.sdp, self.options.request_data, left)
        description = RTCSessionDescription(answer["sdp"], "answer")
        try:
            # aiortc connects ICE and DTLS inside setRemoteDescription: bound it too.
            async with asyncio.timeout(max(0.1, deadline - time.monotonic())):
                await self.pc.setRemoteDescription(description)
                await self._opened.wait()
        except TimeoutError:
            state = f"ICE {self.pc.iceConnectionState}, connection {self.pc.connectionState}"
            raise OfferRefused(
                f"WebRTC to {offer_url(self.url)} did not connect within ice_timeout_s "
                f"({self.options.ice_timeout_s:g} s; {state})"
            ) from None
        except Exception as exc:  # aiortc's ValueError/KeyError... for an answer it cannot use
            raise OfferRefused(
                f"the bot at {offer_url(self.url)} answered the offer with an SDP vae cannot "
                f"use ({type(exc).__name__}: {exc})"
            ) from exc
        self.candidates = _candidates(self.pc)
        self._send(self.talk.client_ready())
        try:
            ready = await asyncio.wait_for(
                asyncio.shield(self._ready), self.options.pipecat.ready_timeout_s
            )
        except TimeoutError:
            raise ConnectorError(
                f"the WebRTC bot at {self.url} sent no bot-ready in time"
            ) from None
        self.bot = RtviConversation.bot_info(ready, self.url, "webrtc")

    # ------------------------------------------------------------ bot -> bridge
    def _on_data(self, data: Any) -> None:
        try:
            msg = json.loads(data)
        except (TypeError, ValueError):
            msg = None
        if not isinstance(msg, dict):
            problem = f"a data-channel message that is not a JSON object: {str(data)[:200]!r}"
            self._inbox.put_nowait(BotProtocolError("rtvi", problem))
            return
        if msg.get("type") == "bot-ready" and not self._ready.done():
            self._ready.set_result(msg)
            return
        self._inbox.put_nowait(msg)

    async def _read_track(self, track: Any) -> None:
        with contextlib.suppress(Exception):  # MediaStreamError: the track ended
            while True:
                frame = await track.recv()
                try:
                    pcm, rate, channels = pcm_of(frame)
                    chunks = list(self._in.frame(pcm, rate, channels))
                except ValueError as exc:
                    self._inbox.put_nowait(BotProtocolError("track", str(exc)))
                    return
                if not self.talk.text.on:
                    for chunk in chunks:
                        self._inbox.put_nowait(chunk)

    async def receive(self) -> AsyncIterator[BotInput]:
        yield BotEvent(EventKind.LOG, time.time_ns(), {"level": "info",
                       "message": "webrtc connected", "candidates": self.candidates})  # fmt: skip
        while True:
            for out in self.talk.due_final():
                yield out
            getting = asyncio.ensure_future(self._inbox.get())
            wake = asyncio.ensure_future(self._wake.wait())
            try:
                await asyncio.wait({getting, wake}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                wake.cancel()
                if not getting.done():
                    getting.cancel()
            self._wake.clear()
            if not getting.done() or getting.cancelled():
                continue
            item = getting.result()
            if item is _GONE:
                break
            if isinstance(item, BotProtocolError):
                raise item
            if isinstance(item, dict):
                for out in self._message(item):
                    yield out
            else:
                yield item
        for out in self.talk.closing():
            yield out

    def _message(self, msg: dict[str, Any]) -> list[BotInput]:
        if msg.get("type") == "signalling":
            inner = msg.get("message")
            kind = inner.get("type") if isinstance(inner, dict) else None
            if kind == "peerLeft":
                self._inbox.put_nowait(_GONE)
            payload = {"level": "info", "message": f"webrtc signalling: {kind}"}
            return [BotEvent(EventKind.LOG, time.time_ns(), payload)]
        return self.talk.receive(msg)

    # ------------------------------------------------------------ bridge -> bot
    async def send(self, message: BridgeOutput) -> bool:
        if isinstance(message, PeerAudio):
            return self.track.push(message.pcm)
        for msg in self.talk.outgoing(message):
            self._send(msg)
        if isinstance(message, SessionEndingOut):
            self._wake.set()  # the final state may be due with nothing left to receive
        return True

    def _send(self, message: dict[str, Any]) -> None:
        if self.channel.readyState == "open":
            self.channel.send(json.dumps(message))

    async def close(self, error: BotProtocolError | None = None) -> None:
        self.track.stop()
        for task in self._readers:
            task.cancel()
        for task in self._readers:
            with contextlib.suppress(BaseException):
                await task
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.pc.close(), 5.0)


def _candidates(pc: RTCPeerConnection) -> dict[str, list[str]]:
    """The host:port of every local and remote ICE candidate (recorded: loopback only, here)."""
    found: dict[str, list[str]] = {"local": [], "remote": []}
    for transceiver in pc.getTransceivers()[:1]:
        ice = transceiver.receiver.transport.transport
        found["local"] = [f"{c.ip}:{c.port}" for c in ice.iceGatherer.getLocalCandidates()]
        found["remote"] = [f"{c.ip}:{c.port}" for c in ice.getRemoteCandidates()]
    return found


def check_config(config: ConnectorConfig) -> WebrtcOptions:
    """The options of ``config``; :class:`ConnectorOptionsError` for wrong ones or a bad URL."""
    options = parse_webrtc_options(config.options)
    check_urls(config, "webrtc", ("http://", "https://"), prefix="webrtc+")
    return options


async def dial(config: ConnectorConfig, role: Side) -> WebrtcEndpoint:
    """Connect to the SmallWebRTC bot at ``config.url``: offer, ICE, RTVI ready."""
    options = check_config(config)
    endpoint = WebrtcEndpoint(config.url, role, options)
    return await opened(endpoint, endpoint.connect())
