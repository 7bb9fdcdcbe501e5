"""A tool backend on a real loopback port, over a small restaurant world."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from vae.recordings.models import EventKind
from vae.tools.spec import ToolSet
from vae.tools.world import ToolWorld

pytest.importorskip("mcp", reason="the tools extra (pip install 'vae[tools]') is not installed")

from vae.bridge_service.tools.backend import ToolBackend
from vae.bridge_service.tools.http import application

TOOLS: dict[str, Any] = {
    "book_table": {"date": "ISO date", "time": "HH:MM", "party_size": "guests"},
    "get_booking": {"booking_id": "the booking code"},
    "check_availability": {"date": "ISO date"},
    "cancel_booking": {"booking_id": "the booking code"},
    "list_specials": {},
}
SIDE: dict[str, Any] = {
    "tool_effects": {
        "book_table": [
            {
                "op": "set",
                "path": "bookings.{date}",
                "value": {"date": "$args.date", "time": "$args.time", "party": "$args.party_size"},
            },
            {"op": "increment", "path": "stats.booked"},
        ],
        "get_booking": [{"op": "get", "path": "bookings.{booking_id}"}],
        "cancel_booking": [{"op": "delete", "path": "bookings.{booking_id}"}],
    },
    "tool_argument_types": {
        "book_table": {"date": "date", "time": "string", "party_size": "integer"},
    },
    "tool_responses": {
        "check_availability": [
            {"when": {"date": "2026-05-03"}, "result": {"available": False, "why": "full"}},
            {"when": {"date": {"date": True}}, "result": {"available": True}},
        ],
        "cancel_booking": [
            {"status": 503, "error": "the booking API is down", "delay_s": 0.4, "times": 1},
        ],
    },
}
INITIAL = {"bookings": {"2026-01-01": {"date": "2026-01-01", "time": "12:00", "party": 2}}}


@dataclass
class Recorded:
    events: list[tuple[EventKind, dict[str, Any], int]] = field(default_factory=list)

    async def __call__(self, kind: EventKind, payload: dict[str, Any], ns: int) -> None:
        self.events.append((kind, payload, ns))

    def calls(self) -> list[dict[str, Any]]:
        return [p for k, p, _ in self.events if k is EventKind.TOOL_BACKEND_CALL]


@dataclass
class Served:
    backend: ToolBackend
    recorded: Recorded

    @property
    def url(self) -> str:
        assert self.backend.addresses is not None
        return self.backend.addresses.http_url


async def start(initial: dict[str, Any] | None = None) -> Served:
    world = ToolWorld(ToolSet.from_side(TOOLS, SIDE), initial if initial is not None else INITIAL)
    recorded = Recorded()
    t0 = time.time_ns()
    backend = ToolBackend(world, recorded, time.time_ns, t0, title="test tools")
    await backend.start(application)
    return Served(backend, recorded)


@pytest.fixture
async def served() -> AsyncIterator[Served]:
    s = await start()
    try:
        yield s
    finally:
        await s.backend.close()
