"""Audio as the store keeps it: ~1 s segments with a frame-timing index.

Writing: :class:`SegmentBuilder` packs incoming frames of one channel into
segments (contiguous on the sender's sample clock), closing one when it holds
``segment_s`` of audio, when the sender's clock jumps, or when its first frame
is ``max_age_s`` old (so a quiet channel is still durable within a second).

Reading: :func:`place_segments` lays segments on the bridge's clock. A segment
that continues the previous one on the sender's clock follows it sample for
sample (align by sample count, not arrival, so arrival jitter never clicks);
a segment after a jump is anchored at its arrival time.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from vae.recordings.models import Channel, SegmentRecord

FRAME_DTYPE = np.dtype([("sequence", "<i8"), ("samples", "<i8"), ("arrival_ns", "<i8")])


def pack_frames(rows: Sequence[tuple[int, int, int]]) -> bytes:
    return np.array(rows, dtype=FRAME_DTYPE).tobytes()


def unpack_frames(blob: bytes) -> np.ndarray:
    return np.frombuffer(blob, dtype=FRAME_DTYPE)


class SegmentBuilder:
    """Accumulates one channel's frames into :class:`SegmentRecord` s."""

    def __init__(
        self,
        session_id: str,
        channel: Channel,
        sample_rate: int,
        *,
        segment_s: float = 1.0,
        max_age_s: float = 0.5,
    ) -> None:
        self.session_id = session_id
        self.channel = channel
        self.sample_rate = sample_rate
        self._segment_samples = max(1, int(sample_rate * segment_s))
        self._max_age_ns = int(max_age_s * 1e9)
        self._seq = 0
        self._pcm = bytearray()
        self._frames: list[tuple[int, int, int]] = []
        self._start_offset = 0
        self._first_arrival_ns = 0
        self._next_offset: int | None = None

    def add(
        self, pcm: bytes, sample_offset: int, sequence: int, arrival_ns: int
    ) -> list[SegmentRecord]:
        """Add one frame; return the segments it closed (usually none)."""
        closed: list[SegmentRecord] = []
        if self._frames and sample_offset != self._next_offset:
            closed.extend(self._close())
        if not self._frames:
            self._start_offset = sample_offset
            self._first_arrival_ns = arrival_ns
        samples = len(pcm) // 2
        self._pcm += pcm
        self._frames.append((sequence, samples, arrival_ns))
        self._next_offset = sample_offset + samples
        if len(self._pcm) // 2 >= self._segment_samples:
            closed.extend(self._close())
        return closed

    def poll(self, now_ns: int) -> list[SegmentRecord]:
        """Close the open segment if its first frame arrived ``max_age_s`` ago."""
        if self._frames and now_ns - self._first_arrival_ns >= self._max_age_ns:
            return self._close()
        return []

    def close(self) -> list[SegmentRecord]:
        return self._close()

    def _close(self) -> list[SegmentRecord]:
        if not self._frames:
            return []
        seg = SegmentRecord(
            session_id=self.session_id,
            channel=self.channel,
            seq=self._seq,
            start_offset=self._start_offset,
            sample_count=len(self._pcm) // 2,
            sample_rate=self.sample_rate,
            first_arrival_ns=self._first_arrival_ns,
            pcm=bytes(self._pcm),
            frames=pack_frames(self._frames),
        )
        self._seq += 1
        self._start_offset += seg.sample_count
        self._pcm = bytearray()
        self._frames = []
        return [seg]


def segment_positions(
    segments: Sequence[SegmentRecord], t0_ns: int, *, reanchor_after_s: float = 0.5
) -> list[int]:
    """Where each segment's first sample lands on the bridge clock (samples from ``t0_ns``).

    A segment that continues the previous one on the sender's clock follows it
    sample for sample; one whose arrival lags its expected position by more
    than ``reanchor_after_s`` (the sender paused without advancing its clock),
    or one after a jump, is anchored at its arrival.
    """
    if not segments:
        return []
    rate = segments[0].sample_rate
    positions: list[int] = []
    cursor = 0  # end of the previous segment, in output samples
    prev: SegmentRecord | None = None
    prev_pos = 0
    for seg in segments:
        arrival_pos = max(0, round((seg.first_arrival_ns - t0_ns) * rate / 1e9))
        contiguous = prev is not None and seg.start_offset == prev.start_offset + prev.sample_count
        if contiguous:
            pos = prev_pos + (prev.sample_count if prev else 0)
            if arrival_pos - pos > reanchor_after_s * rate:
                pos = arrival_pos
        else:
            pos = max(arrival_pos, cursor)
        positions.append(pos)
        cursor = pos + len(seg.pcm) // 2
        prev, prev_pos = seg, pos
    return positions


def place_segments(
    segments: Sequence[SegmentRecord],
    t0_ns: int,
    *,
    reanchor_after_s: float = 0.5,
    min_length: int = 0,
) -> np.ndarray:
    """Lay a channel's segments on the bridge clock starting at ``t0_ns``.

    Returns int16 samples at the segments' rate; silence where nothing was sent
    (positions: :func:`segment_positions`).
    """
    if not segments:
        return np.zeros(min_length, dtype=np.int16)
    positions = segment_positions(segments, t0_ns, reanchor_after_s=reanchor_after_s)
    end = max(pos + len(seg.pcm) // 2 for pos, seg in zip(positions, segments, strict=True))
    out = np.zeros(max(end, min_length), dtype=np.int16)
    for pos, seg in zip(positions, segments, strict=True):
        samples = np.frombuffer(seg.pcm, dtype="<i2")
        out[pos : pos + len(samples)] = samples
    return out


def resample_whole(samples: np.ndarray, rate_in: int, rate_out: int) -> np.ndarray:
    """Resample a whole recorded signal (offline, FFT-based: no chunk edges)."""
    if rate_in == rate_out or len(samples) == 0:
        return samples.astype(np.int16, copy=False)
    n_out = round(len(samples) * rate_out / rate_in)
    spectrum = np.fft.rfft(samples.astype(np.float64))
    n_bins = n_out // 2 + 1
    resized = np.zeros(n_bins, dtype=np.complex128)
    keep = min(n_bins, len(spectrum))
    resized[:keep] = spectrum[:keep]
    out = np.fft.irfft(resized, n_out) * (n_out / len(samples))
    return np.clip(np.round(out), -32768, 32767).astype(np.int16)
