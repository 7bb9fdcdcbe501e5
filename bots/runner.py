"""Running a bot role with N concurrent streams until told to stop.

Each worker opens a stream, plays the session it is given, and opens the next
one — a bot that can hold N conversations opens N streams (DESIGN.md §2). A
bridge that is not up yet, or goes away, is retried with a capped backoff;
a stream released without a session (WaitTimeout) simply rejoins.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc

from bots import preflight
from bots.client import BotStream, Brain, SessionOutcome
from bots.listening import ListenSettings
from bots.speech import Synthesiser, default_synthesiser
from vae.bridge.v1 import bridge_pb2_grpc

log = logging.getLogger("vae.bots.runner")

CHANNEL_OPTIONS = [
    ("grpc.max_send_message_length", 64 * 1024 * 1024),
    ("grpc.max_receive_message_length", 64 * 1024 * 1024),
]


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
    outcomes: list[SessionOutcome] = field(default_factory=list)


async def run_bots(config: BotConfig, stop: asyncio.Event) -> list[SessionOutcome]:
    """Run ``config.concurrency`` workers until ``stop`` is set (or enough sessions)."""
    synth = config.synth
    if synth is None:
        synth = await asyncio.to_thread(default_synthesiser)
    metadata: tuple[tuple[str, str], ...] = ()
    if config.token:
        metadata = (("authorization", f"Bearer {config.token}"),)
    async with preflight.channel(config.address, config.tls_ca, CHANNEL_OPTIONS) as channel:
        stub: bridge_pb2_grpc.BridgeServiceAsyncStub = bridge_pb2_grpc.BridgeServiceStub(channel)

        async def worker(index: int) -> None:
            backoff = 0.2
            while not stop.is_set() and not _enough(config):
                stream = BotStream(
                    stub, config.role, config.brain(), synth,
                    name=config.name, version=config.version, run_filter=config.run_filter,
                    metadata=metadata, listen=config.listen,
                )  # fmt: skip
                try:
                    outcome = await _until_stopped(stream.run(), stop)
                except grpc.aio.AioRpcError as exc:
                    if exc.code() in (grpc.StatusCode.UNAUTHENTICATED,
                                      grpc.StatusCode.INVALID_ARGUMENT):  # fmt: skip
                        raise
                    log.warning("%s worker %d: %s; retrying", config.role, index, exc.details())
                    await _pause(stop, backoff)
                    backoff = min(backoff * 2, 5.0)
                    continue
                backoff = 0.2
                if outcome is not None:
                    config.outcomes.append(outcome)

        async with asyncio.TaskGroup() as tg:
            for i in range(max(1, config.concurrency)):
                tg.create_task(worker(i))
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
