"""``POST /v1/traces``: an OTLP/HTTP receiver on a small asyncio HTTP/1.1 server.

Why its own server: the bridge must receive the agent's spans beside its audio
clock without a web framework (the ``tools`` extra's) or a thread; one
endpoint with fixed rules needs only what ``asyncio`` gives. Each request is
answered, whatever it holds:

- 404 for another path, 405 (``Allow: POST``) for another method;
- 415 for a content type other than ``application/x-protobuf`` or
  ``application/json``, or an encoding other than ``gzip``/``identity``;
- 411 without a ``Content-Length``, 413 when the body (also once unzipped)
  passes :data:`MAX_BODY`;
- 400 when the body is not an OTLP trace request;
- 200 with an ``ExportTraceServiceResponse`` otherwise (partial success
  counting the spans refused).

Connections are kept alive, bounded in number, and closed when idle.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import zlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from vae.otel.decode import DecodeError, decode, response
from vae.otel.spans import InSpan

log = logging.getLogger("vae.otel.receiver")

#: The largest request body (compressed and unzipped alike).
MAX_BODY = 8 * 1024 * 1024
#: The largest request head (request line and headers).
MAX_HEAD = 16 * 1024
#: Connections served at once; more wait in the listen backlog.
MAX_CONNECTIONS = 64
#: Seconds a kept-alive connection may stay idle (or a request take to arrive).
IDLE_S = 30.0
_TYPES = ("application/x-protobuf", "application/json")
_REASONS = {
    200: "OK", 400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed",
    411: "Length Required", 413: "Content Too Large", 415: "Unsupported Media Type",
    500: "Internal Server Error",
}  # fmt: skip

#: ``sink(spans)`` keeps the spans and answers how many it refused.
Sink = Callable[[list[InSpan]], Awaitable[int]]


@dataclass
class ReceiverStats:
    requests: int = 0
    spans: int = 0
    rejected: int = 0
    refused_requests: int = 0


class _Refused(Exception):
    def __init__(self, status: int, message: str, close: bool = False) -> None:
        super().__init__(message)
        self.status = status
        self.close = close


def _gunzip(body: bytes) -> bytes:
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        out = inflater.decompress(body, MAX_BODY + 1)
    except zlib.error as exc:
        raise _Refused(400, f"the body is not gzip: {exc}") from None
    if len(out) > MAX_BODY or inflater.unconsumed_tail:
        raise _Refused(413, f"the unzipped body is larger than {MAX_BODY} bytes")
    return out


async def _discard(reader: asyncio.StreamReader) -> None:
    """Read and drop what the sender still sends (bounded in bytes and time), so closing
    does not reset the connection before it has read the refusal."""
    left = 2 * MAX_BODY
    try:
        async with asyncio.timeout(2.0):
            while left > 0 and (chunk := await reader.read(min(left, 65536))):
                left -= len(chunk)
    except (TimeoutError, ConnectionError):
        pass


class OtlpReceiver:
    """Serves ``POST /v1/traces`` on ``host:port`` (0: a free port) until :meth:`close`."""

    def __init__(self, sink: Sink, host: str = "127.0.0.1", port: int = 0) -> None:
        self._sink = sink
        self.host = host
        self.port = port
        self.stats = ReceiverStats()
        self._server: asyncio.Server | None = None
        self._slots = asyncio.Semaphore(MAX_CONNECTIONS)
        self._connections: set[asyncio.Task[None]] = set()

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve, self.host, self.port, limit=MAX_HEAD)
        self.port = int(self._server.sockets[0].getsockname()[1])
        log.info("OTLP receiver listening on http://%s/v1/traces", self.address)

    async def close(self) -> None:
        if self._server is None:
            return
        self._server.close()
        for task in list(self._connections):
            task.cancel()
        with contextlib.suppress(Exception):
            await self._server.wait_closed()
        self._server = None

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._connections.add(task)
        try:
            async with self._slots:
                while await self._one(reader, writer):
                    pass
        except (ConnectionError, asyncio.IncompleteReadError, TimeoutError):
            pass
        except asyncio.CancelledError:
            pass
        finally:
            self._connections.discard(task)
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def _one(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        """Serve one request; False when the connection should close."""
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), IDLE_S)
        except asyncio.IncompleteReadError:
            return False
        except asyncio.LimitOverrunError:
            await self._answer(writer, 413, b"the request head is too large", "text/plain", True)
            return False
        lines = head.decode("latin-1").split("\r\n")
        parts = lines[0].split(" ")
        headers: dict[str, str] = {}
        for line in lines[1:]:
            if ":" in line:
                key, _, value = line.partition(":")
                headers[key.strip().lower()] = value.strip()
        keep = headers.get("connection", "").lower() != "close"
        self.stats.requests += 1
        try:
            if len(parts) != 3:
                raise _Refused(400, "malformed request line", close=True)
            status, body, kind = await self._handle(parts[0], parts[1], headers, reader)
        except _Refused as refused:
            self.stats.refused_requests += 1
            message = str(refused).encode()
            await self._answer(writer, refused.status, message, "text/plain", refused.close)
            if refused.close:  # let a sender still writing its body read the answer
                await _discard(reader)
            return keep and not refused.close
        await self._answer(writer, status, body, kind, not keep)
        return keep

    async def _handle(
        self, method: str, target: str, headers: dict[str, str], reader: asyncio.StreamReader
    ) -> tuple[int, bytes, str]:
        length = headers.get("content-length", "")
        body_follows = length.isdigit() and int(length) > 0
        if target.split("?")[0] != "/v1/traces":
            await self._drain(reader, length)
            raise _Refused(404, f"no such path {target[:80]!r}: send traces to /v1/traces")
        if method != "POST":
            await self._drain(reader, length)
            raise _Refused(405, "only POST is served here")
        if "chunked" in headers.get("transfer-encoding", "").lower() or not length.isdigit():
            raise _Refused(411, "send a Content-Length", close=True)
        if int(length) > MAX_BODY:
            raise _Refused(413, f"the body is larger than {MAX_BODY} bytes", close=True)
        body = b""
        if body_follows:
            body = await asyncio.wait_for(reader.readexactly(int(length)), IDLE_S)
        kind = headers.get("content-type", "").split(";")[0].strip().lower()
        if kind not in _TYPES:
            raise _Refused(415, f"content type {kind[:80]!r}: send application/x-protobuf or "
                           "application/json")  # fmt: skip
        encoding = headers.get("content-encoding", "identity").strip().lower()
        if encoding == "gzip":
            body = _gunzip(body)
        elif encoding not in ("", "identity"):
            raise _Refused(415, f"content encoding {encoding[:40]!r}: send gzip or identity")
        try:
            decoded = decode(body, kind)
        except DecodeError as exc:
            raise _Refused(400, str(exc)) from None
        refused = 0
        if decoded.spans:
            try:
                refused = await self._sink(decoded.spans)
            except Exception:  # a bug of ours: the sender is told, the server lives on
                log.exception("OTLP receiver: keeping %d spans failed", len(decoded.spans))
                raise _Refused(500, "the receiver failed to keep the spans") from None
        self.stats.spans += len(decoded.spans) - refused
        rejected = decoded.rejected + refused
        self.stats.rejected += rejected
        why = decoded.why or ("spans refused: the receiver's buffer is full" if refused else "")
        return 200, response(rejected, why, kind), kind

    async def _drain(self, reader: asyncio.StreamReader, length: str) -> None:
        if length.isdigit() and 0 < int(length) <= MAX_BODY:
            await asyncio.wait_for(reader.readexactly(int(length)), IDLE_S)
        elif length.isdigit() and int(length) > MAX_BODY:
            raise _Refused(413, f"the body is larger than {MAX_BODY} bytes", close=True)

    async def _answer(
        self, writer: asyncio.StreamWriter, status: int, body: bytes, kind: str, close: bool
    ) -> None:
        head = [
            f"HTTP/1.1 {status} {_REASONS.get(status, 'Error')}",
            f"Content-Type: {kind}",
            f"Content-Length: {len(body)}",
            "Connection: close" if close else "Connection: keep-alive",
        ]
        if status == 405:
            head.append("Allow: POST")
        writer.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body)
        await writer.drain()
