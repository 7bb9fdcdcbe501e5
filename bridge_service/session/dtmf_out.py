"""Keys the caller pressed, carried to the agent the way its line carries them.

Why apart from the event routing in ``session_io``: how a key press reaches an
agent depends on the agent's transport and the session's modality, not on
the protocol rules for events:

- an audio agent over gRPC (or any connector without keypad messages) hears
  **in-band tones**: the standard frequency pairs (vae/dtmf.py), 100 ms of
  tone and 100 ms of silence per key unless the caller asked otherwise,
  generated at the agent's receive rate and mixed into its direction after
  the jitter buffer (``Direction.add_tones``), so the scenario's noise and
  the phone line (``bridge_service/audio/line.py``) apply to them as to the voice.
  They are in the ``to_agent`` recording; the ``user`` channel stays what
  the caller's bot sent;
- an agent whose endpoint declares ``sends_dtmf_messages`` (the Twilio Media
  Streams connector) gets messages instead, one ``dtmf`` message per key;
- in a text session there is no audio: a gRPC agent gets
  ``BridgeMessage.dtmf`` (a connector without text gets nothing, and the
  recorded event says so).

The user's DTMF event is recorded with how it was carried (``carried_as``),
so the report and the DTMF_RECEIVED signal know what the agent was offered.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from vae import dtmf
from vae.bridge_service.connectors.base import DtmfOut
from vae.recordings.models import Side

if TYPE_CHECKING:
    from vae.bridge_service.session.state import SessionState

IN_BAND = "in_band_tones"
MESSAGES = "dtmf_messages"
TEXT_MESSAGE = "text_message"


async def carry(io: SessionState, payload: dict[str, Any]) -> dict[str, Any]:
    """Deliver the caller's keys to the agent; the payload to record, with ``carried_as``."""
    digits = str(payload["digits"])
    tone_ms = int(payload.get("tone_ms") or dtmf.DEFAULT_TONE_MS)
    gap_ms = int(payload.get("gap_ms") or dtmf.DEFAULT_GAP_MS)
    agent = io.endpoints[Side.AGENT]
    out = {**payload, "tone_ms": tone_ms, "gap_ms": gap_ms}
    if not io.delivering:
        return {**out, "carried_as": "", "not_delivered": "the call was ending"}
    if getattr(agent, "sends_dtmf_messages", False):
        await io.send(Side.AGENT, DtmfOut(digits, tone_ms, gap_ms))
        return {**out, "carried_as": MESSAGES}
    if io.text:
        if getattr(agent, "takes_dtmf_text", False) and await io.send(
            Side.AGENT, DtmfOut(digits, tone_ms, gap_ms)
        ):
            return {**out, "carried_as": TEXT_MESSAGE}
        why = "the agent's endpoint takes no keys in a text session"
        return {**out, "carried_as": "", "not_delivered": why}
    direction = io.directions[Side.AGENT]
    direction.add_tones(dtmf.tones(digits, direction.out_rate, tone_ms, gap_ms))
    seconds = len(digits) * (tone_ms + gap_ms) / 1000
    return {**out, "carried_as": IN_BAND, "duration_s": seconds}
