"""The writer's bound: awaiting callers wait at it, real-time callers never do."""

from __future__ import annotations

import asyncio

from tests.recordings.helpers import add_run, add_session
from vae.recordings.backends.locator import Locator
from vae.recordings.models import Channel, SegmentRecord
from vae.recordings.read.reader import RecordingReader
from vae.recordings.write.writer import open_writer


def _segment(sid: str, seq: int) -> SegmentRecord:
    return SegmentRecord(
        session_id=sid,
        channel=Channel.TO_AGENT,
        seq=seq,
        start_offset=seq * 160,
        sample_count=160,
        sample_rate=16000,
        first_arrival_ns=seq,
        pcm=b"\x01\x00" * 160,
        frames=b"",
    )


async def test_nowait_goes_past_the_bound_and_awaiting_callers_wait(store: Locator) -> None:
    async with open_writer(store, max_pending=5, flush_interval_s=5.0) as w:
        await add_run(w, "r", ["s"])
        sid = await add_session(w, "r", "s", ended=False)
        await w.flush()
        # The flush interval is long: nothing commits while we fill the queue.
        for seq in range(20):
            w.add_segment_nowait(_segment(sid, seq))  # never waits, even past the bound
        assert w.pending >= 20
        # An awaiting caller waits for room (backpressure): when its put returns the
        # writer has taken the backlog (early, since the queue was full), and the
        # queue is within its bound again.
        await asyncio.wait_for(w.add_segment(_segment(sid, 20)), 10)
        assert w.pending <= 5
        await w.flush()
    with RecordingReader(store) as reader:
        assert [s.seq for s in reader.segments(sid, Channel.TO_AGENT)] == list(range(21))
