"""Each connector tells its agent where the session's tool backend is (nothing without one)."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from typing import Any

from websockets.asyncio.server import ServerConnection, serve

from vae.bridge_service.connectors.base import ConnectorConfig, SessionStartInfo
from vae.bridge_service.connectors.pipecat.messages import Requests, start_messages
from vae.bridge_service.connectors.pipecat.options import parse_options
from vae.bridge_service.connectors.twilio.connector import dial
from vae.recordings.models import Side
from vae.tools.client import BackendAddresses

AT = BackendAddresses.at("http://127.0.0.1:4321")
START = SessionStartInfo(
    "run", "sess", "sc", 1, Side.AGENT, "d", "p", {}, {}, [], {}, 10_000, False, 8000
)


async def _twilio_start(start: SessionStartInfo) -> dict[str, Any]:
    got: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()

    async def bot(ws: ServerConnection) -> None:
        async for raw in ws:
            msg = json.loads(raw)
            if msg["event"] == "start" and not got.done():
                got.set_result(msg["start"]["customParameters"])

    async with serve(bot, "127.0.0.1", 0) as server:
        port = server.sockets[0].getsockname()[1]
        endpoint = await dial(
            ConnectorConfig("twilio", f"twilio+ws://127.0.0.1:{port}"), Side.AGENT
        )
        try:
            await endpoint.send(start)
            async with asyncio.timeout(10):
                return await got
        finally:
            await endpoint.close()


async def test_twilio_custom_parameters() -> None:
    params = await _twilio_start(dataclasses.replace(START, tool_backend=AT))
    assert params["tool_backend_http_url"] == "http://127.0.0.1:4321"
    assert params["tool_backend_openapi_url"] == "http://127.0.0.1:4321/openapi.json"
    assert params["tool_backend_mcp_url"] == "http://127.0.0.1:4321/mcp"
    assert params["session_id"] == "sess"
    plain = await _twilio_start(START)
    assert not [k for k in plain if k.startswith("tool_backend")]


def test_pipecat_client_message() -> None:
    options = parse_options({})
    messages = start_messages(dataclasses.replace(START, tool_backend=AT), options, Requests())
    bodies = [m["data"] for m in messages if m["type"] == "client-message"]
    (told,) = [b for b in bodies if b["t"] == "set_tool_backend"]
    assert told["d"] == AT.to_dict()
    plain = start_messages(START, options, Requests())
    assert not [m for m in plain if m["data"].get("t") == "set_tool_backend"]


def test_a_sip_invite_names_the_backend_bound_before_the_dial() -> None:
    from tests.bridge_service.connectors.test_trace_context import plan
    from vae.bridge_service.connectors.sip.outbound import session_headers
    from vae.bridge_service.runs.dial import dial_for

    config = ConnectorConfig("sip", "sip:agent@127.0.0.1")
    headers = dict(session_headers(dial_for(config, plan(), AT), []))
    assert headers["X-Vae-Tools-Http-Url"] == AT.http_url
    assert headers["X-Vae-Tools-Openapi-Url"] == AT.openapi_url
    assert headers["X-Vae-Tools-Mcp-Url"] == AT.mcp_url
    assert "X-Vae-Session" in headers
    without = dict(session_headers(dial_for(config, plan()), []))
    assert not [h for h in without if h.startswith("X-Vae-Tools")]


async def test_the_backend_serves_the_port_reserved_for_it() -> None:
    """A call made before the backend serves waits in the backlog and is answered."""
    from vae.bridge_service.tools.backend import Reservation, ToolBackend
    from vae.bridge_service.tools.http import application
    from vae.tools.spec import ToolSet
    from vae.tools.world import ToolWorld

    reserved = Reservation()
    port = int(reserved.addresses.http_url.rsplit(":", 1)[1])
    # Connected and the request sent while nothing serves the port yet.
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"POST /tools/ping HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                 b"Content-Length: 2\r\nConnection: close\r\n\r\n{}")  # fmt: skip
    await writer.drain()

    async def record(*_: Any) -> None:
        return None

    world = ToolWorld(ToolSet.from_side({"ping": {}}, {}), {}, [])
    backend = ToolBackend(world, record, lambda: 0, 0)
    try:
        assert await backend.start(application, reserved.take()) == reserved.addresses
        status_line = await asyncio.wait_for(reader.readline(), 10)
        assert status_line.startswith(b"HTTP/1.1 200"), status_line
    finally:
        writer.close()
        await backend.close()
    reserved.close()  # taken: a no-op
    assert reserved.socket is None
