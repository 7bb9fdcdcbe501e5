"""The backend's tools as an MCP server (``mcp`` package, streamable HTTP at ``/mcp``).

pipecat and LiveKit Agents load tools from MCP servers, so an agent built on
them can use a session's tools by pointing its MCP client at ``mcp_url``.
``tools/list`` lists each tool with its arguments' JSON Schema (the one the
OpenAPI document uses); ``tools/call`` goes through the same
:meth:`~vae.bridge_service.tools.backend.ToolBackend.call` as HTTP, so it is
answered and recorded the same way. An answer of status 400 or more is an
MCP tool error: ``isError: true``, its text ``HTTP <status>: <JSON body>``.
A call the ``mcp`` package refuses before it reaches the tool (arguments
that are not an object) is recorded as a 400 too. The server is stateless
and answers in JSON (no event stream to keep open per session).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError

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

    async def record_refusals(ctx: Any, call_next: Any) -> Any:
        """A tools/call the package refuses before our handler (bad params) is recorded too."""
        arrival = backend.now_ns()
        try:
            return await call_next(ctx)
        except MCPError as exc:
            if ctx.method == "tools/call":
                params = ctx.params if isinstance(ctx.params, dict) else {}
                name = str(params.get("name", ""))
                await backend.refuse(name, "mcp", arrival, 400, f"invalid call: {exc}"[:200])
            raise

    server: Server[Any] = Server(
        "vae-tool-backend", version="1", on_list_tools=list_tools, on_call_tool=call_tool
    )
    server.middleware.append(record_refusals)
    return server
