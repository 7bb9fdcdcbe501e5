"""How each connector tells its agent where the session's tool backend is.

``SessionStart.tool_backend`` reaches a gRPC agent as a field; an agent
behind a connector learns it the way that protocol carries session data:

- Twilio Media Streams: custom parameters of the ``start`` message
  (``tool_backend_http_url``, ``tool_backend_openapi_url``,
  ``tool_backend_mcp_url``), where a phone agent reads the call's context;
- pipecat: an RTVI client message ``set_tool_backend`` with ``{http_url,
  openapi_url, mcp_url}``, sent after the prompt;
- SIP: headers of the INVITE vae sends (``X-Vae-Tools-Http-Url``,
  ``X-Vae-Tools-Openapi-Url``, ``X-Vae-Tools-Mcp-Url``), beside
  ``X-Vae-Session``;
- LiveKit: ``VAE_TOOLS_URL`` (the ``http_url``) in the environment of the agent
  process vae starts for the session (``vae.tools.client.agent_environment``).

The last two are known before ``SessionStart``: the backend's port is bound
before the agent is dialled (``tools.backend.Reservation``).

Nothing is sent when the session has no tool backend (or for the user side).
"""

from __future__ import annotations

from typing import Any

from vae.bridge_service.connectors.messages import SessionStartInfo
from vae.tools.client import BackendAddresses

#: The pipecat client message type (``{"t": ..., "d": {...}}``).
PIPECAT_MESSAGE = "set_tool_backend"


def twilio_parameters(start: SessionStartInfo) -> dict[str, str]:
    """Custom parameters for the Twilio ``start`` message (empty without a backend)."""
    if start.tool_backend is None:
        return {}
    return {f"tool_backend_{k}": v for k, v in start.tool_backend.to_dict().items()}


def pipecat_message(start: SessionStartInfo) -> dict[str, Any] | None:
    """The body of the pipecat client message (None without a backend)."""
    if start.tool_backend is None:
        return None
    return {"t": PIPECAT_MESSAGE, "d": start.tool_backend.to_dict()}


#: The SIP header naming each address (``BackendAddresses`` field -> header).
SIP_HEADERS = {
    "http_url": "X-Vae-Tools-Http-Url",
    "openapi_url": "X-Vae-Tools-Openapi-Url",
    "mcp_url": "X-Vae-Tools-Mcp-Url",
}


def sip_headers(addresses: BackendAddresses | None) -> list[tuple[str, str]]:
    """Headers for the INVITE of a session with a backend (empty without one)."""
    if addresses is None:
        return []
    return [(SIP_HEADERS[k], v) for k, v in addresses.to_dict().items()]
