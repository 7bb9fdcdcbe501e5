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
