"""SIP connectors' control messages: vae's contract as protobuf JSON in SIP INFO bodies.

Why at the edge: the SIP connector (``connectors.sip``) carries the session's
control messages to an agent that takes vae's INFO packages
(:mod:`vae.sip.info`), and protobuf stays at the service edges; so the kinds
``sip`` and ``sip-inbound`` are registered here, handing the connector this
codec: ``BotMessage`` JSON in (through :func:`convert.bot_input`, the same
checks as a gRPC bot's), ``BridgeMessage`` JSON out (through
:func:`convert.bridge_message`). Audio and keys never pass here (RTP).
"""

from __future__ import annotations

from google.protobuf import json_format

from vae.bridge.v1 import bridge_pb2
from vae.bridge_service.connectors.base import (
    BotInput,
    BotProtocolError,
    BridgeOutput,
    ConnectorConfig,
    DtmfOut,
    PeerAudio,
    PeerText,
)
from vae.bridge_service.connectors.sip import inbound, outbound
from vae.bridge_service.connectors.sip.endpoint import SipEndpoint
from vae.bridge_service.edge.convert import bot_input
from vae.bridge_service.edge.convert_out import bridge_message
from vae.recordings.models import Side

_ACCEPTED = ("event", "final_state")


class ProtoJson:
    def decode(self, body: bytes, side: Side) -> BotInput:
        try:
            msg = json_format.Parse(body.decode("utf-8"), bridge_pb2.BotMessage())
        except (json_format.ParseError, UnicodeDecodeError) as exc:
            problem = f"not a vae.bridge.v1.BotMessage in JSON: {exc}"
            raise BotProtocolError("sip_info", problem) from exc
        which = msg.WhichOneof("message")
        if which not in _ACCEPTED:
            raise BotProtocolError("sip_info", f"{which or 'an empty message'} does not travel "
                                   "in INFO (only event and final_state)")  # fmt: skip
        return bot_input(msg, side)

    def encode(self, message: BridgeOutput) -> bytes | None:
        if isinstance(message, PeerAudio | DtmfOut | PeerText):
            return None  # RTP, or nothing for a call
        return json_format.MessageToJson(bridge_message(message), indent=None).encode()


async def dial(config: ConnectorConfig, role: Side) -> SipEndpoint:
    return await outbound.dial(config, role, ProtoJson())


async def take_call(config: ConnectorConfig, role: Side) -> SipEndpoint:
    return await inbound.take_call(config, role, ProtoJson())
