"""How each connector gives its agent the session's trace context and id.

``SessionStart.trace_context`` reaches a gRPC agent as a field; an agent
behind a connector gets it the way that protocol carries session data, always
before any audio (docs/traces.md):

- pipecat (WebSocket and WebRTC): an RTVI client message ``vae-trace-context``
  with ``{traceparent, tracestate, session_id}``, the first message of the
  session (stock pipecat ignores it; the example bot adopts it);
- Twilio Media Streams: custom parameters ``traceparent``, ``tracestate``
  (``session_id`` is one already);
- SIP: a ``traceparent`` header on the INVITE (``X-Vae-Session`` names the
  session);
- LiveKit: ``TRACEPARENT`` and ``VAE_SESSION_ID`` in the environment of the
  agent process vae starts for the session.
"""

from __future__ import annotations

from typing import Any

from vae.bridge_service.connectors.messages import SessionStartInfo

#: The pipecat client message type (``{"t": ..., "d": {...}}``).
PIPECAT_MESSAGE = "vae-trace-context"


def pipecat_message(start: SessionStartInfo) -> dict[str, Any] | None:
    """The body of the pipecat client message (None without a trace context)."""
    if not start.traceparent:
        return None
    body = {"traceparent": start.traceparent, "tracestate": start.tracestate,
            "session_id": start.session_id}  # fmt: skip
    return {"t": PIPECAT_MESSAGE, "d": body}


def twilio_parameters(start: SessionStartInfo) -> dict[str, str]:
    """Custom parameters for the Twilio ``start`` message."""
    if not start.traceparent:
        return {}
    out = {"traceparent": start.traceparent}
    if start.tracestate:
        out["tracestate"] = start.tracestate
    return out


def process_environment(session_id: str, traceparent: str) -> dict[str, str]:
    """The environment of an agent process started for one session (LiveKit)."""
    out = {"VAE_SESSION_ID": session_id} if session_id else {}
    if traceparent:
        out["TRACEPARENT"] = traceparent
    return out
