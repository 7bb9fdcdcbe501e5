"""Two virtual-clock runs of the example suite with the same seed record the same thing.

The reference bots with their eSpeak voice (the buzz without eSpeak), the
whole example suite at once, twice, on the virtual clock with the same
seed: every audio channel of every session is identical sample for sample,
every event is recorded at the same time on the session clock, and every
session ends at the same time for the same reason. Nothing in a virtual run
depends on how fast the machine was or how the sessions interleaved.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import yaml

from tests.bots.conftest import run_with_bots
from vae.bots.sound.speech import default_synthesiser
from vae.bridge_service.server import BridgeServer
from vae.common.v1 import common_pb2
from vae.recordings.models import Channel
from vae.recordings.read.reader import RecordingReader

SUITE = Path(__file__).resolve().parents[2] / "examples" / "suite"


def example_suite() -> list[dict[str, Any]]:
    return [yaml.safe_load(p.read_text()) for p in sorted(SUITE.glob("*.yaml"))]


def recording(db: Path, run_id: str) -> dict[str, Any]:
    """Per scenario: its channels, its events' (side, kind, session time), its end."""
    out = {}
    with RecordingReader(db) as reader:
        for s in reader.latest_attempts(run_id).values():
            channels = {str(c): reader.read_channel(s.session_id, c).samples for c in Channel}
            events = [
                (str(e.side), str(e.kind), e.bridge_ns - s.started_ns)
                for e in reader.events(s.session_id)
            ]
            end = (s.stop_reason, s.ended_ns - s.started_ns if s.ended_ns else None)
            out[s.scenario_name] = (channels, sorted(events), end)
    return out


async def test_two_virtual_runs_with_the_same_seed_are_identical(bridge: BridgeServer) -> None:
    scenarios = example_suite()
    synth = default_synthesiser()
    options: dict[str, Any] = {
        "clock": common_pb2.CLOCK_KIND_VIRTUAL, "seed": 7,
        "max_auto_retries": 0,
    }  # fmt: skip
    first = await run_with_bots(bridge, scenarios, synth=synth, timeout_s=120, **options)
    second = await run_with_bots(bridge, scenarios, synth=synth, timeout_s=120, **options)
    a, b = recording(bridge.db_path, first), recording(bridge.db_path, second)
    assert set(a) == set(b) == {s["name"] for s in scenarios}
    for name in sorted(a):
        (ca, ea, enda), (cb, eb, endb) = a[name], b[name]
        assert enda == endb, name
        for channel in ca:
            assert len(ca[channel]) > 0, (name, channel)
            assert np.array_equal(ca[channel], cb[channel]), (name, channel)
        assert ea == eb, name
