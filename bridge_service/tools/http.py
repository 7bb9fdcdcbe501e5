"""The backend's HTTP face: ``POST /tools/NAME``, ``GET /openapi.json``, and ``/mcp``.

Every request under ``/tools/`` is answered in JSON and recorded, whatever it
is: a body larger than the limit (413, read no further than the limit), not
JSON or not a JSON object (400), a method other than POST (405), an unknown
tool or a name with path tricks in it (``../x``, ``a%2Fb``: 404, since only
a declared name is ever a tool), arguments the tool does not take or of the
wrong type (422). Nothing a request holds is ever used as a path, a key
outside the session's DB or code.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp

from vae.bridge_service.tools.backend import EXCERPT
from vae.bridge_service.tools.mcp_server import mcp_server, watch_refusals
from vae.bridge_service.tools.openapi import openapi_document

if TYPE_CHECKING:
    from vae.bridge_service.tools.backend import ToolBackend


class BodyTooLarge(Exception):
    pass


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


async def read_body(request: Request, limit: int) -> bytes:
    """The body, refusing (``BodyTooLarge``) as soon as it passes ``limit`` bytes."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise BodyTooLarge(int(declared))
    data = bytearray()
    async for chunk in request.stream():
        data += chunk
        if len(data) > limit:
            raise BodyTooLarge(len(data))
    return bytes(data)


def parse_arguments(data: bytes) -> tuple[Any, str]:
    """The JSON document of a body, or why it is none (NaN and Infinity are no JSON)."""
    if not data.strip():
        return None, "the body is empty: send the arguments as a JSON object ({} for none)"
    try:
        return json.loads(data.decode("utf-8"), parse_constant=_reject_constant), ""
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        return None, f"the body is not JSON: {str(exc)[:EXCERPT]}"


def _answer(status: int, body: Any) -> Response:
    return JSONResponse(body, status_code=status)


def application(backend: ToolBackend) -> ASGIApp:
    """The ASGI app of one backend: the MCP app with the tool and OpenAPI routes added."""

    async def tool(request: Request) -> Response:
        arrival = backend.now_ns()
        name = str(request.path_params.get("name", ""))
        if request.method != "POST":
            message = f"{request.method} is not allowed: POST the arguments as JSON"
            served = await backend.refuse(name, "http", arrival, 405, message)
            return _answer(served.status, served.body)
        try:
            data = await read_body(request, backend.max_body_bytes)
        except BodyTooLarge as exc:
            message = f"the body is larger than {backend.max_body_bytes} bytes"
            served = await backend.refuse(name, "http", arrival, 413, message,
                                          body_bytes=exc.args[0])  # fmt: skip
            return _answer(served.status, served.body)
        arguments, problem = parse_arguments(data)
        if problem:
            excerpt = data[:EXCERPT].decode("utf-8", errors="replace")
            served = await backend.refuse(name, "http", arrival, 400, problem,
                                          body=excerpt, body_bytes=len(data))  # fmt: skip
            return _answer(served.status, served.body)
        served = await backend.call(name, arguments, "http", arrival)
        return _answer(served.status, served.body)

    async def openapi(request: Request) -> Response:
        addresses = backend.addresses
        base = addresses.http_url if addresses is not None else ""
        return _answer(200, openapi_document(backend.world.tools, base, backend.title))

    routes = [
        Route("/tools/{name:path}", tool, methods=["GET", "POST", "PUT", "PATCH", "DELETE"]),
        Route("/openapi.json", openapi, methods=["GET"]),
    ]
    app: Starlette = mcp_server(backend).streamable_http_app(
        stateless_http=True,
        json_response=True,
        max_request_body_size=backend.max_body_bytes,
        custom_starlette_routes=routes,
    )
    return watch_refusals(app, backend)
