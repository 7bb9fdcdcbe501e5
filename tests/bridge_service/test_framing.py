"""Frame negotiation: the allowed values, the defaults, and clear refusals."""

from __future__ import annotations

import pytest

from bridge_service.connectors.base import BotProtocolError
from bridge_service.framing import ALLOWED_FRAME_MS, Framing, endpoint_framing, negotiate


def test_allowed_lengths_and_defaults() -> None:
    for ms in ALLOWED_FRAME_MS:
        assert negotiate(ms, 1) == Framing(ms, 1)
    assert negotiate(0, 0) == Framing(0, 1)
    assert negotiate(0, 0).resolve(20) == Framing(20, 1)
    assert negotiate(40, 3).resolve(16) == Framing(40, 3)


@pytest.mark.parametrize(
    ("ms", "k", "field", "allowed"),
    [
        (25, 1, "join.frame_ms", "25 ms is not supported; use one of 10, 16, 20, 32, 40, 60"),
        (16, 11, "join.frames_per_message", "11 is not supported; use 1..10"),
    ],
)
def test_unsupported_values_name_the_field_and_the_allowed_set(
    ms: int, k: int, field: str, allowed: str
) -> None:
    with pytest.raises(BotProtocolError) as info:
        negotiate(ms, k)
    assert info.value.field == field
    assert allowed in str(info.value)


def test_connectors_without_negotiation_use_the_run_default() -> None:
    class Endpoint:
        pass

    assert endpoint_framing(Endpoint(), 20) == Framing(20, 1)
    asked = Endpoint()
    asked.framing = Framing(60, 2)  # type: ignore[attr-defined]
    assert endpoint_framing(asked, 20) == Framing(60, 2)
