"""Adding BridgeService to a gRPC server: the Converse deserializer that never raises.

Why a module: the front door (:mod:`vae.bridge_service.server`) and each
worker process (:mod:`vae.bridge_service.workers.worker_server`) serve the
same BridgeService, and neither should import the other to do it.
"""

from __future__ import annotations

from typing import Any

import grpc

from vae.bridge.v1 import bridge_pb2, bridge_pb2_grpc
from vae.bridge_service.edge.protocol_state import Undecodable

SERVICE_NAME = "vae.bridge.v1.BridgeService"


def decode_bot_message(data: bytes) -> bridge_pb2.BotMessage | Undecodable:
    """The request deserializer of Converse: never raises, so the handler can answer."""
    try:
        return bridge_pb2.BotMessage.FromString(data)
    except Exception as exc:  # DecodeError, and upb's UTF-8 failures
        return Undecodable(len(data), str(exc) or type(exc).__name__)


class _Capture:
    """Stands in for a server to collect the generated method handlers."""

    def __init__(self) -> None:
        self.handlers: dict[str, grpc.RpcMethodHandler[Any, Any]] = {}

    def add_generic_rpc_handlers(self, _handlers: object) -> None:
        pass

    def add_registered_method_handlers(
        self, _name: str, handlers: dict[str, grpc.RpcMethodHandler[Any, Any]]
    ) -> None:
        self.handlers.update(handlers)


def register(servicer: bridge_pb2_grpc.BridgeServiceServicer, server: grpc.aio.Server) -> None:
    """Add BridgeService, with a Converse deserializer that never raises.

    gRPC would end a stream whose bytes do not decode with an unexplained
    status before the handler sees anything; :func:`decode_bot_message` hands
    the handler an :class:`Undecodable` instead, which it refuses by name
    (and, in a session, ends the session with ``bot_error``).
    """
    capture = _Capture()
    bridge_pb2_grpc.add_BridgeServiceServicer_to_server(servicer, capture)  # type: ignore[arg-type]
    handlers = dict(capture.handlers)
    converse = handlers["Converse"]
    assert converse.stream_stream is not None
    handlers["Converse"] = grpc.stream_stream_rpc_method_handler(
        converse.stream_stream,
        request_deserializer=decode_bot_message,
        response_serializer=converse.response_serializer,
    )
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(SERVICE_NAME, handlers),))
    server.add_registered_method_handlers(SERVICE_NAME, handlers)
