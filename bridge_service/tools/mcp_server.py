"""The backend's tools as an MCP server (``mcp`` package, streamable HTTP at ``/mcp``).

pipecat and LiveKit Agents load tools from MCP servers, so an agent built on
them can use a session's tools by pointing its MCP client at ``mcp_url``.
``tools/list`` lists each tool with its arguments' JSON Schema (the one the
OpenAPI document uses); ``tools/call`` goes through the same
:meth:`~vae.bridge_service.tools.backend.ToolBackend.call` as HTTP, so it is
answered and recorded the same way. An answer of status 400 or more is an
MCP tool error: ``isError: true``, its text ``HTTP <status>: <JSON body>``.
A ``tools/call`` the ``mcp`` package refuses before it reaches the tool
(arguments that are not an object, no tool name) is seen on its way in
(:func:`watch_refusals`) and recorded as a 400 too. The server is stateless
and answers in JSON (no event stream to keep open per session).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import mcp_types as types
from mcp.server.lowlevel import Server
from starlette.types import ASGIApp, Message, Receive, Scope, Send

if TYPE_CHECKING:
    from vae.bridge_service.tools.backend import ToolBackend


def _description(name: str, arguments: dict[str, str]) -> str:
    listed = "; ".join(f"{arg}: {text}" if text else arg for arg, text in arguments.items())
    return f"{name} — arguments: {listed}" if listed else f"{name} — no arguments"


def mcp_server(backend: ToolBackend) -> Server[Any]:
    """A low-level MCP server over ``backend``'s tools."""

    async def list_tools(
        ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        tools = [
            types.Tool(
                name=name,
                description=_description(name, tool.arguments),
                input_schema=tool.input_schema(),
            )
            for name, tool in sorted(backend.world.tools.tools.items())
        ]
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        arrival = backend.now_ns()
        arguments = {} if params.arguments is None else params.arguments
        served = await backend.call(params.name, arguments, "mcp", arrival)
        text = json.dumps(served.body, ensure_ascii=False, default=str)
        if not served.ok:
            return types.CallToolResult(
                content=[types.TextContent(text=f"HTTP {served.status}: {text}")], is_error=True
            )
        structured = served.body if isinstance(served.body, dict) else None
        return types.CallToolResult(
            content=[types.TextContent(text=text)], structured_content=structured
        )

    server: Server[Any] = Server(
        "vae-tool-backend", version="1", on_list_tools=list_tools, on_call_tool=call_tool
    )
    return server


def _refused_calls(body: bytes) -> list[str]:
    """The tool names of ``tools/call`` requests in ``body`` whose params the package refuses."""
    try:
        decoded = json.loads(body)
    except (ValueError, RecursionError):
        return []  # the package answers a parse error; not a tool call
    out = []
    for item in decoded if isinstance(decoded, list) else [decoded]:
        if not isinstance(item, dict) or item.get("method") != "tools/call":
            continue
        params = item.get("params")
        args = params.get("arguments") if isinstance(params, dict) else None
        name = params.get("name") if isinstance(params, dict) else None
        if not isinstance(name, str) or not (args is None or isinstance(args, dict)):
            out.append(name if isinstance(name, str) else "")
    return out


def watch_refusals(app: ASGIApp, backend: ToolBackend, path: str = "/mcp") -> ASGIApp:
    """``app``, recording each malformed ``tools/call`` posted to ``path`` before passing it on."""

    async def asgi(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST" or scope["path"] != path:
            await app(scope, receive, send)
            return
        arrival = backend.now_ns()
        body, more, first = b"", True, None
        while more and len(body) <= backend.max_body_bytes:
            message = await receive()
            if message["type"] != "http.request":
                first = message
                break
            body += message.get("body", b"")
            more = bool(message.get("more_body", False))
        for name in _refused_calls(body) if not more else []:
            why = "invalid call: params.name must be a string and params.arguments an object"
            await backend.refuse(name, "mcp", arrival, 400, why)
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                if first is not None:
                    return first
                return {"type": "http.request", "body": body, "more_body": more}
            return await receive()

        await app(scope, replay, send)

    return asgi
