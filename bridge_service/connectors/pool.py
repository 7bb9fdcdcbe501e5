"""Connector endpoints as pools with a capacity: sessions queue, dials retry.

Why this exists: a run dials a connector once per session, but the bots
behind connectors are servers of their own with a fixed number of clients —
pipecat's WebSocket server transports serve exactly one and refuse the rest
(close code 1013). A run at concurrency 4 against one such bot used to dial it
four times at once and lose three sessions. Here, written once for every
connector kind:

- each endpoint (``ConnectorConfig.url`` and each of ``pool_urls``) holds at
  most ``capacity`` sessions at once, counted per URL across every run of the
  bridge process;
- a session beyond the pool's capacity waits for a free endpoint (the least
  loaded one is taken) — waiting for a bot that is busy with another session
  is normal and never fails an attempt;
- a refused or dropped connection (any failure to dial or hand-shake except
  wrong options, or a call the bot answered with a refusal: ``CallRefused``)
  frees the slot and is retried, on the pool's other free endpoints first,
  with backoff (0.2 s doubling to 5 s) for ``connect_timeout_s`` counted from
  the first failure; then
  :class:`ConnectorError` says which URLs failed and why, and the run records
  the attempt as ``connector_failed``;
- the slot is released when the endpoint is closed. The waiting has no
  timeout, so every way out of an attempt must close both of its endpoints
  (``vae.bridge_service.runs.attempt_runner`` does, also when the session never started).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator
from dataclasses import replace

from vae.bridge_service.connectors.base import (
    BotInfo,
    BotInput,
    BotProtocolError,
    BridgeOutput,
    CallRefused,
    ConnectorConfig,
    ConnectorError,
    ConnectorOptionsError,
    SideEndpoint,
    dial,
)
from vae.recordings.models import Side

log = logging.getLogger("vae.bridge.connectors")

FIRST_BACKOFF_S = 0.2
MAX_BACKOFF_S = 5.0


class LeasedEndpoint:
    """A dialled endpoint holding one slot of its URL until it is closed."""

    def __init__(self, inner: SideEndpoint, pools: ConnectorPools, url: str) -> None:
        self.inner = inner
        self.url = url
        self.role: Side = inner.role
        # Which member of the pool served the session is recorded with the bot.
        self.bot = BotInfo(inner.bot.name, inner.bot.version, {**inner.bot.labels, "endpoint": url})
        self.send_rate: int = inner.send_rate
        self.receive_rate: int = inner.receive_rate
        #: Keys as messages rather than tones (session/dtmf_out.py), as the inner one.
        self.sends_dtmf_messages = bool(getattr(inner, "sends_dtmf_messages", False))
        self._pools = pools
        self._released = False

    def receive(self) -> AsyncIterator[BotInput]:
        return self.inner.receive()

    async def send(self, message: BridgeOutput) -> bool:
        return await self.inner.send(message)

    async def close(self, error: BotProtocolError | None = None) -> None:
        try:
            await self.inner.close(error)
        finally:
            if not self._released:
                self._released = True
                await self._pools.release(self.url)


class ConnectorPools:
    """Capacity accounting for every connector URL of one bridge process."""

    def __init__(self) -> None:
        self._load: dict[str, int] = {}
        self._failures: dict[str, int] = {}
        self._changed = asyncio.Condition()

    def load(self, url: str) -> int:
        return self._load.get(url, 0)

    async def _acquire(self, config: ConnectorConfig) -> str:
        """A URL of the pool with a free slot (waits until there is one)."""
        urls = config.urls
        async with self._changed:
            while True:
                free = [u for u in urls if self.load(u) < config.capacity]
                if free:
                    url = min(free, key=lambda u: (self._failures.get(u, 0), self.load(u)))
                    self._load[url] = self.load(url) + 1
                    return url
                await self._changed.wait()

    async def release(self, url: str) -> None:
        async with self._changed:
            self._load[url] = max(0, self.load(url) - 1)
            self._changed.notify_all()

    async def dial(self, config: ConnectorConfig, role: Side) -> SideEndpoint:
        """Dial a free endpoint of ``config``'s pool, retrying refusals for a bounded time."""
        backoff = FIRST_BACKOFF_S
        failing_since: float | None = None
        errors: dict[str, str] = {}
        while True:
            url = await self._acquire(config)
            try:
                endpoint = await dial(replace(config, url=url), role)
            except (ConnectorOptionsError, CallRefused):
                await self.release(url)  # wrong options, or a call answered "no": never retried
                raise
            except Exception as exc:
                await self.release(url)
                self._failures[url] = self._failures.get(url, 0) + 1
                errors[url] = str(exc) or type(exc).__name__
                now = time.monotonic()
                failing_since = now if failing_since is None else failing_since
                if now + backoff - failing_since > config.connect_timeout_s:
                    tried = "; ".join(f"{u}: {e}" for u, e in errors.items())
                    raise ConnectorError(
                        f"{config.kind} connector: no endpoint accepted the {role} session "
                        f"within {config.connect_timeout_s:g} s of retries ({tried})"
                    ) from exc
                log.warning(
                    "%s connector %s: %s; retrying in %.1f s", config.kind, url, exc, backoff
                )
                await asyncio.sleep(backoff)  # backoff between dial attempts
                backoff = min(backoff * 2, MAX_BACKOFF_S)
                continue
            except BaseException:
                await self.release(url)
                raise
            self._failures.pop(url, None)
            return LeasedEndpoint(endpoint, self, url)
