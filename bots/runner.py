"""Running a bot role with N concurrent streams until told to stop.

Each worker opens a stream, plays the session it is given, and opens the next
one — a bot that can hold N conversations opens N streams (docs/contract.md). A
bridge that is not up yet, or goes away, is retried with a capped backoff;
a stream released without a session (WaitTimeout) simply rejoins.

The bots follow redirects (``follow_redirects``, on by default): a bridge
with worker processes may send a stream to a worker, on the host the bot
dialled; the runner keeps one channel per worker address, so each worker
sees one connection from this bot, like the bridge itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc

from vae.bots.client import BotStream, Brain, SessionOutcome
from vae.bots.sound.listening import ListenSettings
from vae.bots.sound.speech import Synthesiser, default_synthesiser
from vae.bridge.v1 import bridge_pb2_grpc
from vae.serving import client_channel

log = logging.getLogger("vae.bots.runner")


@dataclass
class BotConfig:
    address: str
    role: str
    brain: Callable[[], Brain]
    concurrency: int = 1
    name: str = "vae-reference-bot"
    version: str = ""
    run_filter: str = ""
    token: str | None = None
    #: CA certificate of a TLS bridge (None: plaintext).
    tls_ca: Path | None = None
    #: Stop after this many sessions in all (0: run until stopped).
    max_sessions: int = 0
    synth: Synthesiser | None = None
    listen: ListenSettings | None = None
    #: What the bot declares at Join (the reference bots can do both).
    supports_text: bool = True
    supports_virtual_clock: bool = True
    outcomes: list[SessionOutcome] = field(default_factory=list)
    #: Declare Join.accepts_redirect and follow Redirects to a bridge's workers.
    follow_redirects: bool = True
    #: Give up when the bridge has been unreachable this long (seconds).
    give_up_after_s: float = field(
        default_factory=lambda: float(os.environ.get("VAE_BOT_GIVE_UP_S", "300"))
    )


class BridgeUnreachable(Exception):
    """The bridge stayed unreachable for longer than ``give_up_after_s``."""


_FATAL = (
    grpc.StatusCode.UNAUTHENTICATED,
    grpc.StatusCode.PERMISSION_DENIED,
    grpc.StatusCode.INVALID_ARGUMENT,
)


def host_of(address: str) -> str:
    """The host part of ``host:port`` (``[::1]`` stays bracketed)."""
    return address.rsplit(":", 1)[0] if ":" in address else address


class WorkerChannels:
    """One channel per worker address a redirect named, with the bridge's TLS and token."""

    def __init__(self, config: BotConfig) -> None:
        self.config = config
        self._open: dict[str, grpc.aio.Channel] = {}

    def stub_at(self, port: int) -> bridge_pb2_grpc.BridgeServiceAsyncStub:
        address = f"{host_of(self.config.address)}:{port}"
        channel = self._open.get(address)
        if channel is None:
            channel = client_channel(address, token=self.config.token, tls_ca=self.config.tls_ca)
            self._open[address] = channel
        stub: bridge_pb2_grpc.BridgeServiceAsyncStub = bridge_pb2_grpc.BridgeServiceStub(channel)
        return stub

    async def close(self) -> None:
        for channel in self._open.values():
            await channel.close()
        self._open.clear()


def transport_error(exc: BaseException) -> grpc.aio.AioRpcError | ConnectionError | None:
    """The gRPC or connection error inside ``exc`` (unwrapping exception groups)."""
    if isinstance(exc, grpc.aio.AioRpcError | ConnectionError):
        return exc
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            found = transport_error(inner)
            if found is not None:
                return found
    return None


async def run_bots(config: BotConfig, stop: asyncio.Event) -> list[SessionOutcome]:
    """Run ``config.concurrency`` workers until ``stop`` is set (or enough sessions)."""
    synth = config.synth
    if synth is None:
        synth = await asyncio.to_thread(default_synthesiser)
    workers = WorkerChannels(config)
    redirect_to = workers.stub_at if config.follow_redirects else None
    async with client_channel(config.address, token=config.token, tls_ca=config.tls_ca) as channel:
        stub: bridge_pb2_grpc.BridgeServiceAsyncStub = bridge_pb2_grpc.BridgeServiceStub(channel)

        async def worker(index: int) -> None:
            backoff = 0.2
            down_since: float | None = None
            while not stop.is_set() and not _enough(config):
                stream = BotStream(
                    stub, config.role, config.brain(), synth,
                    name=config.name, version=config.version, run_filter=config.run_filter,
                    listen=config.listen, supports_text=config.supports_text,
                    supports_virtual_clock=config.supports_virtual_clock,
                    redirect_to=redirect_to,
                )  # fmt: skip
                try:
                    outcome = await _until_stopped(stream.run(), stop)
                except (grpc.aio.AioRpcError, ConnectionError, BaseExceptionGroup) as exc:
                    err = transport_error(exc)
                    if err is None:
                        raise
                    code = err.code() if isinstance(err, grpc.aio.AioRpcError) else None
                    if code in _FATAL:
                        raise err from None
                    now = time.monotonic()
                    if code == grpc.StatusCode.UNAVAILABLE or code is None:
                        down_since = down_since or now
                        if now - down_since > config.give_up_after_s:
                            raise BridgeUnreachable(
                                f"the bridge at {config.address} has been unreachable for "
                                f"{now - down_since:.0f} s; giving up"
                            ) from None
                    else:
                        down_since = None
                    detail = err.details() if isinstance(err, grpc.aio.AioRpcError) else err
                    log.warning(
                        "%s worker %d: %s; retrying in %.1f s", config.role, index, detail, backoff
                    )
                    await _pause(stop, backoff)
                    backoff = min(backoff * 2, 5.0)
                    continue
                backoff, down_since = 0.2, None
                if outcome is not None:
                    config.outcomes.append(outcome)

        try:
            async with asyncio.TaskGroup() as tg:
                for i in range(max(1, config.concurrency)):
                    tg.create_task(worker(i))
        finally:
            await workers.close()
    return config.outcomes


def _enough(config: BotConfig) -> bool:
    return bool(config.max_sessions) and len(config.outcomes) >= config.max_sessions


async def _until_stopped(
    coro: Coroutine[Any, Any, SessionOutcome | None], stop: asyncio.Event
) -> SessionOutcome | None:
    """Run a stream, abandoning it (cancelled) when ``stop`` is set."""
    task = asyncio.create_task(coro)
    stopper = asyncio.create_task(stop.wait())
    try:
        await asyncio.wait({task, stopper}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        stopper.cancel()
    if not task.done():
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        return None
    return task.result()


async def _pause(stop: asyncio.Event, seconds: float) -> None:
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(stop.wait(), seconds)
