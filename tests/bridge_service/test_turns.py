"""Turn counting from received audio, for continuous and for gappy senders."""

from __future__ import annotations

import numpy as np

from bridge_service.turns import TalkSpurtCounter
from tests.conftest import tone

RATE = 16000
FRAME = 320  # 20 ms
FRAME_NS = 20_000_000


def _frames(samples: np.ndarray) -> list[bytes]:
    return [samples[i : i + FRAME].astype("<i2").tobytes() for i in range(0, len(samples), FRAME)]


def _feed(counter: TalkSpurtCounter, chunks: list[bytes], t_ns: int) -> int:
    for chunk in chunks:
        counter.add(chunk, t_ns)
        t_ns += FRAME_NS
    return t_ns


def test_continuous_sender_with_silence_between_turns() -> None:
    counter = TalkSpurtCounter(RATE)
    speech, quiet = _frames(tone(1.0)), _frames(np.zeros(RATE, dtype=np.int16))
    t = _feed(counter, speech + quiet + speech, 0)
    assert counter.turns == 2 and t > 0


def test_short_pause_inside_a_turn_is_one_turn() -> None:
    counter = TalkSpurtCounter(RATE)
    speech, pause = _frames(tone(0.5)), _frames(np.zeros(RATE // 5, dtype=np.int16))
    _feed(counter, speech + pause + speech, 0)
    assert counter.turns == 1


def test_sender_that_stops_sending_between_turns() -> None:
    """No audio at all for 2 s between two utterances: two turns, not one."""
    counter = TalkSpurtCounter(RATE)
    speech = _frames(tone(1.0))
    t = _feed(counter, speech, 0)
    _feed(counter, speech, t + 2 * 10**9)
    assert counter.turns == 2


def test_burst_sender_is_not_split_by_arrival_gaps() -> None:
    """2 s of speech sent in 100 ms, then the rest 1.9 s later: still one turn."""
    counter = TalkSpurtCounter(RATE)
    speech = _frames(tone(2.0))
    for chunk in speech:
        counter.add(chunk, 0)
    for chunk in speech:
        counter.add(chunk, 19 * 10**8)
    assert counter.turns == 1
