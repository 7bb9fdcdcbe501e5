"""Options of the WebRTC connector: the pipecat connector's, plus the WebRTC ones.

Every key of the pipecat connector's options applies (prompt message,
kick-off text, final-state requests, end and write tools, rates: see
``pipecat.options``), plus:

=====================  =======================================================
key                    meaning (default)
=====================  =======================================================
``ice_timeout_s``      the offer answered and ICE connected within this, from
                       the start of the dial, or the attempt fails (15)
``request_data``       a JSON object sent with the offer as ``request_data``
                       (pipecat's runner hands it to the bot as its body) ({})
=====================  =======================================================

The WebSocket-only keys (``connect_retries``, ``max_buffer_bytes``) are
accepted and ignored.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from vae.bridge_service.connectors.base import ConnectorOptionsError
from vae.bridge_service.connectors.options import coerce
from vae.bridge_service.connectors.pipecat.options import PipecatOptions, parse_options


@dataclass(frozen=True)
class WebrtcOptions:
    pipecat: PipecatOptions
    ice_timeout_s: float = 15.0
    request_data: dict[str, Any] | None = None


def parse_webrtc_options(raw: dict[str, Any]) -> WebrtcOptions:
    raw = dict(raw)
    ice = coerce(
        "webrtc connector: option 'ice_timeout_s' must be", raw.pop("ice_timeout_s", 15.0), 1.0
    )
    if ice <= 0:
        raise ConnectorOptionsError("webrtc connector: ice_timeout_s must be positive")
    data = raw.pop("request_data", None)
    if data is not None and not isinstance(data, dict):
        raise ConnectorOptionsError("webrtc connector: request_data must be a JSON object")
    return WebrtcOptions(parse_options(raw), float(ice), data)
