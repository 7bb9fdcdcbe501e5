"""The turn-gated player on synthetic lines: each cue starts a turn at the exact sample."""

from __future__ import annotations

import numpy as np

from tests.conftest import tone
from vae.bridge_service.replay.player import FINISH_AFTER_S, ReplayPlayer
from vae.recordings.read.replay_script import Gate, ReplayScript, ReplayTurn

RATE = 16000
FRAME = 256
LEVEL = 10 ** (-45 / 20) * 32768


def script(*turns: tuple[Gate, float, bool], reply: bool = True) -> ReplayScript:
    items = [
        ReplayTurn(i, tone(0.4, RATE, 300.0 + 50 * i), gate, delay, after_prev, 0.0, 0.4)
        for i, (gate, delay, after_prev) in enumerate(turns)
    ]
    return ReplayScript("run", "sess", "s", RATE, items, reply)


def line(seconds: float, *spans: tuple[float, float]) -> np.ndarray:
    """The agent as delivered: tones over ``spans`` (seconds), silence elsewhere."""
    out = np.zeros(int(seconds * RATE), dtype=np.int16)
    for a, b in spans:
        i, j = int(a * RATE), int(b * RATE)
        out[i:j] = tone((j - i) / RATE, RATE, 220.0)[: j - i]
    return out


def play(player: ReplayPlayer, agent: np.ndarray) -> tuple[np.ndarray, list[dict]]:  # type: ignore[type-arg]
    out, events = [], []
    for k in range(0, len(agent) - FRAME + 1, FRAME):
        pcm, happened = player.on_frame(agent[k : k + FRAME].tobytes())
        out.append(np.frombuffer(pcm, dtype="<i2"))
        events.extend(happened)
    return np.concatenate(out), events


def loud(x: np.ndarray) -> np.ndarray:
    return np.flatnonzero(np.abs(x.astype(np.int32)) >= LEVEL)


def test_after_agent_starts_the_recorded_gap_after_the_end_of_speech() -> None:
    s = script((Gate.AFTER_AGENT, 0.7, False))
    agent = line(4.0, (0.2, 1.0))
    out, events = play(ReplayPlayer(s, RATE, 0.5), agent)
    end = int(loud(agent)[-1]) + 1
    start = end + round(0.7 * RATE)
    assert not out[:start].any()
    assert np.array_equal(out[start : start + len(s.turns[0].samples)], s.turns[0].samples)
    started = [e for e in events if e["event"] == "turn_started"]
    assert started[0]["start_offset"] == start and started[0]["delay_s"] == 0.7


def test_the_gate_silence_is_the_floor() -> None:
    s = script((Gate.AFTER_AGENT, 0.2, False))
    agent = line(3.0, (0.2, 1.0))
    out, _ = play(ReplayPlayer(s, RATE, 0.5), agent)
    assert int(loud(out)[0]) >= int(loud(agent)[-1]) + 1 + round(0.5 * RATE) - 1


def test_a_pause_shorter_than_the_gate_does_not_end_the_agent_turn() -> None:
    s = script((Gate.AFTER_AGENT, 0.6, False))
    agent = line(5.0, (0.2, 1.0), (1.3, 2.0))  # 0.3 s pause inside the agent's turn
    out, _ = play(ReplayPlayer(s, RATE, 0.5), agent)
    assert int(loud(out)[0]) >= 2.0 * RATE + 0.6 * RATE - FRAME


def test_barge_in_at_the_recorded_offset_into_the_agent_turn() -> None:
    s = script((Gate.BARGE_IN, 1.0, False))
    agent = line(4.0, (0.5, 3.5))
    out, events = play(ReplayPlayer(s, RATE, 0.5), agent)
    onset = int(loud(agent)[0])
    start = next(e for e in events if e["event"] == "turn_started")["start_offset"]
    assert start == onset + RATE
    assert np.array_equal(out[start : start + len(s.turns[0].samples)], s.turns[0].samples)


def test_an_agent_that_never_speaks_is_waited_for_without_end() -> None:
    s = script((Gate.AFTER_AGENT, 0.5, False))
    out, events = play(ReplayPlayer(s, RATE, 0.5), line(3.0))
    assert not out.any() and events == []


def test_a_click_is_not_an_agent_turn() -> None:
    s = script((Gate.AFTER_AGENT, 0.5, False))
    out, _ = play(ReplayPlayer(s, RATE, 0.5), line(3.0, (0.5, 0.53)))
    assert not out.any()


def test_after_user_and_the_end_after_the_agents_reply() -> None:
    s = script((Gate.AFTER_USER, 0.3, False), (Gate.AFTER_AGENT, 0.6, True))
    agent = line(7.0, (1.2, 2.0), (3.6, 4.2))
    player = ReplayPlayer(s, RATE, 0.5)
    _, events = play(player, agent)
    kinds = [e["event"] for e in events]
    assert kinds == ["turn_started", "turn_ended", "turn_started", "turn_ended", "finished"]
    assert events[0]["start_offset"] == round(0.3 * RATE)  # from the start of the call
    # The reply ended at 4.2 s; FINISH_AFTER_S of quiet later the replay is over.
    end_of_reply = int(loud(agent)[-1]) + 1
    assert player.finished
    assert 0 <= events[-1]["at"] - (end_of_reply + FINISH_AFTER_S * RATE) < FRAME


def test_without_a_recorded_reply_the_replay_ends_after_the_last_turn() -> None:
    s = script((Gate.AFTER_USER, 0.2, False), reply=False)
    player = ReplayPlayer(s, RATE, 0.5)
    _, events = play(player, line(3.0))
    assert [e["event"] for e in events][-1] == "finished"


def test_rates_differ_between_the_line_and_the_caller() -> None:
    turn = ReplayTurn(0, tone(0.3, 8000), Gate.AFTER_AGENT, 0.5, False, 0.0, 0.3)
    s = ReplayScript("run", "sess", "s", 8000, [turn], True)
    agent = line(3.0, (0.2, 1.0))
    out, events = play(ReplayPlayer(s, RATE, 0.5), agent)
    assert len(out) == len(agent) // FRAME * FRAME // 2
    start = events[0]["start_offset"]
    assert start == (int(loud(agent)[-1]) + 1 + RATE // 2) // 2
    assert np.array_equal(out[start : start + len(turn.samples)], turn.samples)
