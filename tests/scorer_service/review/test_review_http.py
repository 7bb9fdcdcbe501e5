"""The review server's HTTP edge, in-process on loopback: malformed and oversized
requests, byte ranges for the audio, routes, and the headers every answer carries."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.scorer_service.review.test_review_page import RUN, make_db
from vae.scorer_service.review.server import ReviewServer, is_loopback


@pytest.fixture
async def server(tmp_path: Path) -> AsyncIterator[ReviewServer]:
    db = await asyncio.to_thread(make_db, tmp_path)
    srv = ReviewServer(db, RUN, "ann")
    started = asyncio.Event()
    async with asyncio.TaskGroup() as tg:
        task = tg.create_task(srv.serve(lambda _s: started.set()))
        await asyncio.wait_for(started.wait(), 30)
        try:
            yield srv
        finally:
            task.cancel()


async def raw(srv: ReviewServer, data: bytes) -> tuple[int, dict[str, str], bytes]:
    host, port = srv.url.split("//")[1].split("/")[0].split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    writer.write(data)
    await writer.drain()
    reply = await asyncio.wait_for(reader.read(), 30)
    writer.close()
    head, _, body = reply.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {k.lower(): v.strip() for k, _, v in (x.partition(":") for x in lines[1:])}
    return int(lines[0].split(" ")[1]), headers, body


def get(path: str, token: str, extra: str = "") -> bytes:
    sep = "&" if "?" in path else "?"
    return (f"GET {path}{sep}token={token} HTTP/1.1\r\nHost: 127.0.0.1\r\n{extra}\r\n").encode()


async def test_malformed_and_oversized_requests(server: ReviewServer) -> None:
    token = server.token
    assert (await raw(server, b"NONSENSE\r\n\r\n"))[0] == 400
    assert (await raw(server, b"GET / HTTP/1.1\r\nbroken header\r\n\r\n"))[0] == 400
    huge = b"GET / HTTP/1.1\r\nX-Pad: " + b"a" * 20_000 + b"\r\n\r\n"
    assert (await raw(server, huge))[0] == 413
    body = b"x" * (70 * 1024)
    head = (
        f"POST /labels HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Vae-Token: {token}\r\n"
        "Content-Type: application/json\r\n"
    )
    post = f"{head}Content-Length: {len(body)}\r\n\r\n".encode()
    assert (await raw(server, post + body))[0] == 413
    not_json = f"{head}Content-Length: 3\r\n\r\n{{x]".encode()
    status, _, reply = await raw(server, not_json)
    assert status == 400 and json.loads(reply)["error"] == "the body is not JSON"
    status, headers, _ = await raw(server, get("/nope", token))
    assert status == 404
    assert "default-src 'none'" in headers["content-security-policy"]
    assert headers["cache-control"] == "no-store" and headers["connection"] == "close"


async def test_audio_is_served_in_byte_ranges(server: ReviewServer) -> None:
    token = server.token
    sid = f"{RUN}/book_table/1"
    path = "/audio/" + sid.replace("/", "%2F")
    status, headers, whole = await raw(server, get(path, token))
    assert status == 200 and headers["content-type"] == "audio/ogg"
    assert headers["accept-ranges"] == "bytes" and len(whole) == int(headers["content-length"])
    status, headers, part = await raw(server, get(path, token, "Range: bytes=10-19\r\n"))
    assert status == 206 and part == whole[10:20]
    assert headers["content-range"] == f"bytes 10-19/{len(whole)}"
    status, _, tail = await raw(server, get(path, token, "Range: bytes=-5\r\n"))
    assert status == 206 and tail == whole[-5:]
    assert (await raw(server, get(path, token, f"Range: bytes={len(whole)}-\r\n")))[0] == 416
    assert (await raw(server, get("/audio/someone-else", token)))[0] == 404
    assert (await raw(server, get(path, "wrong")))[0] == 403


async def test_the_labels_route(server: ReviewServer) -> None:
    status, _, body = await raw(server, get("/labels", server.token))
    assert status == 200 and json.loads(body) == []
    put = f"PUT /labels?token={server.token} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode()
    assert (await raw(server, put))[0] == 405


def test_loopback_names() -> None:
    assert all(is_loopback(h) for h in ("127.0.0.1", "localhost", "::1", "[::1]", "127.1.2.3"))
    assert not any(is_loopback(h) for h in ("0.0.0.0", "example.com", "10.0.0.1", ""))
