"""Keypad tones end to end: the scripted caller presses keys, the reference agent hears them.

The caller's ``dtmf: "42#"`` step reaches the bridge as a BotEvent; the
bridge mixes the standard tones into what a gRPC agent receives; the
reference agent (``vae bot agent``) detects them with the Goertzel detector
and reports the digits as its own event. Both events are recorded; the
tones are in ``to_agent`` and not in the caller's own ``user`` channel.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.bots.conftest import run_with_bots
from vae import dtmf
from vae.bridge_service.server import BridgeServer
from vae.common.v1 import common_pb2
from vae.recordings.models import Channel, EventKind, Side
from vae.recordings.read.reader import RecordingReader

VIRTUAL = common_pb2.CLOCK_KIND_VIRTUAL
REAL = common_pb2.CLOCK_KIND_REAL


def keypad_scenario(name: str, line: dict[str, Any] | None = None) -> dict[str, Any]:
    user: dict[str, Any] = {
        "persona": {"name": "Sam"},
        "script": [
            {"say": "I want to check my balance."},
            {"say": "Here it is.", "dtmf": "42#"},
            {"say": "Thanks, bye.", "end": True},
        ],
    }
    if line is not None:
        user["line"] = line
    return {
        "name": name,
        "domain": "bank",
        "max_duration": 30,
        "user": user,
        "agent": {
            "persona": {"role": "bank agent"},
            "script": [
                {"say": "Bank line, how can I help?"},
                {"say": "Please key in your PIN followed by hash."},
                {"say": "Thank you, your balance is ten dollars."},
                {"say": "Goodbye."},
            ],
        },
        "success_signals": ["CLEAN_EXIT"],
    }


@pytest.mark.parametrize(
    ("clock", "line"),
    [(VIRTUAL, None), (REAL, None), (VIRTUAL, {"codec": "mulaw8k"})],
    ids=["virtual", "real", "virtual-mulaw8k"],
)
async def test_the_reference_agent_detects_42_hash_from_in_band_tones(
    bridge: BridgeServer, clock: int, line: dict[str, Any] | None
) -> None:
    run_id = await run_with_bots(
        bridge, [keypad_scenario("keys", line)], clock=clock, max_auto_retries=0
    )
    with RecordingReader(bridge.db_path) as reader:
        (s,) = reader.latest_attempts(run_id).values()
        events = reader.events(s.session_id, [EventKind.DTMF])
        to_agent = reader.read_channel(s.session_id, Channel.TO_AGENT)
        said = reader.read_channel(s.session_id, Channel.USER)
    sent = [e.payload for e in events if e.side is Side.USER]
    heard = [e.payload["digits"] for e in events if e.side is Side.AGENT]
    assert [p["digits"] for p in sent] == ["42#"]
    assert sent[0]["carried_as"] == "in_band_tones"
    assert (sent[0]["tone_ms"], sent[0]["gap_ms"]) == (100, 100)
    assert "".join(heard) == "42#", heard
    # The tones are in what the agent got, not in what the caller's bot sent.
    assert dtmf.detect(to_agent.samples, to_agent.sample_rate) == "42#"
    assert dtmf.detect(said.samples, said.sample_rate) == ""
    assert s.stop_reason == "user_hang_up"


async def test_in_a_text_session_the_keys_reach_the_agent_as_a_message(
    bridge: BridgeServer,
) -> None:
    run_id = await run_with_bots(
        bridge,
        [keypad_scenario("keys_text")],
        modality=common_pb2.MODALITY_TEXT,
        clock=VIRTUAL,
        max_auto_retries=0,
    )
    with RecordingReader(bridge.db_path) as reader:
        (s,) = reader.latest_attempts(run_id).values()
        events = reader.events(s.session_id, [EventKind.DTMF])
    (sent,) = [e.payload for e in events if e.side is Side.USER]
    assert (sent["digits"], sent["carried_as"]) == ("42#", "text_message")
    assert [e.payload["digits"] for e in events if e.side is Side.AGENT] == ["42#"]
    assert s.stop_reason == "user_hang_up"


@pytest.mark.parametrize("kind", ["buzz", "auto"])
def test_the_agents_ear_hears_no_keys_in_speech(kind: str) -> None:
    """Every line of the example suite, spoken by the bots' voices: never a key."""
    from pathlib import Path

    import numpy as np
    import yaml

    from vae.bots.sound.speech import default_synthesiser

    synth = default_synthesiser(kind)
    suite = Path(__file__).resolve().parents[3] / "examples" / "suite"
    lines = [
        item["say"] if isinstance(item, dict) else item
        for path in sorted(suite.glob("*.yaml"))
        for side in ("user", "agent")
        for item in (yaml.safe_load(path.read_text()).get(side) or {}).get("script", [])
        if (isinstance(item, dict) and item.get("say")) or isinstance(item, str)
    ]
    assert len(lines) > 20
    speech = np.concatenate([synth.synthesise(line) for line in lines])
    assert dtmf.detect(speech.astype(np.float64), synth.sample_rate) == ""


async def test_a_replay_presses_the_recorded_keys_again(bridge: BridgeServer) -> None:
    """The replayed caller's audio has no tones (``user`` is what it sent): its keys are
    pressed again at the end of the turn they followed, and the agent hears them again."""
    from tests.bridge_service.replay.helpers import record, replay

    source = await record(bridge, [keypad_scenario("keys_replay")], clock=VIRTUAL)
    run_id = await replay(bridge, source, clock=VIRTUAL)
    with RecordingReader(bridge.db_path) as reader:
        (s,) = reader.latest_attempts(run_id).values()
        events = reader.events(s.session_id, [EventKind.DTMF])
        to_agent = reader.read_channel(s.session_id, Channel.TO_AGENT)
    (sent,) = [e.payload for e in events if e.side is Side.USER]
    assert (sent["digits"], sent["carried_as"], sent["replayed"]) == ("42#", "in_band_tones", True)
    assert "".join(e.payload["digits"] for e in events if e.side is Side.AGENT) == "42#"
    assert dtmf.detect(to_agent.samples, to_agent.sample_rate) == "42#"
