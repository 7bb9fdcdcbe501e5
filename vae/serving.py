"""Serving and dialling plumbing shared by both services and every client.

Hand-written (not generated): the few things every vae gRPC endpoint does the
same way — bind an address (127.0.0.1 by default), serve ``grpc.health.v1``
and server reflection beside the service so generic tools and clients in other
languages work, optional TLS, an optional bearer token (every RPC without it
gets ``UNAUTHENTICATED``), graceful shutdown — and the matching client channel.
"""

from __future__ import annotations

import hmac
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

#: Generous limits: audio frames are small, but a FinalState chunk or a report is not.
MESSAGE_LIMIT = 64 * 1024 * 1024
CHANNEL_OPTIONS = [
    ("grpc.max_send_message_length", MESSAGE_LIMIT),
    ("grpc.max_receive_message_length", MESSAGE_LIMIT),
]


@dataclass(frozen=True)
class TlsFiles:
    """PEM files of a server certificate and its private key."""

    cert: Path
    key: Path

    def credentials(self) -> grpc.ServerCredentials:
        return grpc.ssl_server_credentials([(self.key.read_bytes(), self.cert.read_bytes())])


class BearerTokenInterceptor(grpc.aio.ServerInterceptor):
    """Refuse every RPC that lacks ``authorization: Bearer <token>``."""

    def __init__(self, token: str) -> None:
        self._expected = f"Bearer {token}".encode()

    def _authorized(self, metadata: Sequence[tuple[str, str | bytes]] | None) -> bool:
        for key, value in metadata or ():
            if key == "authorization":
                given = value if isinstance(value, bytes) else value.encode()
                return hmac.compare_digest(given, self._expected)
        return False

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Any],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> Any:
        handler = await continuation(handler_call_details)
        if handler is None or self._authorized(handler_call_details.invocation_metadata):
            return handler

        async def refuse(_request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> None:
            await context.abort(grpc.StatusCode.UNAUTHENTICATED, "missing or wrong bearer token")

        kind = (handler.request_streaming, handler.response_streaming)
        make = {
            (False, False): grpc.unary_unary_rpc_method_handler,
            (False, True): grpc.unary_stream_rpc_method_handler,
            (True, False): grpc.stream_unary_rpc_method_handler,
            (True, True): grpc.stream_stream_rpc_method_handler,
        }[kind]
        return make(
            refuse,
            request_deserializer=handler.request_deserializer,
            response_serializer=handler.response_serializer,
        )


@dataclass
class RunningServer:
    server: grpc.aio.Server
    port: int
    health: health.aio.HealthServicer

    async def stop(self, grace: float = 5.0) -> None:
        """Report NOT_SERVING, then let in-flight RPCs finish for ``grace`` seconds."""
        await self.health.enter_graceful_shutdown()
        await self.server.stop(grace)


async def start_server(
    address: str,
    register: Callable[[grpc.aio.Server], None],
    service_names: Sequence[str],
    *,
    tls: TlsFiles | None = None,
    token: str | None = None,
    max_receive_bytes: int | None = None,
) -> RunningServer:
    """Start a grpc.aio server on ``address`` (``host:port``; port 0 picks one).

    ``register`` adds the service's servicer; ``service_names`` are its full
    names (e.g. ``vae.bridge.v1.BridgeService``) for health and reflection.
    """
    interceptors = [BearerTokenInterceptor(token)] if token else []
    options = list(CHANNEL_OPTIONS)
    if max_receive_bytes is not None:
        # The largest request a client may send; bigger ones get RESOURCE_EXHAUSTED.
        options = [o for o in options if o[0] != "grpc.max_receive_message_length"]
        options.append(("grpc.max_receive_message_length", max_receive_bytes))
    server = grpc.aio.server(interceptors=interceptors, options=options)
    register(server)
    health_servicer = health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    names = [*service_names, health.SERVICE_NAME, reflection.SERVICE_NAME]
    reflection.enable_server_reflection(names, server)
    if tls is not None:
        port = server.add_secure_port(address, tls.credentials())
    else:
        port = server.add_insecure_port(address)
    if port == 0:
        raise OSError(f"could not bind {address}")
    await server.start()
    for name in [*service_names, ""]:
        await health_servicer.set(name, health_pb2.HealthCheckResponse.SERVING)
    return RunningServer(server=server, port=port, health=health_servicer)


# ---------------------------------------------------------------- clients
class _TokenMetadata:
    """Adds the bearer token to a call's metadata (works on insecure loopback too)."""

    def __init__(self, token: str) -> None:
        self._pair = ("authorization", f"Bearer {token}")

    def _details(self, details: grpc.aio.ClientCallDetails) -> grpc.aio.ClientCallDetails:
        metadata = grpc.aio.Metadata(*(details.metadata or ()))
        metadata.add(*self._pair)
        return grpc.aio.ClientCallDetails(
            details.method, details.timeout, metadata, details.credentials, details.wait_for_ready
        )


# grpc.aio files an interceptor under the first call kind it implements only,
# so each kind needs its own class and instance.
class _UnaryUnaryToken(_TokenMetadata, grpc.aio.UnaryUnaryClientInterceptor):
    async def intercept_unary_unary(self, continuation: Any, details: Any, request: Any) -> Any:
        return await continuation(self._details(details), request)


class _UnaryStreamToken(_TokenMetadata, grpc.aio.UnaryStreamClientInterceptor):
    async def intercept_unary_stream(self, continuation: Any, details: Any, request: Any) -> Any:
        return await continuation(self._details(details), request)


class _StreamUnaryToken(_TokenMetadata, grpc.aio.StreamUnaryClientInterceptor):
    async def intercept_stream_unary(self, continuation: Any, details: Any, requests: Any) -> Any:
        return await continuation(self._details(details), requests)


class _StreamStreamToken(_TokenMetadata, grpc.aio.StreamStreamClientInterceptor):
    async def intercept_stream_stream(self, continuation: Any, details: Any, requests: Any) -> Any:
        return await continuation(self._details(details), requests)


def token_interceptors(token: str) -> list[Any]:
    """One interceptor per call kind, each adding ``authorization: Bearer <token>``."""
    kinds = (_UnaryUnaryToken, _UnaryStreamToken, _StreamUnaryToken, _StreamStreamToken)
    return [kind(token) for kind in kinds]


def client_channel(
    address: str, *, token: str | None = None, tls_ca: Path | None = None
) -> grpc.aio.Channel:
    """An aio channel to a vae service, with the token and TLS root if given."""
    interceptors = token_interceptors(token) if token else None
    if tls_ca is not None:
        creds = grpc.ssl_channel_credentials(root_certificates=tls_ca.read_bytes())
        return grpc.aio.secure_channel(
            address, creds, options=CHANNEL_OPTIONS, interceptors=interceptors
        )
    return grpc.aio.insecure_channel(address, options=CHANNEL_OPTIONS, interceptors=interceptors)
