"""Where a session's tool backend is, and calling it over HTTP: what an agent needs.

The bridge serves one backend per session (``vae run --tool-backend``) and
tells the agent where in ``SessionStart.tool_backend`` (and through its
connector: docs/contract.md). The layout is fixed, so one base URL says it
all (``VAE_TOOLS_URL`` is that base)::

    POST {http_url}/tools/NAME     JSON arguments in, JSON result out
    GET  {http_url}/openapi.json   the tools as an OpenAPI 3.1 document
    {http_url}/mcp                 the same tools over MCP (streamable HTTP)

:func:`call_tool` is a blocking call with the standard library only (run it
in a thread from async code), as the reference agent does with
``vae bot agent --tool-backend``.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from typing import Any

#: The environment variable holding ``http_url`` for an agent vae starts.
ENV_VAR = "VAE_TOOLS_URL"


@dataclass(frozen=True)
class BackendAddresses:
    """``SessionStart.tool_backend``: where this session's tools are served."""

    http_url: str
    openapi_url: str
    mcp_url: str

    @classmethod
    def at(cls, http_url: str) -> BackendAddresses:
        base = http_url.rstrip("/")
        return cls(base, f"{base}/openapi.json", f"{base}/mcp")

    def tool_url(self, name: str) -> str:
        return f"{self.http_url}/tools/{urllib.parse.quote(name, safe='')}"

    def to_dict(self) -> dict[str, str]:
        return {"http_url": self.http_url, "openapi_url": self.openapi_url, "mcp_url": self.mcp_url}


def agent_environment(addresses: BackendAddresses) -> dict[str, str]:
    """The environment of an agent process started for one session: ``VAE_TOOLS_URL``."""
    return {ENV_VAR: addresses.http_url}


def call_tool(
    http_url: str, name: str, arguments: dict[str, Any], timeout_s: float = 30.0
) -> tuple[int, Any]:
    """POST one call; return ``(status, JSON body)`` (an HTTP error is a status, not raised).

    Raises :class:`OSError` when the backend cannot be reached.
    """
    data = json.dumps(arguments).encode()
    request = urllib.request.Request(
        BackendAddresses.at(http_url).tool_url(name),
        data=data,
        method="POST",
        headers={"Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as response:
            status, raw = int(response.status), response.read()
    except urllib.error.HTTPError as exc:
        status, raw = int(exc.code), exc.read()
    try:
        return status, json.loads(raw) if raw else None
    except json.JSONDecodeError:
        return status, raw.decode("utf-8", errors="replace")
