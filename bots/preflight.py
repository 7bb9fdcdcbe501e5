"""Before a bot joins: can it talk to the bridge at all?

Why: a bot with the wrong CA certificate, no ``--tls-ca`` against a TLS
bridge, or a wrong token used to retry "UNAVAILABLE: Socket closed" forever,
and a user never learnt why. The preflight asks the bridge's health service
(which the token guards like every RPC) a bounded number of times and turns
each failure into a message naming the option that fixes it. A bridge that is
only slow to start passes on a later try; one that never answers ends the
bot after about ``tries`` attempts.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

SERVICE = "vae.bridge.v1.BridgeService"
_TLS_HINTS = ("ssl", "tls", "handshake", "certificate", "socket closed", "connection reset")


class BridgeUnusable(Exception):
    """The bridge cannot be used with these settings; the message says what to change."""


def channel(address: str, tls_ca: Path | None, options: list[tuple[str, int]]) -> grpc.aio.Channel:
    """A channel to the bridge: TLS trusting ``tls_ca`` when given, else plaintext."""
    if tls_ca is None:
        return grpc.aio.insecure_channel(address, options=options)
    creds = grpc.ssl_channel_credentials(root_certificates=tls_ca.read_bytes())
    return grpc.aio.secure_channel(address, creds, options=options)


async def check_bridge(
    address: str,
    *,
    token: str | None,
    tls_ca: Path | None,
    tries: int = 8,
    first_backoff_s: float = 0.25,
) -> None:
    """Return when the bridge answers a health check; raise :class:`BridgeUnusable` otherwise."""
    metadata = (("authorization", f"Bearer {token}"),) if token else None
    backoff = first_backoff_s
    last = ""
    async with channel(address, tls_ca, []) as ch:
        stub = health_pb2_grpc.HealthStub(ch)
        for attempt in range(1, tries + 1):
            try:
                await stub.Check(
                    health_pb2.HealthCheckRequest(service=SERVICE), metadata=metadata, timeout=5
                )
                return
            except grpc.aio.AioRpcError as exc:
                if exc.code() == grpc.StatusCode.UNAUTHENTICATED:
                    given = "a token that is not the bridge's" if token else "no token"
                    raise BridgeUnusable(
                        f"the bridge at {address} refused the bot: UNAUTHENTICATED ({given}); "
                        "pass the bridge's token with --token or VAE_TOKEN"
                    ) from exc
                last = f"{exc.code().name}: {exc.details()}"
            if attempt < tries:
                await asyncio.sleep(backoff)  # backoff between bounded tries
                backoff = min(backoff * 2, 2.0)
    hint = "is the bridge running (vae bridge serve)?"
    if any(h in last.lower() for h in _TLS_HINTS):
        hint = (
            "the TLS handshake failed: with --tls-ca (or VAE_TLS_CA) give the CA certificate "
            "that signed the bridge's --tls-cert, and without it the bridge must serve plaintext"
            if tls_ca is not None
            else "the bridge may serve TLS: pass its CA certificate with --tls-ca or VAE_TLS_CA"
        )
    raise BridgeUnusable(f"cannot use the bridge at {address} after {tries} tries ({last}); {hint}")
