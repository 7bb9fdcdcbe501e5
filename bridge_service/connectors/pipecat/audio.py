"""A pipecat bot's audio, as the bridge wants it: PCM16 mono at one rate, small chunks.

pipecat audio frames declare their own ``sample_rate`` and ``num_channels``
(a TTS at 24 kHz, another at 16 kHz, each frame may differ), and the
established runner ignored them. Here every frame is honoured: downmixed to
mono, resampled to the endpoint's ``send_rate`` with a streaming soxr
resampler kept per source rate (stateful, so chunk edges never click), and
split into chunks of at most ``max_chunk_ms`` numbered on the endpoint's own
sample clock. At the end of a bot turn :meth:`BotAudioIn.drain` releases what
the resamplers still hold back, so the turn's last milliseconds are not
delayed until the next turn.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterator

import numpy as np
import soxr

from vae.bridge_service.connectors.base import BotAudio


class BotAudioIn:
    def __init__(self, send_rate: int, max_chunk_ms: int) -> None:
        self.send_rate = send_rate
        self._step = send_rate * max_chunk_ms // 1000
        self._seq = itertools.count()
        self._resamplers: dict[int, soxr.ResampleStream] = {}
        #: Samples handed out so far: the next chunk's offset on our sample clock.
        self.offset = 0

    def frame(self, pcm: bytes, sample_rate: int, num_channels: int) -> Iterator[BotAudio]:
        """Chunks for one received frame; ValueError for a frame that cannot be audio."""
        channels = num_channels or 1
        rate = sample_rate or self.send_rate
        if len(pcm) % (2 * channels) or not 8000 <= rate <= 192000:
            raise ValueError(f"audio frame of {len(pcm)} bytes, {channels} channels at {rate} Hz")
        samples = np.frombuffer(pcm, dtype="<i2").reshape(-1, channels)
        mono = samples[:, 0] if channels == 1 else samples.mean(axis=1).astype(np.int16)
        if rate != self.send_rate:
            stream = self._resamplers.get(rate)
            if stream is None:
                stream = soxr.ResampleStream(rate, self.send_rate, 1, dtype="int16", quality="HQ")
                self._resamplers[rate] = stream
            mono = stream.resample_chunk(mono)
        return self._chunks(mono)

    def drain(self) -> Iterator[BotAudio]:
        """Release what the resamplers hold back (call at the end of the bot's speech)."""
        for rate, stream in list(self._resamplers.items()):
            yield from self._chunks(stream.resample_chunk(np.zeros(0, np.int16), last=True))
            del self._resamplers[rate]  # a flushed stream cannot continue: start afresh

    def _chunks(self, mono: np.ndarray) -> Iterator[BotAudio]:
        now = time.time_ns()
        for start in range(0, len(mono), self._step):
            piece = np.ascontiguousarray(mono[start : start + self._step], dtype="<i2").tobytes()
            yield BotAudio(next(self._seq), self.offset, piece, now)
            self.offset += len(piece) // 2
