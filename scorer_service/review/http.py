"""Just enough HTTP/1.1 for the review page, on asyncio streams.

Why not a framework: the page needs four routes on loopback, and vae's
runtime has no web framework. Why not ``http.server``: its handlers run in
threads, and every write must go through the store's single writer, which
lives on the event loop. So each connection reads one request — bounded
header and body sizes, a read timeout — gets one response, and is closed
(``Connection: close``). Byte ranges are served for audio, because Chromium
seeks in an ``<audio>`` only when its server answers ranges.
"""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlsplit

MAX_HEAD = 16 * 1024
MAX_BODY = 64 * 1024
READ_TIMEOUT_S = 10.0
REASONS = {200: "OK", 206: "Partial Content", 400: "Bad Request", 403: "Forbidden",
           404: "Not Found", 405: "Method Not Allowed", 413: "Payload Too Large",
           416: "Range Not Satisfiable", 500: "Internal Server Error"}  # fmt: skip
#: Nothing but the page's own origin: no scripts, styles or media from elsewhere.
SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; script-src 'unsafe-inline'; "
    "style-src 'unsafe-inline'; img-src data:; media-src 'self'; connect-src 'self'; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}
_RANGE = re.compile(r"^bytes=(\d*)-(\d*)$")


class BadRequest(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes = b""

    def param(self, name: str) -> str:
        values = self.query.get(name)
        return values[0] if values else ""


@dataclass
class Response:
    status: int
    body: bytes = b""
    content_type: str = "text/plain; charset=utf-8"
    headers: dict[str, str] = field(default_factory=dict)


def json_response(status: int, value: Any) -> Response:
    data = json.dumps(value, ensure_ascii=False).encode()
    return Response(status, data, "application/json; charset=utf-8")


async def read_request(reader: asyncio.StreamReader) -> Request:
    """One request; :class:`BadRequest` for anything malformed or too large."""
    try:
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), READ_TIMEOUT_S)
    except asyncio.LimitOverrunError:
        raise BadRequest(413, "request head too large") from None
    except (asyncio.IncompleteReadError, TimeoutError):
        raise BadRequest(400, "incomplete request") from None
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
        raise BadRequest(400, "not an HTTP/1.x request line")
    headers: dict[str, str] = {}
    for line in lines[1:]:
        if not line:
            continue
        name, sep, value = line.partition(":")
        if not sep:
            raise BadRequest(400, "malformed header")
        headers[name.strip().lower()] = value.strip()
    length_text = headers.get("content-length", "0")
    if not length_text.isdigit():
        raise BadRequest(400, "bad Content-Length")
    length = int(length_text)
    if length > MAX_BODY:
        raise BadRequest(413, f"body larger than {MAX_BODY} bytes")
    try:
        body = await asyncio.wait_for(reader.readexactly(length), READ_TIMEOUT_S)
    except (asyncio.IncompleteReadError, TimeoutError):
        raise BadRequest(400, "incomplete body") from None
    url = urlsplit(parts[1])
    return Request(parts[0].upper(), url.path, parse_qs(url.query), headers, body)


def byte_range(request: Request, data: bytes, content_type: str) -> Response:
    """The whole of ``data``, or the part a ``Range: bytes=a-b`` header asks for."""
    wanted = request.headers.get("range")
    total = len(data)
    base = {"Accept-Ranges": "bytes"}
    if not wanted:
        return Response(200, data, content_type, base)
    m = _RANGE.match(wanted.strip())
    if m is None or (not m.group(1) and not m.group(2)):
        return Response(416, b"", content_type, {**base, "Content-Range": f"bytes */{total}"})
    if m.group(1):
        start = int(m.group(1))
        end = min(int(m.group(2)), total - 1) if m.group(2) else total - 1
    else:  # the last N bytes
        start, end = max(0, total - int(m.group(2))), total - 1
    if start >= total or end < start:
        return Response(416, b"", content_type, {**base, "Content-Range": f"bytes */{total}"})
    headers = {**base, "Content-Range": f"bytes {start}-{end}/{total}"}
    return Response(206, data[start : end + 1], content_type, headers)


async def write_response(writer: asyncio.StreamWriter, response: Response, head: bool) -> None:
    lines = [f"HTTP/1.1 {response.status} {REASONS.get(response.status, 'Status')}",
             f"Content-Type: {response.content_type}",
             f"Content-Length: {len(response.body)}", "Connection: close"]  # fmt: skip
    lines += [f"{k}: {v}" for k, v in {**SECURITY_HEADERS, **response.headers}.items()]
    writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
    if not head:
        writer.write(response.body)
    await writer.drain()
