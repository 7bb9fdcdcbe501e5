"""Bad WebRTC bots for the WebRTC connector's failure tests: an offer endpoint on loopback.

``OfferServer(mode)`` answers ``POST /api/offer`` (plain asyncio, no web
framework) the way a broken bot would:

- ``http_error``: 500 with a JSON error body;
- ``garbage_sdp``: 200 with ``{"type": "answer", "sdp": "garbage"}``;
- ``no_ice``: a real aiortc answer with every ICE candidate removed, from a
  peer closed at once, so ICE never connects;
- ``garbage_rtvi``: a real aiortc peer that answers ``client-ready`` with
  ``bot-ready`` and then sends bytes that are no JSON on the data channel.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any

from aiortc import RTCPeerConnection, RTCSessionDescription


class OfferServer:
    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.peers: list[RTCPeerConnection] = []
        self._server: asyncio.Server | None = None

    async def __aenter__(self) -> OfferServer:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        for pc in self.peers:
            await pc.close()

    @property
    def url(self) -> str:
        assert self._server is not None
        port = self._server.sockets[0].getsockname()[1]
        return f"webrtc+http://127.0.0.1:{port}/api/offer"

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        length = next(
            int(line.split(b":", 1)[1])
            for line in head.split(b"\r\n")
            if line.lower().startswith(b"content-length:")
        )
        offer = json.loads(await reader.readexactly(length))
        status, body = await self._answer(offer)
        data = json.dumps(body).encode()
        writer.write(
            f"HTTP/1.1 {status} X\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(data)}\r\nConnection: close\r\n\r\n".encode()
            + data
        )
        await writer.drain()
        writer.close()

    async def _answer(self, offer: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        if self.mode == "http_error":
            return 500, {"detail": "the bot is out of pipelines"}
        if self.mode == "garbage_sdp":
            return 200, {"type": "answer", "sdp": "garbage", "pc_id": "x"}
        pc = RTCPeerConnection()
        self.peers.append(pc)

        @pc.on("datachannel")
        def channel(ch: Any) -> None:
            @ch.on("message")
            def message(data: Any) -> None:
                if json.loads(data).get("type") == "client-ready":
                    ch.send(json.dumps({"label": "rtvi-ai", "type": "bot-ready", "data": {}}))
                    ch.send("\x00\x01 this is no json {")

        await pc.setRemoteDescription(RTCSessionDescription(offer["sdp"], "offer"))
        for transceiver in pc.getTransceivers():
            transceiver.direction = "recvonly"
        await pc.setLocalDescription(await pc.createAnswer())
        sdp = pc.localDescription.sdp
        if self.mode == "no_ice":
            # No candidates, and nobody behind the answer to check ours: ICE cannot connect.
            await pc.close()
            sdp = "\r\n".join(x for x in sdp.split("\r\n") if not x.startswith("a=candidate"))
        return 200, {"type": "answer", "sdp": sdp, "pc_id": "fake"}


@contextlib.asynccontextmanager
async def offer_server(mode: str) -> Any:
    async with OfferServer(mode) as server:
        yield server
