"""Reading a store, also while a writer is writing to it.

Readers are synchronous (plain ``sqlite3``, or psycopg for a
``postgresql://`` store: :mod:`vae.recordings.backends.pg`): they serve the scorer,
reports, exports and the CLI, none of which sit on the audio path. Services
call them through ``asyncio.to_thread``. Each query is one text with ``?``
placeholders, run as ``self.conn.execute(sql, params)`` on either back end.

This module reads what a recording is made of — runs, sessions, events,
audio, final states, artifacts; the scorer's tables are read by
:mod:`vae.recordings.read.scoring_reads`, which :class:`RecordingReader` extends.
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
    RunRecord,
    RunScenario,
    RunStatus,
    SegmentRecord,
    SessionMode,
    SessionRecord,
    SessionStatus,
    Side,
)
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


class RecordingReader(ScoringReader, LabelReader):
    """Typed queries over one store (its scorings: :class:`ScoringReader`; its
    labels: :class:`~vae.recordings.write.label_rows.LabelReader`)."""

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

    # ------------------------------------------------------------ runs
    _RUN_COLS = (
        "run_id, created_ns, finished_ns, status, options_json, vae_version, tags_json, source,"
        " error"
    )

    def _run(self, row: tuple[Any, ...]) -> RunRecord:
        return RunRecord(
            run_id=row[0],
            created_ns=row[1],
            finished_ns=row[2],
            status=RunStatus(row[3]),
            options=json.loads(row[4]),
            vae_version=row[5],
            tags=json.loads(row[6]),
            source=row[7],
            error=row[8],
        )

    def get_run(self, run_id: str) -> RunRecord | None:
        row = self.conn.execute(
            f"SELECT {self._RUN_COLS} FROM runs WHERE run_id = ?", (run_id,)
        ).fetchone()
        return None if row is None else self._run(row)

    def list_runs(self, prefix: str = "", limit: int = 0) -> list[RunRecord]:
        # lower() on both sides: SQLite's LIKE ignores ASCII case, PostgreSQL's does not.
        sql = f"SELECT {self._RUN_COLS} FROM runs WHERE lower(run_id) LIKE lower(?) ESCAPE '\\'"
        sql += " ORDER BY created_ns DESC, run_id DESC"
        if limit:
            sql += f" LIMIT {int(limit)}"
        escaped = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        return [self._run(r) for r in self.conn.execute(sql, (escaped + "%",))]

    def run_ids(self) -> list[str]:
        return [r[0] for r in self.conn.execute("SELECT run_id FROM runs ORDER BY run_id")]

    def run_scenarios(self, run_id: str) -> list[RunScenario]:
        rows = self.conn.execute(
            "SELECT run_id, scenario_name, ordinal, domain, scenario_json FROM run_scenarios"
            " WHERE run_id = ? ORDER BY ordinal",
            (run_id,),
        )
        return [RunScenario(r[0], r[1], r[2], r[3], json.loads(r[4])) for r in rows]

    # ------------------------------------------------------------ sessions
    _SESSION_COLS = (
        "session_id, run_id, scenario_name, attempt, status, started_ns, ended_ns, stop_reason,"
        " stop_detail, clean_exit, user_turns, agent_turns, user_bot_json, agent_bot_json,"
        " audio_json, retry_reason, superseded_reason"
    )

    def _session(self, r: tuple[Any, ...]) -> SessionRecord:
        return SessionRecord(
            session_id=r[0],
            run_id=r[1],
            scenario_name=r[2],
            attempt=r[3],
            status=SessionStatus(r[4]),
            started_ns=r[5],
            ended_ns=r[6],
            stop_reason=r[7],
            stop_detail=r[8],
            clean_exit=None if r[9] is None else bool(r[9]),
            user_turns=r[10],
            agent_turns=r[11],
            user_bot=json.loads(r[12]),
            agent_bot=json.loads(r[13]),
            audio=json.loads(r[14]),
            retry_reason=r[15],
            superseded_reason=r[16],
        )

    def session_clock(self, session_id: str) -> dict[str, Any] | None:
        """How late the session's clock ticked and its audio arrived (None: not recorded)."""
        row = self.conn.execute(
            "SELECT clock_json FROM sessions WHERE session_id = ?", (session_id,)
        ).fetchone()
        if row is None or row[0] is None:
            return None
        value = json.loads(row[0])
        return value if isinstance(value, dict) else None

    def session_mode(self, session_id: str) -> SessionMode:
        """The session's modality (audio/text) and clock (real/virtual)."""
        row = self.conn.execute(
            "SELECT modality, clock FROM sessions WHERE session_id = ?", (session_id,)
        ).fetchone()
        return SessionMode() if row is None else SessionMode(row[0], row[1])

    def session_modes(self, run_id: str) -> dict[str, SessionMode]:
        """Session id -> its modality and clock, for every session of a run."""
        rows = self.conn.execute(
            "SELECT session_id, modality, clock FROM sessions WHERE run_id = ?", (run_id,)
        ).fetchall()
        return {r[0]: SessionMode(r[1], r[2]) for r in rows}

    def session_callers(self, run_id: str) -> dict[str, dict[str, Any]]:
        """Session id -> the caller recorded for it (sessions whose scenario named one)."""
        return self._json_per_session(run_id, "caller_json")

    def session_caller(self, session_id: str) -> dict[str, Any] | None:
        """The caller recorded for one session, or None (the user bot's own voice)."""
        return self._json_of_session(session_id, "caller_json")

    def session_line(self, session_id: str) -> dict[str, Any] | None:
        """The phone line one session's caller audio went through (None: a clean line)."""
        return self._json_of_session(session_id, "line_json")

    def session_lines(self, run_id: str) -> dict[str, dict[str, Any]]:
        """Session id -> the phone line its caller's audio went through (where one was set)."""
        return self._json_per_session(run_id, "line_json")

    def _json_of_session(self, session_id: str, column: str) -> dict[str, Any] | None:
        # ``column`` is one of this class's literal column names, never input.
        row = self.conn.execute(
            f"SELECT {column} FROM sessions WHERE session_id = ?", (session_id,)
        ).fetchone()
        value = json.loads(row[0]) if row is not None and row[0] else None
        return value if isinstance(value, dict) else None

    def _json_per_session(self, run_id: str, column: str) -> dict[str, dict[str, Any]]:
        rows = self.conn.execute(
            f"SELECT session_id, {column} FROM sessions WHERE run_id = ?", (run_id,)
        ).fetchall()
        found: dict[str, dict[str, Any]] = {}
        for session_id, text in rows:
            value = json.loads(text) if text else None
            if isinstance(value, dict):
                found[session_id] = value
        return found

    def session_bridges(self, run_id: str) -> dict[str, dict[str, Any]]:
        """Session id -> the bridge process that served it (where one was recorded)."""
        return self._json_per_session(run_id, "bridge_json")

    def session(self, session_id: str) -> SessionRecord | None:
        row = self.conn.execute(
            f"SELECT {self._SESSION_COLS} FROM sessions WHERE session_id = ?", (session_id,)
        ).fetchone()
        return None if row is None else self._session(row)

    def sessions(self, run_id: str) -> list[SessionRecord]:
        rows = self.conn.execute(
            f"SELECT {self._SESSION_COLS} FROM sessions WHERE run_id = ?"
            " ORDER BY scenario_name, attempt",
            (run_id,),
        )
        return [self._session(r) for r in rows]

    def latest_attempts(self, run_id: str) -> dict[str, SessionRecord]:
        """The newest attempt of each scenario that is not superseded."""
        latest: dict[str, SessionRecord] = {}
        for s in self.sessions(run_id):
            if s.status is SessionStatus.SUPERSEDED:
                continue
            if s.scenario_name not in latest or s.attempt > latest[s.scenario_name].attempt:
                latest[s.scenario_name] = s
        return latest

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
