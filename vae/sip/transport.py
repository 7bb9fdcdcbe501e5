"""SIP over UDP and TCP on one host and port (RFC 3261 §18), asyncio protocols only.

A :class:`SipTransport` binds a UDP socket and a TCP listener to the same
``host:port`` (port 0: one free for both) and hands every message it reads
to its owner as ``(message, peer)``; a message it refuses
(:class:`~vae.sip.messages.BadMessage`) goes to ``on_refused`` with the raw
bytes' start, so the owner can answer 400/513 and record it. Nothing here
runs a task: reading is protocol callbacks, sending is ``sendto`` or a
stream write, and a TCP connection to a peer is opened on first use and kept
(responses to a request that came over TCP go back on its connection).

TCP framing: messages follow each other on the stream, each header section
ended by a blank line and its body ``Content-Length`` bytes long; a header
section longer than :data:`~vae.sip.messages.MAX_MESSAGE` without its end,
or a body beyond it, is refused and the connection closed (a peer cannot
make vae buffer without bound). CRLF keep-alives are skipped.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import socket
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from vae.sip.messages import MAX_MESSAGE, BadMessage, SipMessage, parse

log = logging.getLogger("vae.sip.transport")
_LENGTH = re.compile(rb"^(?:content-length|l)[ \t]*:[ \t]*(\d+)[ \t]*$", re.I | re.M)


@dataclass(frozen=True, slots=True)
class Peer:
    """The other end of a message: transport ("udp"/"tcp"), host, port."""

    transport: str
    host: str
    port: int

    def __str__(self) -> str:
        return f"{self.host}:{self.port}/{self.transport}"


OnMessage = Callable[[SipMessage, Peer], None]
OnRefused = Callable[[BadMessage, Peer, bytes], None]


class _Udp(asyncio.DatagramProtocol):
    def __init__(self, owner: SipTransport) -> None:
        self.owner = owner

    def datagram_received(self, data: bytes, addr: Any) -> None:
        if data.strip(b"\r\n"):
            self.owner.deliver(data, Peer("udp", addr[0], addr[1]), stream=False)

    def error_received(self, exc: Exception) -> None:  # an ICMP error for an earlier send
        log.debug("SIP UDP error: %s", exc)


class _Stream(asyncio.Protocol):
    def __init__(self, owner: SipTransport) -> None:
        self.owner = owner
        self.buffer = bytearray()
        self.transport: asyncio.Transport | None = None
        self.peer: Peer | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        host, port = transport.get_extra_info("peername")[:2]
        self.peer = Peer("tcp", host, port)
        self.owner.streams[self.peer] = self

    def connection_lost(self, exc: Exception | None) -> None:
        if self.peer is not None and self.owner.streams.get(self.peer) is self:
            del self.owner.streams[self.peer]

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        while self.peer is not None and self.transport is not None:
            while self.buffer[:2] == b"\r\n":
                del self.buffer[:2]
            end = self.buffer.find(b"\r\n\r\n")
            if end < 0:
                if len(self.buffer) > MAX_MESSAGE:
                    self._refuse(513, "header section without an end beyond the size limit")
                return
            head = bytes(self.buffer[:end])
            found = _LENGTH.search(head)
            length = int(found.group(1)) if found else 0
            total = end + 4 + length
            if total > MAX_MESSAGE:
                self._refuse(513, f"message of {total} bytes on a stream (limit {MAX_MESSAGE})")
                return
            if len(self.buffer) < total:
                return
            message = bytes(self.buffer[:total])
            del self.buffer[:total]
            self.owner.deliver(message, self.peer, stream=True)

    def _refuse(self, status: int, problem: str) -> None:
        assert self.peer is not None and self.transport is not None
        self.owner.on_refused(BadMessage(status, problem), self.peer, bytes(self.buffer[:200]))
        self.buffer.clear()
        self.transport.close()

    def write(self, data: bytes) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self.transport.write(data)


class SipTransport:
    def __init__(self, host: str, port: int, on_message: OnMessage, on_refused: OnRefused) -> None:
        self.host, self.port = host, port
        self.on_message, self.on_refused = on_message, on_refused
        self.streams: dict[Peer, _Stream] = {}
        self._udp: asyncio.DatagramTransport | None = None
        self._server: asyncio.Server | None = None

    async def start(self) -> SipTransport:
        loop = asyncio.get_running_loop()
        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        for _ in range(20):
            udp, _proto = await loop.create_datagram_endpoint(
                lambda: _Udp(self), local_addr=(self.host, self.port), family=family
            )
            port = udp.get_extra_info("sockname")[1]
            try:
                self._server = await loop.create_server(
                    lambda: _Stream(self), self.host, port, family=family, reuse_address=True
                )
            except OSError:
                udp.close()
                if self.port:
                    raise
                continue  # the free UDP port is taken on TCP: try another
            self._udp, self.port = udp, port
            return self
        raise OSError(f"no port free for both UDP and TCP on {self.host}")

    def deliver(self, data: bytes, peer: Peer, stream: bool) -> None:
        try:
            message = parse(data, stream=stream)
        except BadMessage as exc:
            self.on_refused(exc, peer, data[:200])
            return
        self.on_message(message, peer)

    def send_now(self, data: bytes, peer: Peer) -> bool:
        """Send over UDP or an open TCP connection; False when there is no way now."""
        if peer.transport == "udp":
            if self._udp is None or self._udp.is_closing():
                return False
            self._udp.sendto(data, (peer.host, peer.port))
            return True
        stream = self.streams.get(peer)
        if stream is None:
            return False
        stream.write(data)
        return True

    async def send(self, data: bytes, peer: Peer) -> None:
        """Send, opening a TCP connection to ``peer`` first if there is none."""
        if self.send_now(data, peer):
            return
        if peer.transport != "tcp":
            raise ConnectionError("the SIP transport is closed")
        loop = asyncio.get_running_loop()
        _transport, stream = await loop.create_connection(
            lambda: _Stream(self), peer.host, peer.port, local_addr=(self.host, 0)
        )
        # Responses and requests of this peer come back on this connection.
        assert stream.peer is not None
        self.streams[peer] = stream
        stream.write(data)

    async def close(self) -> None:
        for stream in list(self.streams.values()):
            if stream.transport is not None:
                stream.transport.close()
        self.streams.clear()
        if self._udp is not None:
            self._udp.close()
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await self._server.wait_closed()
