"""What a bot can follow beyond audio on the real clock: text turns, the virtual clock.

The fast tiers (``RunOptions.modality`` text, ``RunOptions.clock`` virtual)
need bots that can follow them, and vae never falls back to audio or the
real clock in their place. A gRPC bot says what it can at Join
(``supports_text``, ``supports_virtual_clock``); a connector kind says it
when it is registered (``register_connector(..., capabilities=...)`` in
:mod:`vae.bridge_service.connectors.base`), so StartRun can refuse a tier the
kind cannot serve, naming why (:func:`connector_capabilities`). Why apart
from the seam's protocol and registry: these rules change with the tiers,
not with how bots are reached. Import the names from
``vae.bridge_service.connectors.base``.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Capabilities:
    """What a bot can do beyond audio on the real clock.

    ``text``: it exchanges whole text turns in a text session; ``virtual_clock``:
    it answers every step of the virtual clock.
    """

    text: bool = False
    virtual_clock: bool = False

    def lacks(self, modality: str, clock: str) -> list[str]:
        """The Join fields this bot would need for a run of ``modality`` on ``clock``."""
        missing = []
        if modality == "text" and not self.text:
            missing.append("supports_text")
        if clock == "virtual" and not self.virtual_clock:
            missing.append("supports_virtual_clock")
        return missing


def capabilities(endpoint: object) -> Capabilities:
    """An endpoint's :class:`Capabilities` (none declared: audio on the real clock only)."""
    found = getattr(endpoint, "capabilities", None)
    return found if isinstance(found, Capabilities) else Capabilities()


#: What each connector kind can carry, and why not (shown in StartRun's refusal).
_by_kind: dict[str, tuple[Capabilities, str]] = {
    # Text through RTVI send-text (tested with pipecat-ai 1.14.0); its pipeline paces its
    # own audio in real time, so never the virtual clock.
    "pipecat": (
        Capabilities(text=True),
        "a pipecat pipeline plays its audio in real time and cannot follow the virtual clock",
    ),
    # Text through run_input requests with the agent's audio output off (livekit-agents 1.8).
    "livekit": (
        Capabilities(text=True),
        "LiveKit's console mode plays audio in real time and cannot follow the virtual clock",
    ),
    "webrtc": (
        Capabilities(text=True),
        "WebRTC media flows in real time: a pipecat pipeline cannot follow the virtual clock",
    ),
    "twilio": (
        Capabilities(),
        "Twilio Media Streams carries only audio (mu-law media), in real time: no text turns"
        " and no virtual clock",
    ),
    "sip": (
        Capabilities(),
        "a SIP call carries audio (G.711 RTP) in real time: no text turns and no virtual clock",
    ),
    "sip-inbound": (
        Capabilities(),
        "a SIP call carries audio (G.711 RTP) in real time: no text turns and no virtual clock",
    ),
}


def declare_capabilities(kind: str, caps: Capabilities, why_not: str = "") -> None:
    """Record what connectors of ``kind`` can carry (``register_connector`` calls this)."""
    _by_kind[kind] = (caps, why_not)


def connector_capabilities(kind: str) -> tuple[Capabilities, str]:
    """What connectors of ``kind`` can carry, and the reason they cannot (for a refusal)."""
    return _by_kind.get(kind, (Capabilities(), f"the {kind} connector declares neither"))
