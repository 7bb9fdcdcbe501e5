"""Frame negotiation: how long the frames a bot receives are, and how many per message.

A bot chooses at ``Join`` (``frame_ms``, ``frames_per_message``); 0 means the
run's default frame length and one frame per message, as before. Only a few
lengths are allowed so that sessions of a process share a handful of clock
periods (one timer each, see :mod:`vae.bridge_service.clocks.ticker`) and every length is
a whole number of samples at the usual rates. Anything else is refused with
a :class:`BotProtocolError` naming the allowed set (``INVALID_ARGUMENT``).
"""

from __future__ import annotations

from dataclasses import dataclass

from vae.bridge_service.connectors.base import BotProtocolError

#: Frame lengths a bot may ask for, in ms.
ALLOWED_FRAME_MS = (10, 16, 20, 32, 40, 60)
#: Most frames one audio message may carry.
MAX_FRAMES_PER_MESSAGE = 10


@dataclass(frozen=True, slots=True)
class Framing:
    """What one bot asked for; ``frame_ms`` 0 = the run's default."""

    frame_ms: int = 0
    frames_per_message: int = 1

    def resolve(self, run_default_ms: int) -> Framing:
        """The framing a session uses for this bot."""
        return Framing(self.frame_ms or run_default_ms, self.frames_per_message)


def negotiate(frame_ms: int, frames_per_message: int) -> Framing:
    """Check a Join's framing request; raise BotProtocolError naming the allowed values."""
    if frame_ms and frame_ms not in ALLOWED_FRAME_MS:
        allowed = ", ".join(str(v) for v in ALLOWED_FRAME_MS)
        raise BotProtocolError(
            "join.frame_ms", f"{frame_ms} ms is not supported; use one of {allowed} (or 0)"
        )
    if frames_per_message > MAX_FRAMES_PER_MESSAGE:
        raise BotProtocolError(
            "join.frames_per_message",
            f"{frames_per_message} is not supported; use 1..{MAX_FRAMES_PER_MESSAGE} (or 0)",
        )
    return Framing(frame_ms, max(1, frames_per_message))


def endpoint_framing(endpoint: object, run_default_ms: int) -> Framing:
    """The framing of any SideEndpoint: gRPC bots negotiate; connectors use the run's."""
    asked = getattr(endpoint, "framing", None)
    if not isinstance(asked, Framing):
        asked = Framing()
    return asked.resolve(run_default_ms)
