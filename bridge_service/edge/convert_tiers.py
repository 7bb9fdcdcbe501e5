"""Protobuf <-> domain for the fast tiers: text turns, the virtual clock, modality and clock.

Apart from :mod:`vae.bridge_service.edge.convert` and
:mod:`vae.bridge_service.edge.convert_out` because these messages change with
the tiers' contract (``TextTurn``, ``ClockTick``/``ClockAck``, ``Modality``,
``ClockKind``, Join's declared support), not with audio and events; the
Converse and run-control converters both use it.
"""

from __future__ import annotations

from vae.bridge.v1 import bridge_pb2
from vae.bridge_service.connectors.base import (
    BotAudio,
    BotProtocolError,
    BotText,
    Capabilities,
    ClockAck,
    ClockTickOut,
    PeerText,
)
from vae.common.v1 import common_pb2

MODALITY_PB = {"audio": common_pb2.MODALITY_AUDIO, "text": common_pb2.MODALITY_TEXT}
CLOCK_PB = {
    "real": common_pb2.CLOCK_KIND_REAL,
    "virtual": common_pb2.CLOCK_KIND_VIRTUAL,
    "auto": common_pb2.CLOCK_KIND_AUTO,
}
#: Unset (UNSPECIFIED) is absent: the run's default stands (audio; its modality's clock).
MODALITY_OF = {v: k for k, v in MODALITY_PB.items()}
CLOCK_OF = {v: k for k, v in CLOCK_PB.items()}


def join_capabilities(join: bridge_pb2.Join) -> Capabilities:
    """What the bot declared it can follow beyond audio on the real clock."""
    return Capabilities(text=join.supports_text, virtual_clock=join.supports_virtual_clock)


def tier_input(msg: bridge_pb2.BotMessage) -> ClockAck | BotText:
    """A ``clock_ack`` (with the step's audio, if it carries some) or a ``text`` turn."""
    if msg.WhichOneof("message") == "clock_ack":
        ack = msg.clock_ack
        audio = None
        if ack.HasField("audio"):
            a = ack.audio
            audio = BotAudio(a.sequence, a.sample_offset, a.pcm, a.sent_unix_nanos)
        return ClockAck(ack.step, ack.wake_at_ms, audio)
    t = msg.text
    if not t.text.strip():
        raise BotProtocolError("text.text", "a text turn must not be empty")
    return BotText(t.text, t.duration_ms, t.sequence, t.sent_unix_nanos)


def tier_message(out: ClockTickOut | PeerText) -> bridge_pb2.BridgeMessage:
    if isinstance(out, ClockTickOut):
        return bridge_pb2.BridgeMessage(
            clock_tick=bridge_pb2.ClockTick(step=out.step, session_ms=out.session_ms)
        )
    return bridge_pb2.BridgeMessage(
        text=bridge_pb2.TextTurn(
            text=out.text,
            sequence=out.sequence,
            sent_unix_nanos=out.sent_ns,
            session_ms=out.session_ms,
        )
    )
