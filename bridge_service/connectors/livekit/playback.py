"""The agent's voice as the console's speaker plays it: resampled, queued, real time.

Why a queue: a LiveKit agent sends its TTS faster than real time and waits,
for each segment, until the console says it has played
(``audio_playback_flush`` answered by ``audio_playback_finished``); a
barge-in drops what has not played (``audio_playback_clear``). So vae plays
the agent's 48 kHz ``audio_output`` on its own 20 ms clock — resampled to
``send_rate`` by the pipecat connector's ``BotAudioIn``, queued in the
Twilio connector's ``Playout`` — and the session records exactly what a
listener would have heard, when they would have heard it.
"""

from __future__ import annotations

import time
from typing import Any

from vae.bridge_service.connectors.base import BotAudio, BotEvent, BotProtocolError
from vae.bridge_service.connectors.pipecat.audio import BotAudioIn
from vae.bridge_service.connectors.twilio.playout import Playout
from vae.recordings.models import EventKind

FRAME_MS = 20
_FLUSH = "flush"


class AgentPlayback:
    def __init__(self, send_rate: int, max_queue_s: float) -> None:
        self.send_rate = send_rate
        self.frame = send_rate * FRAME_MS // 1000
        self._in = BotAudioIn(send_rate, FRAME_MS)
        self._queue = Playout(self.frame)
        self._max_queue = int(max_queue_s * send_rate)
        #: Samples played so far (the agent channel's offset).
        self.played = 0

    def audio(self, frame: Any) -> list[BotEvent]:
        """Queue one ``audio_output`` frame; an ``audio_dropped`` event if it is far ahead."""
        try:
            chunks = list(self._in.frame(frame.data, frame.sample_rate, frame.num_channels))
        except ValueError as exc:
            raise BotProtocolError("console.audio_output", str(exc)) from exc
        for chunk in chunks:
            samples = len(chunk.pcm) // 2
            if self._queue.queued_samples + samples > self._max_queue:
                payload = {"reason": "agent_faster_than_real_time", "samples": samples}
                return [BotEvent(EventKind.AUDIO_DROPPED, time.time_ns(), payload)]
            self._queue.push(chunk.pcm)
        return []

    def flush(self) -> None:
        """The end of a segment: its last samples, then a mark answered once they played."""
        for chunk in self._in.drain():
            self._queue.push(chunk.pcm)
        self._queue.mark(_FLUSH)

    def clear(self) -> BotEvent:
        """A barge-in: drop what has not played (its marks are not answered)."""
        list(self._in.drain())
        dropped, _ = self._queue.clear()
        ms = dropped * 1000 / self.send_rate
        payload = {
            "level": "info",
            "message": f"playback cleared: {ms:.0f} ms of agent audio not played",
        }
        return BotEvent(EventKind.LOG, time.time_ns(), payload)

    def play(self, n: int) -> tuple[BotAudio, int]:
        """Frame ``n`` of the line (silence when nothing is queued), and the flushes it finished."""
        frame = self._queue.pop()
        self.played += self.frame
        return BotAudio(n, n * self.frame, frame.pcm, time.time_ns()), len(frame.marks)
