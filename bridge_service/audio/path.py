"""One direction of audio through the bridge: resample, buffer, frame, add noise, the line.

A :class:`Direction` takes the sender's chunks as they arrive and hands out one
frame per tick of the open-mic clock:

- **Resampling** is streaming and stateful (one soxr ``ResampleStream`` per
  direction, HQ by default): never per-chunk interpolation, which clicks at
  chunk edges. Equal rates skip it, so audio passes bit-exact. The resampler's
  own delay is reported (``resampler_delay_s``) and recorded with the session
  so latency metrics can subtract it. It runs in float32 and rounds back to
  PCM16 itself: soxr's own int16 output adds a dither whose noise depends on
  how many streams the process opened before, so the same audio would not
  come out the same — and two runs on the virtual clock could not be
  identical sample for sample.
- **Jitter buffer**: delivery of a spurt starts once ``jitter_buffer_ms`` of
  audio is buffered, then drains by sample count (not arrival time), so bursty
  senders (40 ms chunks with 32–48 ms gaps) play without gaps. When the buffer
  runs dry the frame is completed with silence and the buffer refills first;
  a tail shorter than the buffer plays once the sender has been quiet as long.
- **Open mic**: a tick with nothing buffered yields silence.
- **Bounded**: audio beyond ``max_buffer_ms`` (a sender faster than real time)
  is dropped and counted; the caller records the drop. The sender's audio is
  still recorded in full on its own channel.
- **Keypad tones and the line** (user -> agent only): DTMF tones the bridge
  generates for the caller's key presses (``bridge_service/session/dtmf_out.py``) are
  mixed into the frames before the noise; the phone line
  (``bridge_service/audio/line.py``) is applied last, so the agent hears tones and
  voice through the same codec and losses.
"""

from __future__ import annotations

import numpy as np
import soxr

from vae.bridge_service.audio.line import LineTransform
from vae.bridge_service.audio.noise import NoiseSource


class Direction:
    def __init__(
        self,
        in_rate: int,
        out_rate: int,
        *,
        frame_ms: int,
        jitter_buffer_ms: int,
        max_buffer_ms: int,
        quality: str = "HQ",
        noise: NoiseSource | None = None,
        line: LineTransform | None = None,
    ) -> None:
        self.in_rate = in_rate
        self.out_rate = out_rate
        self.frame_samples = out_rate * frame_ms // 1000
        self._frame_bytes = self.frame_samples * 2
        self._silence = bytes(self._frame_bytes)
        self._start_bytes = max(2, out_rate * jitter_buffer_ms // 1000 * 2)
        self._max_bytes = max(
            self._start_bytes + self._frame_bytes, out_rate * max_buffer_ms // 500
        )
        self._resampler = (
            None
            if in_rate == out_rate
            else soxr.ResampleStream(in_rate, out_rate, 1, dtype="float32", quality=quality)
        )
        self._delay_s = _resampler_delay_s(in_rate, out_rate, quality)
        self._flushed = False
        self._buffer = bytearray()
        self._playing = False
        # A short tail that never fills the jitter buffer still plays once the
        # sender has been quiet for the jitter buffer's length.
        self._idle_ticks = 0
        self._flush_ticks = max(1, -(-jitter_buffer_ms // frame_ms))
        self.noise = noise
        self.line = line
        #: Bridge-made audio (keypad tones) still to mix in, float64 in int16 units.
        self._tones = np.zeros(0, dtype=np.float64)
        #: Output samples dropped because the buffer was full.
        self.dropped_samples = 0
        #: Times the buffer ran dry while playing (includes the end of each spurt).
        self.underruns = 0

    @property
    def resampler_delay_s(self) -> float:
        """Audio the resampler holds back once streaming, in seconds (0 without one)."""
        return self._delay_s

    def flush(self) -> None:
        """Release the resampler's held-back tail (the last words at the end of a call).

        The stream cannot continue after this; later audio is still recorded by the
        caller but no longer delivered.
        """
        if self._resampler is not None and not self._flushed:
            tail = self._resampler.resample_chunk(np.zeros(0, dtype=np.float32), last=True)
            self._buffer += _pcm16(tail)
            if len(self._buffer) and not self._playing:
                self._playing = True
        self._flushed = True

    @property
    def buffered_samples(self) -> int:
        return len(self._buffer) // 2

    def push(self, pcm: bytes) -> int:
        """Buffer one chunk from the sender; return the output samples dropped."""
        if self._flushed:
            return 0
        if self._resampler is not None:
            samples = np.frombuffer(pcm, dtype="<i2").astype(np.float32)
            pcm = _pcm16(self._resampler.resample_chunk(samples))
        room = self._max_bytes - len(self._buffer)
        dropped = 0
        if len(pcm) > room:
            keep = max(0, room - room % 2)
            dropped = (len(pcm) - keep) // 2
            pcm = pcm[:keep]
            self.dropped_samples += dropped
        self._buffer += pcm
        self._idle_ticks = 0
        if not self._playing and len(self._buffer) >= self._start_bytes:
            self._playing = True
        return dropped

    def pop_frame(self) -> tuple[bytes, bool]:
        """The next open-mic frame and whether it carries any of the sender's audio."""
        n = self._frame_bytes
        self._idle_ticks += 1
        if not self._playing and self._buffer and self._idle_ticks >= self._flush_ticks:
            self._playing = True
        if not self._playing:
            frame, voiced = self._silence, False
        elif len(self._buffer) >= n:
            # One copy out of the buffer (a slice of a bytearray would be two);
            # deleting from the front of a bytearray is O(1) in CPython.
            with memoryview(self._buffer) as view:
                frame = view[:n].tobytes()
            del self._buffer[:n]
            voiced = True
        else:
            frame = bytes(self._buffer) + self._silence[len(self._buffer) :]
            voiced = bool(self._buffer)
            self._buffer.clear()
            self._playing = False
            self.underruns += 1
        if len(self._tones):
            frame = self._mix_tones(frame)
        if self.noise is not None:
            frame = self.noise.add_to(frame)
        if self.line is not None:
            frame = self.line.apply(frame)
        return frame, voiced

    def add_tones(self, samples: np.ndarray) -> None:
        """Queue bridge-made audio at the output rate (mixed into the next frames)."""
        self._tones = np.concatenate([self._tones, samples.astype(np.float64)])

    def _mix_tones(self, frame: bytes) -> bytes:
        samples = np.frombuffer(frame, dtype="<i2").astype(np.float64)
        n = min(len(samples), len(self._tones))
        samples[:n] += self._tones[:n]
        self._tones = self._tones[n:]
        return np.clip(np.rint(samples), -32768, 32767).astype("<i2").tobytes()

    def pop_frames(self, count: int) -> bytes:
        """``count`` consecutive frames as one piece (several frames per message)."""
        if count == 1:
            return self.pop_frame()[0]
        return b"".join([self.pop_frame()[0] for _ in range(count)])

    def drained(self) -> bool:
        return not self._buffer and not len(self._tones)


def _pcm16(samples: np.ndarray) -> bytes:
    """Float samples on the PCM16 scale, rounded (half to even) and clipped: no dither."""
    np.rint(samples, out=samples)
    np.clip(samples, -32768, 32767, out=samples)
    return samples.astype("<i2").tobytes()


def _resampler_delay_s(in_rate: int, out_rate: int, quality: str) -> float:
    """The steady-state delay of a soxr stream, measured once on a probe stream."""
    if in_rate == out_rate:
        return 0.0
    probe = soxr.ResampleStream(in_rate, out_rate, 1, dtype="float32", quality=quality)
    probe.resample_chunk(np.zeros(in_rate // 10, dtype=np.float32))
    return float(probe.delay()) / out_rate
