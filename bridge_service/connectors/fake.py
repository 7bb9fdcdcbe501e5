"""A fake connector for tests and demos: a bot that lives inside the bridge.

``ConnectorConfig(kind="fake", options={...})`` dials a bot that, once the
session starts, speaks a deterministic tone in real time (``speak_s`` seconds
at ``rate`` Hz in ``chunk_ms`` chunks, after ``delay_s``), optionally ends the
conversation (``end``: true), and answers SessionEnding with its final state
``{"fake": true, "received_frames": N}``. ``fail_dial``: true makes dialling
fail, for testing connector errors; ``fail_dials``: N fails only the first N
dials of its URL (a bot that refuses while it is still starting). It exercises the same seam a real
connector (pipecat) implements, without any network.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from typing import Any

import numpy as np

from vae.bridge_service.connectors.base import (
    BotAudio,
    BotEvent,
    BotInfo,
    BotInput,
    BotProtocolError,
    BridgeOutput,
    ConnectorConfig,
    ConnectorError,
    FinalStatePart,
    JsonPiece,
    PeerAudio,
    SessionEndingOut,
    SessionStartInfo,
)
from vae.recordings.models import EventKind, Side


class FakeEndpoint:
    def __init__(self, role: Side, options: dict[str, Any]) -> None:
        self.role = role
        self.bot = BotInfo("fake", "1", {"connector": "fake"})
        self.send_rate = int(options.get("rate", 16000))
        self.receive_rate = int(options.get("receive_rate", self.send_rate))
        self.options = options
        self.received_frames = 0
        self.sent: list[BridgeOutput] = []
        self._started = asyncio.Event()
        self._ending = asyncio.Event()
        self._closed = asyncio.Event()

    async def receive(self) -> AsyncIterator[BotInput]:
        await self._started.wait()
        await asyncio.sleep(float(self.options.get("delay_s", 0.0)))
        chunk_ms = int(self.options.get("chunk_ms", 20))
        n = self.send_rate * chunk_ms // 1000
        total = int(float(self.options.get("speak_s", 1.0)) * self.send_rate)
        t = np.arange(total) / self.send_rate
        tone = (np.sin(2 * np.pi * 330 * t) * 8000).astype("<i2")
        t0 = time.monotonic()
        for seq, start in enumerate(range(0, total, n)):
            if self._ending.is_set():
                break
            # Real-time pacing: this is the bot's own clock, not test synchronisation.
            await asyncio.sleep(max(0.0, t0 + seq * chunk_ms / 1000 - time.monotonic()))
            yield BotAudio(seq, start, tone[start : start + n].tobytes(), time.time_ns())
        if self.options.get("end") and not self._ending.is_set():
            kind = "agent_end_tool" if self.role is Side.AGENT else "user_hang_up"
            yield BotEvent(EventKind.END_CONVERSATION, time.time_ns(), {"kind": kind, "reason": ""})
        await self._ending.wait()
        state = json.dumps({"fake": True, "received_frames": self.received_frames}).encode()
        yield FinalStatePart(state=JsonPiece(0, state, True), done=True)
        await self._closed.wait()

    async def send(self, message: BridgeOutput) -> bool:
        self.sent.append(message)
        if isinstance(message, SessionStartInfo):
            self._started.set()
        elif isinstance(message, PeerAudio):
            self.received_frames += 1
        elif isinstance(message, SessionEndingOut):
            self._ending.set()
        return True

    async def close(self, error: BotProtocolError | None = None) -> None:
        self._ending.set()
        self._closed.set()


#: Dials seen per URL, for ``fail_dials``.
_dials: dict[str, int] = {}


async def dial(config: ConnectorConfig, role: Side) -> FakeEndpoint:
    _dials[config.url] = seen = _dials.get(config.url, 0) + 1
    if config.options.get("fail_dial") or seen <= int(config.options.get("fail_dials", 0)):
        raise ConnectorError(f"fake connector: cannot reach {config.url or 'the bot'}")
    return FakeEndpoint(role, config.options)
