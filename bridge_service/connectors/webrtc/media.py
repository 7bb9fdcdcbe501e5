"""Audio as WebRTC tracks: the peer's frames out, the bot's frames in.

Out: the bridge hands the endpoint open-mic frames (16 ms at
``receive_rate``); :class:`PeerTrack` re-cuts them into the 20 ms frames
WebRTC sends and aiortc encodes them (Opus). In: aiortc decodes the bot's
track to PCM frames (48 kHz, often stereo); :func:`pcm_of` reads one, and the
pipecat connector's ``BotAudioIn`` downmixes and resamples it to
``send_rate`` as for a websocket bot.
"""

from __future__ import annotations

import asyncio
import fractions
from typing import Any

import av
from aiortc import MediaStreamTrack

FRAME_MS = 20


class PeerTrack(MediaStreamTrack):
    """The peer's voice as an audio track; frames wait in a bounded queue."""

    kind = "audio"

    def __init__(self, rate: int, max_frames: int = 50) -> None:
        super().__init__()
        self.rate = rate
        self._step = rate * FRAME_MS // 1000 * 2
        self._queue: asyncio.Queue[bytes] = asyncio.Queue(max_frames)
        self._pending = b""
        self._pts = 0

    def push(self, pcm: bytes) -> bool:
        """Queue PCM16 mono; False (dropped) when the encoder is far behind."""
        self._pending += pcm
        while len(self._pending) >= self._step:
            piece, self._pending = self._pending[: self._step], self._pending[self._step :]
            try:
                self._queue.put_nowait(piece)
            except asyncio.QueueFull:
                return False
        return True

    async def recv(self) -> Any:
        piece = await self._queue.get()
        samples = len(piece) // 2
        frame = av.AudioFrame(format="s16", layout="mono", samples=samples)
        frame.planes[0].update(piece)
        frame.sample_rate = self.rate
        frame.pts = self._pts
        frame.time_base = fractions.Fraction(1, self.rate)
        self._pts += samples
        return frame


def pcm_of(frame: Any) -> tuple[bytes, int, int]:
    """PCM16 bytes, sample rate and channel count of a decoded audio frame."""
    if frame.format.name != "s16":
        raise ValueError(f"audio frame in {frame.format.name}, expected s16")
    channels = len(frame.layout.channels)
    return bytes(frame.to_ndarray().tobytes()), int(frame.sample_rate), channels
