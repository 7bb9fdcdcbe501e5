"""Seeded noise, dual-sided state sync, transcript sharing."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import soundfile

from tests.bridge_service.bots import TestBot, tone
from tests.bridge_service.conftest import run_pair, scenario
from vae.bridge.v1 import bridge_pb2, bridge_pb2_grpc
from vae.bridge_service.audio.noise import NoiseSource
from vae.bridge_service.server import BridgeServer
from vae.common.v1 import common_pb2
from vae.recordings.models import EventKind
from vae.recordings.read.reader import RecordingReader
from vae.recordings.scenarios.model import NoiseConfig

AGENT = common_pb2.ROLE_AGENT


async def quiet(bot: TestBot) -> None:
    """Silent: what the agent hears is the noise alone."""


def delivered(reader: RecordingReader, run_id: str, channel: str) -> np.ndarray:
    (s,) = reader.sessions(run_id)
    pcm = b"".join(x.pcm for x in reader.segments(s.session_id, channel))
    return np.frombuffer(pcm, dtype="<i2")


async def test_seeded_noise_on_user_to_agent_only(
    bridge: BridgeServer, stub: bridge_pb2_grpc.BridgeServiceStub
) -> None:
    doc = scenario(noise={"white_noise_db": -30})
    runs = []
    for seed in (7, 7, 8):
        *_, run_id = await run_pair(
            bridge, stub, quiet, quiet, [doc], seed=seed, inactivity_timeout_s=0.4
        )
        runs.append(run_id)
    with RecordingReader(bridge.db_path) as reader:
        first, again, other = (delivered(reader, r, "to_agent") for r in runs)
        to_user = delivered(reader, runs[0], "to_user")
    n = min(len(first), len(again), len(other))
    assert n > 4000
    rms_db = 20 * np.log10(np.sqrt(np.mean(first[:n].astype(float) ** 2)) / 32767)
    assert -31.5 < rms_db < -28.5
    assert np.array_equal(first[:n], again[:n])  # same seed: the same noise on replay
    assert not np.array_equal(first[:n], other[:n])
    assert not to_user.any()  # never on the agent->user direction


def test_noise_file_gain_and_offset(tmp_path: Path) -> None:
    path = tmp_path / "hum.wav"
    soundfile.write(path, tone(1.0, 8000, 100, 0.5), 8000, subtype="PCM_16")
    config = NoiseConfig(noise_files=[str(path)], gain_db=-6.0, random_offset=True)
    a, b = NoiseSource(config, 16000, 1).next(16000), NoiseSource(config, 16000, 2).next(16000)
    peak = np.max(np.abs(a)) / 32767
    assert 0.22 < peak < 0.28  # 0.5 at -6 dB
    assert not np.allclose(a, b)  # a different random start


async def test_dual_sided_state_sync(
    bridge: BridgeServer, stub: bridge_pb2_grpc.BridgeServiceStub
) -> None:
    doc = scenario(
        user={"resources": {"tools": {"check_signal": {}}}},
        initial_user_state={"phone": {"signal": "full", "battery": 90}},
        sync_hook="tests.bridge_service.sync_hooks:hook",
    )

    async def agent(bot: TestBot) -> None:
        await bot.speak(tone(0.2, 16000))
        for call_id, name in (("c1", "suspend_line"), ("c2", "explode"), ("c3", "lookup")):
            await bot.event(
                tool_call=common_pb2.ToolCall(
                    call_id=call_id, name=name, arguments_json="{}", is_write=name != "lookup"
                )
            )
        await bot.speak(tone(0.2, 16000))
        await bot.end(common_pb2.END_KIND_AGENT_END_TOOL)

    async def user(bot: TestBot) -> None:
        await bot.speak(tone(0.3, 16000))

    got_u, got_a, _, run_id = await run_pair(bridge, stub, user, agent, [doc])
    (sync,) = got_u.state_syncs
    assert json.loads(sync.delta_json) == {"phone": {"signal": "none"}}
    assert sync.cause_call_id == "c1" and sync.cause_side == AGENT and sync.sequence == 1
    assert [json.loads(s.delta_json) for s in got_a.state_syncs] == [{"suspended": True}]
    assert json.loads(got_u.start.initial_state_json)["phone"]["battery"] == 90
    with RecordingReader(bridge.db_path) as reader:
        (s,) = reader.sessions(run_id)
        recorded = reader.events(s.session_id, [EventKind.STATE_SYNC])
        assert sorted(e.payload["to"] for e in recorded) == ["agent", "user"]
        errors = reader.events(s.session_id, [EventKind.SESSION_ERROR])
        assert "hook bug" in errors[0].payload["error"]
        assert s.stop_reason == "end_tool"  # a failing hook does not end the session


async def test_transcript_sharing(
    bridge: BridgeServer, stub: bridge_pb2_grpc.BridgeServiceStub
) -> None:
    async def user(bot: TestBot) -> None:
        await bot.event(
            transcript=common_pb2.Transcript(
                kind=common_pb2.TRANSCRIPT_KIND_SPOKEN, text="hi there", is_final=True
            )
        )
        await bot.speak(tone(0.2, 16000))

    async def agent(bot: TestBot) -> None:
        await bot.speak(tone(0.5, 16000))
        await bot.end(common_pb2.END_KIND_AGENT_END_TOOL)

    shared = await run_pair(bridge, stub, user, agent, share_transcripts=True)
    assert [e.transcript.text for e in shared[1].peer_events] == ["hi there"]
    assert shared[1].start.share_transcripts is True
    private = await run_pair(bridge, stub, user, agent)
    assert private[1].peer_events == [] and private[1].start.share_transcripts is False
    got = await stub.GetRun(bridge_pb2.GetRunRequest(run_id=shared[3]))
    assert got.run.options.share_transcripts is True  # recorded with the run's options
