"""Reading a store, also while a writer is writing to it.

Readers are synchronous (plain ``sqlite3``, or psycopg for a
``postgresql://`` store: :mod:`vae.recordings.backends.pg`): they serve the scorer,
reports, exports and the CLI, none of which sit on the audio path. Services
call them through ``asyncio.to_thread``. Each query is one text with ``?``
placeholders, run as ``self.conn.execute(sql, params)`` on either back end.

This module opens the connection and reads what a session holds — events,
audio, final states, artifacts. :class:`RecordingReader` extends the bases
that read the rest: runs and sessions (:mod:`vae.recordings.read.run_reads`),
the scorer's tables (:mod:`vae.recordings.read.scoring_reads`) and labels.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from vae.recordings.audio import place_segments, unpack_frames
from vae.recordings.backends.connection import open_store_readonly
from vae.recordings.backends.dialect import StoreConnection
from vae.recordings.backends.locator import StoreRef, locate
from vae.recordings.models import (
    ArtifactRecord,
    Channel,
    EventKind,
    EventRecord,
    FinalStateRecord,
    SegmentRecord,
    SessionRecord,
    Side,
)
from vae.recordings.read.run_reads import RunReader
from vae.recordings.read.scoring_reads import ScoringReader
from vae.recordings.write.label_rows import LabelReader


@dataclass(frozen=True)
class ChannelAudio:
    """One channel laid on the bridge clock: ``samples[0]`` is at ``t0_ns``."""

    samples: np.ndarray
    sample_rate: int
    t0_ns: int

    @property
    def duration_s(self) -> float:
        return len(self.samples) / self.sample_rate if self.sample_rate else 0.0


def _loads(text: str | None) -> Any:
    return None if text is None else json.loads(text)


class RecordingReader(RunReader, ScoringReader, LabelReader):
    """Typed queries over one store (its runs and sessions: :class:`RunReader`; its
    scorings: :class:`ScoringReader`; its labels:
    :class:`~vae.recordings.write.label_rows.LabelReader`)."""

    def __init__(self, path: StoreRef) -> None:
        #: Where the store is (``path`` is the same object, kept for older callers).
        self.locator = locate(path)
        self.path = self.locator
        self.conn: StoreConnection = open_store_readonly(self.locator)

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> RecordingReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------ events
    def events(
        self, session_id: str, kinds: Iterable[EventKind | str] | None = None
    ) -> list[EventRecord]:
        sql = (
            "SELECT id, session_id, side, kind, bridge_ns, bot_ns, payload_json FROM events"
            " WHERE session_id = ?"
        )
        params: list[Any] = [session_id]
        if kinds is not None:
            wanted = [str(k) for k in kinds]
            if not wanted:  # "IN ()" is SQLite-only
                return []
            sql += f" AND kind IN ({','.join('?' * len(wanted))})"
            params.extend(wanted)
        sql += " ORDER BY bridge_ns, id"
        return [
            EventRecord(
                id=r[0],
                session_id=r[1],
                side=Side(r[2]),
                kind=EventKind(r[3]),
                bridge_ns=r[4],
                bot_ns=r[5],
                payload=json.loads(r[6]),
            )
            for r in self.conn.execute(sql, params)
        ]

    # ------------------------------------------------------------ audio
    def segments(self, session_id: str, channel: Channel | str) -> list[SegmentRecord]:
        rows = self.conn.execute(
            "SELECT session_id, channel, seq, start_offset, sample_count, sample_rate,"
            " first_arrival_ns, pcm, frames FROM audio_segments"
            " WHERE session_id = ? AND channel = ? ORDER BY seq",
            (session_id, str(channel)),
        )
        return [
            SegmentRecord(r[0], Channel(r[1]), r[2], r[3], r[4], r[5], r[6], r[7], r[8])
            for r in rows
        ]

    def channel_rates(self, session_id: str) -> dict[Channel, int]:
        rows = self.conn.execute(
            "SELECT channel, MIN(sample_rate) FROM audio_segments WHERE session_id = ?"
            " GROUP BY channel",
            (session_id,),
        )
        return {Channel(r[0]): r[1] for r in rows}

    def read_channel(self, session_id: str, channel: Channel | str) -> ChannelAudio:
        """A channel as int16 samples on the bridge clock, from the session's start."""
        session = self.session(session_id)
        if session is None:
            raise KeyError(f"no session {session_id!r}")
        segs = self.segments(session_id, channel)
        rate = segs[0].sample_rate if segs else int(_rate_hint(session, channel))
        samples = place_segments(segs, session.started_ns)
        return ChannelAudio(samples=samples, sample_rate=rate, t0_ns=session.started_ns)

    def frame_timings(self, session_id: str, channel: Channel | str) -> np.ndarray:
        """Every received frame of a channel: (sequence, samples, arrival_ns) rows."""
        blobs = [s.frames for s in self.segments(session_id, channel)]
        if not blobs:
            return unpack_frames(b"")
        return np.concatenate([unpack_frames(b) for b in blobs])

    # ------------------------------------------------------------ final state
    def final_states(self, session_id: str) -> dict[Side, FinalStateRecord]:
        rows = self.conn.execute(
            "SELECT session_id, side, received_ns, state_json, state_hash, context_json"
            " FROM final_states WHERE session_id = ?",
            (session_id,),
        )
        return {
            Side(r[1]): FinalStateRecord(
                session_id=r[0],
                side=Side(r[1]),
                received_ns=r[2],
                state=_loads(r[3]),
                state_hash=r[4],
                context=_loads(r[5]),
            )
            for r in rows
        }

    # ------------------------------------------------------------ artifacts
    def artifacts(self, run_id: str, session_id: str | None = None) -> list[ArtifactRecord]:
        sql = "SELECT run_id, name, content, session_id FROM artifacts WHERE run_id = ?"
        params: list[Any] = [run_id]
        if session_id is not None:
            sql += " AND session_id = ?"
            params.append(session_id)
        return [
            ArtifactRecord(r[0], r[1], r[2], r[3])
            for r in self.conn.execute(sql + " ORDER BY id", params)
        ]


def _rate_hint(session: SessionRecord, channel: Channel | str) -> int:
    rates = session.audio.get("rates")
    if isinstance(rates, dict):
        value = rates.get(str(channel))
        if isinstance(value, int):
            return value
    return 16000
