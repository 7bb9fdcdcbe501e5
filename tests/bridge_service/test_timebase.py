"""The session's clock seam and the limits read on it."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import pytest

from vae.bridge_service.config import BridgeSettings, RunSettings, StopReason
from vae.bridge_service.session.ending import EndRequest
from vae.bridge_service.session.limits import check_limits, next_deadline_ns
from vae.bridge_service.session.plan import SessionPlan
from vae.bridge_service.session.turns import TextTurnCounter
from vae.bridge_service.timebase import RealTime, VirtualTime, session_time
from vae.recordings.models import Side
from vae.recordings.scenarios.parse import scenario_from_dict

NS = 1_000_000_000


def test_real_time_is_the_wall_clock_itself() -> None:
    real = session_time("real")
    assert isinstance(real, RealTime) and not real.virtual
    assert real.now_ns is time.time_ns  # the seam costs the real-time path nothing
    assert abs(real.elapsed_ns()) < 5 * NS


def test_virtual_time_moves_only_forward() -> None:
    virtual = session_time("virtual")
    assert isinstance(virtual, VirtualTime) and virtual.virtual
    assert virtual.elapsed_ns() == 0 and virtual.now_ns() == virtual.started_ns
    virtual.advance_to(30 * NS)
    assert virtual.now_ns() - virtual.started_ns == 30 * NS
    with pytest.raises(ValueError, match="cannot go back"):
        virtual.advance_to(NS)
    with pytest.raises(ValueError, match="unknown clock 'fast'"):
        session_time("fast")


@dataclass
class FakeSession:
    """What the limits read of a session (``SessionState``'s attributes)."""

    plan: SessionPlan
    time: VirtualTime = field(default_factory=VirtualTime)
    counters: dict[Side, Any] = field(
        default_factory=lambda: {Side.USER: TextTurnCounter(), Side.AGENT: TextTurnCounter()}
    )
    end_request: EndRequest | None = None

    @property
    def started_ns(self) -> int:
        return self.time.started_ns

    @property
    def ended(self) -> bool:
        return self.end_request is not None

    def turns(self) -> dict[Side, int]:
        return {side: c.turns for side, c in self.counters.items()}

    def request_end(self, request: EndRequest) -> None:
        self.end_request = self.end_request or request


def fake(max_duration: float = 30, **settings: Any) -> FakeSession:
    sc = scenario_from_dict({"name": "s", "max_duration": max_duration}, "test")
    run = RunSettings(clock="virtual", **settings)
    return FakeSession(SessionPlan("r", "r_s_a1", sc, 1, run, BridgeSettings()))


@pytest.mark.parametrize(
    ("setup", "due_s", "reason"),
    [
        ({}, 10, StopReason.FIRST_SPEAKER_SILENT),  # nobody spoke: the first speaker's wait
        ({"first_speaker_timeout_s": 60}, 30, StopReason.MAX_DURATION),
        ({"inactivity_timeout_s": 4, "spoke_at": 2}, 6, StopReason.INACTIVITY_TIMEOUT),
        ({"inactivity_timeout_s": 40, "spoke_at": 2}, 30, StopReason.MAX_DURATION),
    ],
)
def test_the_next_deadline_is_exactly_where_a_limit_fires(
    setup: dict[str, Any], due_s: float, reason: StopReason
) -> None:
    spoke_at = setup.pop("spoke_at", None)
    s = fake(**setup)
    if spoke_at is not None:
        s.counters[Side.AGENT].count(s.started_ns + spoke_at * NS)
    due = next_deadline_ns(s)  # type: ignore[arg-type]
    assert due - s.started_ns == due_s * NS
    check_limits(s, due - 1)  # type: ignore[arg-type]
    assert s.end_request is None, "one nanosecond early: nothing fires"
    check_limits(s, due)  # type: ignore[arg-type]
    assert s.end_request is not None and s.end_request.reason is reason
