"""The agent's side of a phone line: its audio plays in real time, marks and clear.

Why a queue here and not in the session: a Twilio agent sends speech faster
than real time (a TTS burst), and Twilio's own semantics depend on what has
*played*: ``clear`` drops only audio not yet played (barge-in), and a
``mark`` is echoed when the audio queued before it has played. So the
connector keeps the agent's audio in this queue and releases it frame by
frame on its own real-time clock, silence when the queue is empty — the
session then records and relays exactly what a caller would have heard.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass


@dataclass(frozen=True)
class Frame:
    """One frame of played line audio and the marks its playing reached."""

    pcm: bytes
    marks: list[str]


class Playout:
    def __init__(self, frame_samples: int) -> None:
        self.frame_samples = frame_samples
        self._items: deque[bytes | str] = deque()  # PCM16 pieces and mark names
        self.queued_samples = 0

    def push(self, pcm: bytes) -> None:
        if pcm:
            self._items.append(pcm)
            self.queued_samples += len(pcm) // 2

    def mark(self, name: str) -> None:
        self._items.append(name)

    def clear(self) -> tuple[int, list[str]]:
        """Drop unplayed audio; return the dropped sample count and the pending marks."""
        dropped = self.queued_samples
        marks = [item for item in self._items if isinstance(item, str)]
        self._items.clear()
        self.queued_samples = 0
        return dropped, marks

    def pop(self) -> Frame:
        """The next frame of the line (padded with silence) and the marks it passed."""
        need = self.frame_samples * 2
        out = bytearray()
        marks: list[str] = []
        while self._items and (len(out) < need or isinstance(self._items[0], str)):
            item = self._items.popleft()
            if isinstance(item, str):
                marks.append(item)
                continue
            take = item[: need - len(out)]
            out += take
            if len(take) < len(item):
                self._items.appendleft(item[len(take) :])
        self.queued_samples -= len(out) // 2
        out += bytes(need - len(out))
        return Frame(bytes(out), marks)
