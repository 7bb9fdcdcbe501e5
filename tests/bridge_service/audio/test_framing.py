"""Frame negotiation: the allowed values, the defaults, and clear refusals."""

from __future__ import annotations

import pytest

from vae.bridge_service.audio.framing import ALLOWED_FRAME_MS, Framing, endpoint_framing, negotiate
from vae.bridge_service.connectors.base import BotInfo, BotProtocolError, PeerAudio
from vae.bridge_service.edge.converse_endpoint import GrpcEndpoint
from vae.bridge_service.edge.protocol_state import ProtocolState
from vae.recordings.models import Side


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


@pytest.mark.parametrize(("k", "messages"), [(1, 25), (10, 2), (60, 1)])
async def test_the_outgoing_audio_bound_counts_frames_not_messages(k: int, messages: int) -> None:
    """A bot that stops reading gets at most max_outgoing_frames frames queued (never 0)."""
    endpoint = GrpcEndpoint(
        Side.AGENT,
        BotInfo(),
        16000,
        16000,
        max_frames=25,
        protocol=ProtocolState(max_events_per_s=500),
        framing=Framing(60, k),
    )
    accepted = [endpoint.send_nowait(PeerAudio(i, 0, b"", 0)) for i in range(30)]
    assert accepted == [True] * messages + [False] * (30 - messages)
