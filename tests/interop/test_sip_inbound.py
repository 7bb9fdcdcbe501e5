"""Taking an outbound agent's call: SIPp dials the bridge's --sip-listen address.

The run's agent is ``sip-inbound:``: each session waits for the agent's call,
matched by the dialled user part (the scenario's name). The caller side is
the reference user bot answering as a voicemail box (greeting, beep, then it
listens); the verdict follows what the agent does after the beep: a message,
or hanging up at once.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
import yaml

from tests.conftest import require_tool
from tests.interop import sipp_scenarios as sc
from tests.interop.conftest import ROOT, SETTINGS
from tests.interop.sip_helpers import assert_loopback_only, free_udp_port, run_through, sipp
from vae.bridge.v1 import bridge_pb2
from vae.bridge_service.server import BridgeServer
from vae.recordings.models import Side
from vae.recordings.read.reader import RecordingReader
from vae.scorer_service.config import ScoringConfig
from vae.scorer_service.scoring.rescore import rescore

VOICEMAIL = yaml.safe_load((ROOT / "examples/suite/outbound_voicemail_message.yaml").read_text())
#: The greeting (eSpeak, about 4.5 s) and its beep have played by then.
AFTER_BEEP_MS = 7500
INBOUND = bridge_pb2.ConnectorConfig(kind="sip-inbound", url="sip-inbound:",
                                     options_json='{"wait_s": 30}')  # fmt: skip


@pytest.fixture
async def listening(db_path: Path) -> AsyncIterator[BridgeServer]:
    require_tool("sipp", "bash scripts/ci_setup_sip.sh")
    server = BridgeServer(db_path, SETTINGS, sip_listen=f"127.0.0.1:{free_udp_port()}")
    await server.start()
    try:
        yield server
    finally:
        await server.stop()


def message_wav(path: Path, seconds: float) -> Path:
    """A voiced 'message' (a 180 Hz buzz, syllable-modulated), 8 kHz mu-law as SIPp plays it."""
    t = np.arange(int(8000 * seconds)) / 8000
    voiced = np.sign(np.sin(2 * np.pi * 180 * t)) * (0.6 + 0.4 * np.sin(2 * np.pi * 3 * t))
    sf.write(path, (voiced * 9000).astype(np.int16), 8000, subtype="ULAW")
    return path


@pytest.mark.parametrize(("message_s", "verdict"), [(4.0, "passed"), (0.0, "failed")])
async def test_a_voicemail_is_judged_by_what_the_agent_does_after_the_beep(
    tmp_path: Path, listening: BridgeServer, db_path: Path, message_s: float, verdict: str
) -> None:
    import grpc

    from vae.bridge.v1 import bridge_pb2_grpc

    assert listening.sip is not None
    wav = str(message_wav(tmp_path / "message.wav", message_s)) if message_s else ""
    agent = sc.calling_agent(AFTER_BEEP_MS, int(message_s * 1000), wav)
    async with grpc.aio.insecure_channel(listening.address) as channel:
        stub = bridge_pb2_grpc.BridgeServiceStub(channel)
        async with sipp(tmp_path, agent, "-s", VOICEMAIL["name"],
                        client_to=listening.sip.address) as far:  # fmt: skip
            run_id, _ = await run_through(listening, stub, [VOICEMAIL], INBOUND, within_s=60)
            assert await far.finished() == 0, far.messages()
    result = await rescore(db_path, run_id, ScoringConfig(no_judge=True))
    with RecordingReader(db_path) as r:
        (s,) = r.sessions(run_id)
        scores = {x.signal: x for x in r.scores(result.scoring.scoring_id, s.session_id)}
        box = r.final_states(s.session_id)
    assert s.stop_reason == "end_tool" and "hung up (BYE)" in s.stop_detail  # the agent's BYE
    assert s.agent_bot["labels"]["direction"] == "inbound"
    assert str(scores["is_successful"].verdict) == verdict, box
    heard = box[Side.USER].state["voicemail"]["message_s"]
    assert heard > 2.0 if message_s else heard < 0.5  # the box heard the message, or nothing
    assert_loopback_only(far.messages())
