"""The offer and answer, the way pipecat's runner takes them: ``POST /api/offer``.

The body is ``{"sdp", "type": "offer", "request_data"?}``; the answer is
``{"sdp", "type": "answer", "pc_id"}`` (``SmallWebRTCRequestHandler``). aiortc
gathers every candidate before the offer is sent, so no trickle (``PATCH``)
is needed. An answer that is an HTTP error or not an SDP answer is
:class:`OfferRefused`: retrying the same bot cannot help, and the attempt
ends at once naming what came back. A bot that cannot be reached at all is a
plain :class:`ConnectorError` (the pool retries it: it may be starting).
"""

from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.request
from typing import Any

from vae.bridge_service.connectors.base import ConnectorError, ConnectorOptionsError


class OfferRefused(ConnectorOptionsError):
    """The bot answered the offer with an error or with something that is no answer."""


def offer_url(url: str) -> str:
    return url.removeprefix("webrtc+")


async def post_offer(url: str, sdp: str, request_data: Any, timeout_s: float) -> dict[str, Any]:
    body: dict[str, Any] = {"sdp": sdp, "type": "offer"}
    if request_data is not None:
        body["request_data"] = request_data
    return await asyncio.to_thread(_post, offer_url(url), json.dumps(body).encode(), timeout_s)


def _post(url: str, data: bytes, timeout_s: float) -> dict[str, Any]:
    request = urllib.request.Request(
        url, data=data, method="POST", headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as response:
            raw = response.read(1 << 20)
    except urllib.error.HTTPError as exc:
        text = exc.read(500).decode(errors="replace")
        raise OfferRefused(
            f"the bot at {url} answered the offer with HTTP {exc.code}: {text}"
        ) from exc
    except (urllib.error.URLError, OSError) as exc:
        raise ConnectorError(f"cannot reach the WebRTC bot at {url}: {exc}") from exc
    try:
        answer = json.loads(raw)
    except ValueError as exc:
        raise OfferRefused(
            f"the bot at {url} answered the offer with no JSON: {raw[:200]!r}"
        ) from exc
    if (
        not isinstance(answer, dict)
        or answer.get("type") != "answer"
        or not isinstance(answer.get("sdp"), str)
    ):
        raise OfferRefused(f"the bot at {url} answered the offer with no SDP answer: {raw[:200]!r}")
    return answer
