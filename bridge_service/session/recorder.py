"""Feeds one session's audio and events into the store's single writer.

Channels (``vae.recordings.models.Channel``): ``user``/``agent`` hold each bot's
audio exactly as sent (its rate, its sample clock and sequence numbers, the
bridge's arrival time); ``to_agent``/``to_user`` hold what the bridge delivered
on its open-mic clock (after resampling and noise), stamped with the tick time.
One :class:`~vae.recordings.audio.SegmentBuilder` per channel packs frames into
~1 s segments; :meth:`SessionRecorder.poll` closes segments whose first frame
is 0.5 s old, and the writer commits within 0.2 s, so audio is durable within
a second of arrival. What the clock records goes through the ``*_nowait``
paths: the clock never waits on the writer's queue (and so never on disk).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from vae.recordings.audio import SegmentBuilder
from vae.recordings.models import Channel, EventKind, EventRecord, SegmentRecord, Side
from vae.recordings.write.writer import RecordingWriter


class SessionRecorder:
    def __init__(
        self,
        writer: RecordingWriter,
        session_id: str,
        rates: dict[Channel, int],
        now_ns: Callable[[], int] = time.time_ns,
    ) -> None:
        self.writer = writer
        #: The session's clock (``session_time``): the default time of an event.
        self.now_ns = now_ns
        self.session_id = session_id
        self._builders = {
            channel: SegmentBuilder(session_id, channel, rate, max_age_s=0.5)
            for channel, rate in rates.items()
        }
        self.events_recorded = 0

    async def audio(
        self, channel: Channel, pcm: bytes, sample_offset: int, sequence: int, arrival_ns: int
    ) -> None:
        closed = self._builders[channel].add(pcm, sample_offset, sequence, arrival_ns)
        await self._write(closed)

    def audio_nowait(
        self, channel: Channel, pcm: bytes, sample_offset: int, sequence: int, arrival_ns: int
    ) -> None:
        """Record a delivered frame without waiting (the open-mic clock's path)."""
        for seg in self._builders[channel].add(pcm, sample_offset, sequence, arrival_ns):
            self.writer.add_segment_nowait(seg)

    async def event(
        self,
        side: Side,
        kind: EventKind,
        payload: dict[str, Any],
        *,
        bot_ns: int = 0,
        bridge_ns: int | None = None,
    ) -> None:
        record = EventRecord(
            session_id=self.session_id,
            side=side,
            kind=kind,
            bridge_ns=self.now_ns() if bridge_ns is None else bridge_ns,
            bot_ns=bot_ns,
            payload=payload,
        )
        self.events_recorded += 1
        await self.writer.add_events([record])

    def poll(self, now_ns: int) -> None:
        """Close segments whose first frame is old enough (never waits on the writer)."""
        for builder in self._builders.values():
            for seg in builder.poll(now_ns):
                self.writer.add_segment_nowait(seg)

    async def close(self) -> None:
        for builder in self._builders.values():
            await self._write(builder.close())

    async def _write(self, segments: list[SegmentRecord]) -> None:
        for seg in segments:
            await self.writer.add_segment(seg)
