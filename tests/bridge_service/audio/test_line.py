"""Phone-line conditions (issue 25, part 2), measured on the recording.

The sessions run on the virtual clock with lock-step bots, so the caller's
audio reaches the bridge at the same session time in every run and what the
agent receives depends on the line alone: the tests can compare runs sample
for sample. One test runs on the real clock (the line holds there too).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

import grpc
import numpy as np
import pytest

from tests.bridge_service.bots import TestBot
from tests.bridge_service.conftest import run_pair, scenario, start_run, watch
from tests.bridge_service.lockstep_bots import StepBot
from vae.bridge.v1 import bridge_pb2, bridge_pb2_grpc
from vae.bridge_service.server import BridgeServer
from vae.common.v1 import common_pb2
from vae.recordings.models import Channel
from vae.recordings.read.reader import RecordingReader

USER, AGENT = common_pb2.ROLE_USER, common_pb2.ROLE_AGENT
VIRTUAL = common_pb2.CLOCK_KIND_VIRTUAL
RATE = 16000
PACKET = RATE * 20 // 1000


@dataclass
class NoiseBot(StepBot):
    """A caller whose speech is broadband noise (the same in every run: its own seed)."""

    def __post_init__(self) -> None:
        super().__post_init__()
        self._noise = np.random.default_rng(1234)

    def _pcm(self, n: int, loud: bool) -> bytes:
        if not loud:
            return bytes(2 * n)
        return np.clip(self._noise.normal(0, 6000, n), -32768, 32767).astype("<i2").tobytes()


async def _session(
    bridge: BridgeServer,
    stub: bridge_pb2_grpc.BridgeServiceStub,
    user_line: dict[str, Any] | None,
    *,
    seed: int = 7,
    speak: range = range(40, 400),
    end_at: int = 420,
    **options: Any,
) -> tuple[np.ndarray, np.ndarray, dict[str, Any] | None]:
    """One virtual-clock call: the caller's ``user`` and ``to_agent`` channels and the line."""
    user_side: dict[str, Any] = {"persona": {"name": "Ann"}}
    if user_line is not None:
        user_side["line"] = user_line
    doc = scenario(user=user_side)
    run_id = await start_run(stub, [doc], clock=VIRTUAL, seed=seed, **options)
    user = NoiseBot(bridge.address, USER, run_id, speak_steps=speak, end_at=end_at)
    agent = StepBot(bridge.address, AGENT, run_id, speak_steps=range(0, 30))
    _, _, events = await asyncio.gather(user.run(), agent.run(), watch(stub, run_id, 60))
    assert events[-1].status == bridge_pb2.RUN_STATUS_COMPLETED
    with RecordingReader(bridge.db_path) as reader:
        (s,) = reader.sessions(run_id)
        said = reader.read_channel(s.session_id, Channel.USER).samples
        got = reader.read_channel(s.session_id, Channel.TO_AGENT).samples
        recorded = reader.session_lines(run_id).get(s.session_id)
    return said, got, recorded


def _share_above(samples: np.ndarray, hz: float) -> float:
    """The share of the signal's energy above ``hz``."""
    spectrum = np.abs(np.fft.rfft(samples.astype(np.float64))) ** 2
    freqs = np.fft.rfftfreq(len(samples), 1 / RATE)
    return float(spectrum[freqs > hz].sum() / spectrum.sum())


def _zeroed_packets(samples: np.ndarray) -> np.ndarray:
    """Per 20 ms packet (on the grid from the first frame): whether it is all zeros."""
    n = len(samples) // PACKET
    return np.all(samples[: n * PACKET].reshape(n, PACKET) == 0, axis=1)


async def test_mulaw8k_leaves_almost_no_energy_above_4_khz(
    bridge: BridgeServer, stub: bridge_pb2_grpc.BridgeServiceStub
) -> None:
    said, got, recorded = await _session(bridge, stub, {"codec": "mulaw8k"})
    assert _share_above(said, 4000) > 0.4  # white noise at 16 kHz: half above 4 kHz
    assert _share_above(got, 4000) < 0.01  # narrowband: under 1 % of the energy
    # The voice band survives: the caller's energy still reaches the agent.
    rms = [float(np.sqrt(np.mean(x.astype(np.float64) ** 2))) for x in (said, got)]
    assert rms[1] > 0.5 * rms[0]
    # Never a gap while the caller speaks (steps 40..400, after the jitter buffer and
    # the filters' 10 ms): no run of 1 ms of zeros.
    speaking = got[47 * 256 : 395 * 256]
    zero = np.concatenate([[0], (speaking == 0).astype(np.int8), [0]])
    runs = np.flatnonzero(np.diff(zero) == -1) - np.flatnonzero(np.diff(zero) == 1)
    assert runs.max(initial=0) < 16, runs.max()
    assert recorded is not None and recorded["codec"] == "mulaw8k" and recorded["seed"]


async def test_packet_loss_zeroes_about_that_share_of_20_ms_packets(
    bridge: BridgeServer, stub: bridge_pb2_grpc.BridgeServiceStub
) -> None:
    """packet_loss 0.1 over 500 packets: 10 % +- 3 % zeroed (about 2.2 standard deviations)."""
    line = {"packet_loss": 0.1, "white_noise_db": -30}  # noise: no packet is silent by itself
    _, got, recorded = await _session(bridge, stub, line, speak=range(0), end_at=625)
    zeroed = _zeroed_packets(got)
    assert len(zeroed) >= 500
    assert 0.07 <= zeroed.mean() <= 0.13, zeroed.mean()
    assert recorded is not None
    assert recorded["packet_loss"] == 0.1 and recorded["late"] == 0
    # The recorded count is the packets the agent lost (the last may be cut by the end).
    assert abs(recorded["lost"] - int(zeroed.sum())) <= 1


async def test_the_same_seed_gives_the_same_to_agent_and_another_seed_another(
    bridge: BridgeServer, stub: bridge_pb2_grpc.BridgeServiceStub
) -> None:
    line = {"codec": "mulaw8k", "packet_loss": 0.2, "packet_loss_burst": 3, "jitter_ms": 30}
    runs = [await _session(bridge, stub, line, seed=seed, end_at=300) for seed in (7, 7, 8)]
    (said, first, _), (_, again, _), (_, other, _) = runs
    n = min(len(first), len(again), len(other))
    assert n >= 290 * 256
    assert np.array_equal(first[:n], again[:n])
    assert not np.array_equal(first[:n], other[:n])
    # Both lost packets, in different places (the loss pattern is the seed's).
    a, b = _zeroed_packets(first[:n]), _zeroed_packets(other[:n])
    assert a.any() and b.any() and not np.array_equal(a, b)
    # The caller's own channel is what it sent, whatever the line.
    assert np.array_equal(said, runs[1][0]) and said.any()


async def test_run_option_line_overrides_the_scenario_field_by_field(
    bridge: BridgeServer, stub: bridge_pb2_grpc.BridgeServiceStub
) -> None:
    line = bridge_pb2.LineConditions(packet_loss=0.3, gain_db=-6)
    _, got, recorded = await _session(
        bridge, stub, {"codec": "mulaw8k", "gain_db": 6}, end_at=200, line=line
    )
    assert recorded is not None
    assert (recorded["codec"], recorded["packet_loss"], recorded["gain_db"]) == ("mulaw8k", 0.3, -6)
    # While the caller speaks (steps 40..200, after the jitter buffer): 30 % +- 12 % zeroed.
    assert 0.18 <= _zeroed_packets(got)[45:155].mean() <= 0.42
    assert _share_above(got, 4000) < 0.01


async def test_clipping_and_gain(
    bridge: BridgeServer, stub: bridge_pb2_grpc.BridgeServiceStub
) -> None:
    _, got, _ = await _session(bridge, stub, {"gain_db": 12, "clipping": -12}, end_at=200)
    level = 10 ** (-12 / 20) * 32767
    assert np.abs(got).max() <= level + 1
    assert np.mean(np.abs(got) >= level - 1) > 0.3  # most loud samples sit at the clip level


async def test_the_line_holds_on_the_real_clock(
    bridge: BridgeServer, stub: bridge_pb2_grpc.BridgeServiceStub
) -> None:
    async def quiet(bot: TestBot) -> None:
        """Silent: what the agent hears is the line's noise, with its lost packets."""

    doc = scenario(user={"line": {"packet_loss": 0.5, "white_noise_db": -30}})
    *_, run_id = await run_pair(bridge, stub, quiet, quiet, [doc], inactivity_timeout_s=0.6)
    with RecordingReader(bridge.db_path) as reader:
        (s,) = reader.sessions(run_id)
        got = reader.read_channel(s.session_id, Channel.TO_AGENT).samples
        recorded = reader.session_lines(run_id)[s.session_id]
    zeroed = _zeroed_packets(got)
    assert len(zeroed) >= 20 and 0.2 < zeroed.mean() < 0.8
    assert recorded["packets"] >= 20 and recorded["lost"] > 0


@pytest.mark.parametrize(
    ("options", "problem"),
    [
        ({"line": bridge_pb2.LineConditions(packet_loss=1.5)}, "options.line.packet_loss"),
        ({"line": bridge_pb2.LineConditions(codec="gsm")}, "options.line.codec"),
        (
            {
                "line": bridge_pb2.LineConditions(packet_loss=0.1),
                "modality": common_pb2.MODALITY_TEXT,
            },
            "a text session has no audio",
        ),
    ],
)
async def test_bad_run_lines_are_refused(
    stub: bridge_pb2_grpc.BridgeServiceStub, options: dict[str, Any], problem: str
) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await start_run(stub, [scenario()], **options)
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert problem in (caught.value.details() or "")


async def test_a_scenario_line_in_a_text_session_is_recorded_as_not_applicable(
    bridge: BridgeServer, stub: bridge_pb2_grpc.BridgeServiceStub
) -> None:
    doc = scenario(user={"line": {"codec": "mulaw8k"}})
    run_id = await start_run(stub, [doc], modality=common_pb2.MODALITY_TEXT, clock=VIRTUAL)
    user = StepBot(bridge.address, USER, run_id, turns={1: "hello"}, end_at=5)
    agent = StepBot(bridge.address, AGENT, run_id, turns={0: "hi"})
    await asyncio.gather(user.run(), agent.run(), watch(stub, run_id, 30))
    with RecordingReader(bridge.db_path) as reader:
        (line,) = reader.session_lines(run_id).values()
    assert line["codec"] == "mulaw8k"
    assert "text session" in line["not_applicable"]


async def test_a_run_line_impossible_with_a_scenarios_burst_is_refused(
    stub: bridge_pb2_grpc.BridgeServiceStub,
) -> None:
    doc = scenario(user={"line": {"packet_loss": 0.1, "packet_loss_burst": 1}})
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await start_run(stub, [doc], line=bridge_pb2.LineConditions(packet_loss=0.9))
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "options.line with scenario 's1': packet_loss_burst" in (caught.value.details() or "")
