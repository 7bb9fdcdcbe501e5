"""Before a bot joins: can it talk to the bridge at all?

Why: a bot with the wrong CA certificate, no ``--tls-ca`` against a TLS
bridge, or a wrong token used to retry "UNAVAILABLE: Socket closed" forever,
and a user never learnt why. The preflight asks the bridge's health service
(which the token guards like every RPC) a bounded number of times and turns
each failure into a message naming the option that fixes it. Only a SERVING
answer passes: a bridge that answers NOT_SERVING (draining for a shutdown) is
tried again like one that does not answer. A bridge that is only slow to start
passes on a later try; one that never serves ends the bot after about
``tries`` attempts.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from vae.serving import client_channel

SERVICE = "vae.bridge.v1.BridgeService"
_TLS_HINTS = ("ssl", "tls", "handshake", "certificate", "socket closed", "connection reset")
_SERVING = health_pb2.HealthCheckResponse.SERVING


class BridgeUnusable(Exception):
    """The bridge cannot be used with these settings; the message says what to change."""


async def check_bridge(
    address: str,
    *,
    token: str | None,
    tls_ca: Path | None,
    tries: int = 8,
    first_backoff_s: float = 0.25,
) -> None:
    """Return when the bridge reports SERVING; raise :class:`BridgeUnusable` otherwise.

    A bridge that answers NOT_SERVING (draining for a shutdown) is tried again
    like one that does not answer: only SERVING passes.
    """
    backoff = first_backoff_s
    last = ""
    serving = False
    async with client_channel(address, token=token, tls_ca=tls_ca) as ch:
        stub = health_pb2_grpc.HealthStub(ch)
        for attempt in range(1, tries + 1):
            try:
                reply = await stub.Check(health_pb2.HealthCheckRequest(service=SERVICE), timeout=5)
                if reply.status == _SERVING:
                    return
                status = health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status)
                last, serving = f"the bridge answers {status}", True
            except grpc.aio.AioRpcError as exc:
                if exc.code() == grpc.StatusCode.UNAUTHENTICATED:
                    given = "a token that is not the bridge's" if token else "no token"
                    raise BridgeUnusable(
                        f"the bridge at {address} refused the bot: UNAUTHENTICATED ({given}); "
                        "pass the bridge's token with --token or VAE_TOKEN"
                    ) from exc
                last, serving = f"{exc.code().name}: {exc.details()}", False
            if attempt < tries:
                await asyncio.sleep(backoff)  # backoff between bounded tries
                backoff = min(backoff * 2, 2.0)
    hint = "is the bridge running (vae bridge serve)?"
    if serving:
        hint = "it is shutting down or not ready: start the bridge again (vae bridge serve)"
    elif any(h in last.lower() for h in _TLS_HINTS):
        hint = (
            "the TLS handshake failed: with --tls-ca (or VAE_TLS_CA) give the CA certificate "
            "that signed the bridge's --tls-cert, and without it the bridge must serve plaintext"
            if tls_ca is not None
            else "the bridge may serve TLS: pass its CA certificate with --tls-ca or VAE_TLS_CA"
        )
    raise BridgeUnusable(f"cannot use the bridge at {address} after {tries} tries ({last}); {hint}")
