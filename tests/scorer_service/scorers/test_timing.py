"""Timing metrics from synthetic stereo recordings with known speech spans.

The recording is written through the store (tests/factories.py) and read back
by the scorer, so placement on the bridge clock, the detector and the metric
definitions are all exercised. Expected figures are computed by hand from the
spans below; every time figure must be exact to one detector frame.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.factories import SessionSpec, Turn, scenario, write_run
from vae.recordings.models import Verdict
from vae.scorer_service.config import ConfigError, ScoringConfig, TimingSettings
from vae.scorer_service.scoring.rescore import rescore
from vae.scorer_service.timing.metrics import merge, nearest_rank, turn_taking

FRAME = 0.02
USER = [(2.7, 4.0), (6.0, 7.5), (9.5, 11.0), (13.5, 14.0)]
AGENT = [(0.5, 2.0), (4.8, 7.0), (8.1, 9.0), (10.2, 12.0), (13.0, 16.0)]

EXPECTED = {
    "timing.time_to_first_agent_audio_s": 0.5,
    "timing.response_latency_mean_s": (0.8 + 0.6 + 2.0) / 3,
    "timing.response_latency_p50_s": 0.8,
    "timing.response_latency_p90_s": 2.0,
    "timing.response_latency_p95_s": 2.0,
    "timing.yield_latency_mean_s": (1.0 + 2.5) / 2,
    "timing.overlap_s": 1.0 + 0.8 + 0.5,
    "timing.longest_dead_air_s": 1.0,
    "timing.mutual_silence_s": 17.0 - 11.9,
}
COUNTS = {
    "timing.response_rate": 3 / 4,
    "timing.user_barge_ins": 2,
    "timing.yield_rate": 0.5,
    "timing.agent_interruptions": 1,
    "timing.agent_interruption_rate": 1 / 4,
}


def spec(shift: float) -> SessionSpec:
    turns = [Turn("user", a + shift, b + shift) for a, b in USER]
    turns += [Turn("agent", a + shift, b + shift) for a, b in AGENT]
    return SessionSpec(
        "timed",
        turns=sorted(turns, key=lambda t: t.start_s),
        duration_s=17.0,
        metrics=[
            (5.0, "agent", "llm_ttfb", 0.3, "s", "llm"),
            (8.5, "agent", "llm_ttfb", 0.5, "s", "llm"),
        ],
    )


@pytest.mark.parametrize("shift", [0.0, 0.013], ids=["frame-aligned", "off-frame"])
async def test_timing_exact_to_one_frame(db_path: Path, shift: float) -> None:
    await write_run(db_path, [scenario("timed")], [spec(shift)])
    result = await rescore(db_path, "2024", ScoringConfig(scorers=["timing"]))
    [outcome] = result.sessions
    got = {s.signal: s for s in outcome.scores}
    for name, expected in EXPECTED.items():
        if name == "timing.time_to_first_agent_audio_s":
            expected += shift
        assert got[name].value == pytest.approx(expected, abs=FRAME + 1e-9), name
    for name, expected in COUNTS.items():
        assert got[name].value == pytest.approx(expected), name
    p50 = got["timing.response_latency_p50_s"]
    assert p50.verdict is Verdict.NOT_APPLICABLE
    assert p50.detail["metric_version"] and p50.detail["detector"] == "energy"
    assert p50.detail["detector_options"]["frame_ms"] == 20.0
    assert [round(x["latency_s"], 1) for x in p50.detail["latencies"]] == [0.8, 0.6, 2.0]
    assert got["timing.yield_rate"].detail["barge_ins"][1]["yielded"] is False
    # bot-reported timings sit beside the bridge-measured ones
    ttfb = got["bot.agent.llm_ttfb"]
    assert ttfb.value == pytest.approx(0.4)
    assert ttfb.detail["count"] == 2 and ttfb.detail["source"] == "bot-reported"


async def test_detector_settings_change_the_figures(db_path: Path) -> None:
    await write_run(db_path, [scenario("timed")], [spec(0.0)])
    deaf = TimingSettings(detector_options={"threshold_dbfs": 0.0})
    result = await rescore(db_path, "2024", ScoringConfig(scorers=["timing"], timing=deaf))
    got = {s.signal: s for s in result.sessions[0].scores}
    assert got["timing.response_latency_p50_s"].value is None
    assert got["timing.overlap_s"].detail["detector_options"]["threshold_dbfs"] == 0.0


async def test_unknown_detector_is_a_config_error(db_path: Path) -> None:
    await write_run(db_path, [scenario("timed")], [spec(0.0)])
    bad = ScoringConfig(scorers=["timing"], timing=TimingSettings(detector="silero-xl"))
    with pytest.raises(ConfigError, match="silero-xl"):
        await rescore(db_path, "2024", bad)


def test_merge_joins_short_gaps_only() -> None:
    assert merge([(0.0, 1.0), (1.4, 2.0), (3.0, 4.0)], 0.5) == [(0.0, 2.0), (3.0, 4.0)]


def test_no_response_when_the_user_speaks_again_first() -> None:
    tt = turn_taking([(0.0, 1.0), (1.5, 2.0)], [(3.0, 4.0)], 5.0)
    assert tt.no_responses == 1
    assert [x["latency_s"] for x in tt.latencies] == [1.0]


def test_nearest_rank() -> None:
    assert nearest_rank([5.0, 1.0, 3.0, 2.0, 4.0], 50) == 3.0
    assert nearest_rank([1.0], 95) == 1.0
    assert nearest_rank([], 50) is None
