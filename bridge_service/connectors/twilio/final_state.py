"""A Twilio bot's final state: fetched over HTTP after the call, since Media Streams has none.

Apart from :mod:`.connector` because it is another protocol with its own
failures: ``final_state_url`` (``{session_id}``, ``{call_sid}`` and
``{stream_sid}`` filled in) answers a GET with the bot's state as JSON. A fetch
that fails (an HTTP error, a timeout, a body that is not JSON) leaves no state
and is recorded as an error-level log naming the URL and the error, never
silently.
"""

from __future__ import annotations

import asyncio
import json
import time
import urllib.request

from vae.bridge_service.connectors.base import BotEvent, BotInput, FinalStatePart, JsonPiece
from vae.bridge_service.connectors.twilio.options import TwilioOptions
from vae.bridge_service.connectors.twilio.protocol import StreamIds
from vae.recordings.models import EventKind


async def fetch_final_state(
    options: TwilioOptions, ids: StreamIds | None, session_id: str
) -> list[BotInput]:
    """The final state from ``final_state_url``; a failed fetch is recorded, never silent."""
    if not options.final_state_url or ids is None:
        return [FinalStatePart(done=True)]
    url = options.final_state_url.format(
        session_id=session_id, call_sid=ids.call_sid, stream_sid=ids.stream_sid
    )

    def fetch() -> bytes:
        with urllib.request.urlopen(url, timeout=options.final_state_timeout_s) as r:
            return bytes(r.read())

    problem = "failed"
    try:
        data = await asyncio.to_thread(fetch)
        problem = "returned no JSON"
        json.loads(data)
    except (OSError, ValueError) as exc:
        payload = {
            "level": "error",
            "message": f"twilio final state: GET {url} {problem}: {exc}",
            "final_state_url": url,
        }
        # No state: the session records it as missing, and this says why.
        return [BotEvent(EventKind.LOG, time.time_ns(), payload), FinalStatePart(done=True)]
    return [FinalStatePart(state=JsonPiece(0, data, True), done=True)]
