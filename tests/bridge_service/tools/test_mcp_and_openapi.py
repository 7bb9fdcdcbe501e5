"""The same tools over MCP (a client from the ``mcp`` package) and as an OpenAPI document."""

from __future__ import annotations

import asyncio
import json
import urllib.request
import warnings
from typing import Any

import pytest
from openapi_spec_validator import validate

from tests.bridge_service.tools.conftest import INITIAL, TOOLS, Served

mcp = pytest.importorskip("mcp")


def _text(result: Any) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


async def test_an_mcp_client_lists_and_calls_the_tools(served: Served) -> None:
    assert served.backend.addresses is not None
    async with mcp.Client(served.backend.addresses.mcp_url) as client:
        listed = await client.list_tools()
        by_name = {t.name: t for t in listed.tools}
        assert set(by_name) == set(TOOLS)
        schema = by_name["book_table"].input_schema
        assert schema["properties"]["party_size"]["type"] == "integer"
        assert schema["properties"]["date"] == {"type": "string", "format": "date",
                                                "description": "ISO date"}  # fmt: skip
        assert schema["additionalProperties"] is False
        assert set(schema["required"]) == {"date", "time", "party_size"}

        booked = await client.call_tool(
            "book_table", {"date": "2026-05-01", "time": "19:00", "party_size": 4}
        )
        assert not booked.is_error and json.loads(_text(booked)) == {"ok": True}
        got = await client.call_tool("get_booking", {"booking_id": "2026-05-01"})
        assert got.structured_content == {"date": "2026-05-01", "time": "19:00", "party": 4}

        down = await client.call_tool("cancel_booking", {"booking_id": "2026-05-01"})
        assert down.is_error and _text(down).startswith("HTTP 503: ")
        assert "the booking API is down" in _text(down)
        unknown = await client.call_tool("drop_tables", {})
        assert unknown.is_error and _text(unknown).startswith("HTTP 404: ")
        wrong = await client.call_tool(
            "book_table", {"date": "2026-05-01", "time": "19:00", "party_size": "4"}
        )
        assert wrong.is_error and "HTTP 422" in _text(wrong) and "party_size" in _text(wrong)
        extra = await client.call_tool("list_specials", {"everything": True})
        assert extra.is_error and "everything" in _text(extra)
        # No arguments at all is an empty object.
        assert not (await client.call_tool("list_specials")).is_error
    calls = served.recorded.calls()
    assert [(c["tool"], c["status"], c["transport"]) for c in calls] == [
        ("book_table", 200, "mcp"),
        ("get_booking", 200, "mcp"),
        ("cancel_booking", 503, "mcp"),
        ("drop_tables", 404, "mcp"),
        ("book_table", 422, "mcp"),
        ("list_specials", 422, "mcp"),
        ("list_specials", 200, "mcp"),
    ]
    assert set(served.backend.world.state["bookings"]) == {*INITIAL["bookings"], "2026-05-01"}


async def test_an_mcp_call_with_arguments_that_are_no_object_is_refused_and_recorded(
    served: Served,
) -> None:
    """The package refuses it before the tool: still a clear error, still recorded."""
    assert served.backend.addresses is not None
    async with mcp.Client(served.backend.addresses.mcp_url) as client:
        session = client.session
        # Built without the client's own check of the params (model_construct).
        params = mcp.types.CallToolRequestParams.model_construct(name="book_table", arguments="x")
        request = mcp.types.CallToolRequest.model_construct(params=params)
        with (
            pytest.raises(mcp.MCPError, match=r"(?i)invalid"),
            warnings.catch_warnings(),
        ):
            warnings.simplefilter("ignore")  # pydantic notes the wrong type it serialises
            await session.send_request(request, mcp.types.CallToolResult)
        # The session goes on.
        assert not (await client.call_tool("list_specials", {})).is_error
    statuses = [(c["tool"], c["status"]) for c in served.recorded.calls()]
    assert statuses == [("book_table", 400), ("list_specials", 200)]


def _get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=10) as response:
        return json.loads(response.read())


async def test_the_openapi_document_validates_and_lists_every_tool(served: Served) -> None:
    assert served.backend.addresses is not None
    doc = await asyncio.to_thread(_get, served.backend.addresses.openapi_url)
    validate(doc)  # raises on an invalid OpenAPI 3.1 document
    assert doc["openapi"].startswith("3.1")
    assert set(doc["paths"]) == {f"/tools/{name}" for name in TOOLS}
    op = doc["paths"]["/tools/book_table"]["post"]
    assert op["operationId"] == "book_table"
    body = op["requestBody"]["content"]["application/json"]["schema"]
    assert body["properties"]["party_size"]["type"] == "integer"
    assert {"200", "400", "404", "413", "422"} <= set(op["responses"])
    assert doc["servers"] == [{"url": served.backend.addresses.http_url}]
