"""The audio path: the same samples whatever the frame length or frames per message."""

from __future__ import annotations

import numpy as np

from vae.bridge_service.audio.path import Direction

RATE = 16000


def _played(frame_ms: int, per_message: int, chunks: list[bytes]) -> bytes:
    d = Direction(RATE, RATE, frame_ms=frame_ms, jitter_buffer_ms=80, max_buffer_ms=2000)
    for chunk in chunks:
        d.push(chunk)
    d.flush()
    out = bytearray()
    while not d.drained():
        out += d.pop_frames(per_message)
    return bytes(out)


def test_every_frame_length_plays_the_same_samples() -> None:
    rng = np.random.default_rng(7)
    audio = rng.integers(1, 20000, RATE * 2, dtype=np.int16)  # never zero
    chunks = [audio[i : i + 640].tobytes() for i in range(0, len(audio), 640)]
    reference = _played(16, 1, chunks)
    assert reference[: len(audio) * 2] == audio.tobytes()
    for frame_ms, per_message in [(10, 1), (20, 1), (32, 1), (40, 1), (60, 1), (20, 3), (16, 4)]:
        played = _played(frame_ms, per_message, chunks)
        assert len(played) % (RATE * frame_ms // 1000 * per_message * 2) == 0
        trimmed = np.frombuffer(played, dtype="<i2")
        assert np.array_equal(trimmed[: len(audio)], audio), (frame_ms, per_message)
        assert not trimmed[len(audio) :].any()  # then only the padding of the last frame


def test_a_frame_is_a_fresh_copy_not_a_view_of_the_buffer() -> None:
    d = Direction(RATE, RATE, frame_ms=10, jitter_buffer_ms=0, max_buffer_ms=2000)
    d.push(bytes(range(256)) * 5)
    frame, voiced = d.pop_frame()
    assert voiced and isinstance(frame, bytes) and len(frame) == 320
    d.push(b"\x00" * 640)  # the buffer moves on; the frame handed out stays as it was
    assert frame == (bytes(range(256)) * 5)[:320]
