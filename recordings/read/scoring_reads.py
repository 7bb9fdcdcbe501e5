"""Reading the scorer's rows: scorings, their scores, transcript layers and the caches.

These tables change with how runs are judged, not with how they are recorded
(:mod:`vae.recordings.write.scoring_writes` writes them). They are read through every
:class:`~vae.recordings.read.reader.RecordingReader`, which opens the connection; this
base holds the queries only.

A scoring still ``running`` whose owner died reads ``interrupted`` here even
before a writer marks it so (:mod:`vae.recordings.write.scoring_owner`).
"""

from __future__ import annotations

import json
from typing import Any

from vae.recordings.backends.dialect import StoreConnection
from vae.recordings.models import ScoreRecord, ScoringRecord, TranscriptRecord, Verdict
from vae.recordings.write.scoring_owner import INTERRUPTED, is_interrupted


class ScoringReader:
    """Typed queries over the scorings, scores and judge cache of one store file."""

    conn: StoreConnection

    _SCORING_COLS = (
        "scoring_id, run_id, created_ns, status, config_json, mode, versions_json, judge_model,"
        " prompt_hash, superseded_by, summary_json, finished_ns"
    )

    def _scoring(self, r: tuple[Any, ...]) -> ScoringRecord:
        summary = json.loads(r[10])
        return ScoringRecord(
            scoring_id=r[0],
            run_id=r[1],
            created_ns=r[2],
            # A running scoring whose owner died reads interrupted before a writer marks it.
            status=INTERRUPTED if is_interrupted(r[3], summary) else r[3],
            config=json.loads(r[4]),
            mode=r[5],
            versions=json.loads(r[6]),
            judge_model=r[7],
            prompt_hash=r[8],
            superseded_by=r[9],
            summary=summary,
            finished_ns=r[11],
        )

    def scoring(self, scoring_id: str) -> ScoringRecord | None:
        row = self.conn.execute(
            f"SELECT {self._SCORING_COLS} FROM scorings WHERE scoring_id = ?", (scoring_id,)
        ).fetchone()
        return None if row is None else self._scoring(row)

    def scorings(self, run_id: str | None = None) -> list[ScoringRecord]:
        sql = f"SELECT {self._SCORING_COLS} FROM scorings"
        params: tuple[Any, ...] = ()
        if run_id is not None:
            sql += " WHERE run_id = ?"
            params = (run_id,)
        sql += " ORDER BY created_ns, scoring_id"
        return [self._scoring(r) for r in self.conn.execute(sql, params)]

    def scores(self, scoring_id: str, session_id: str | None = None) -> list[ScoreRecord]:
        sql = (
            "SELECT scoring_id, session_id, signal, verdict, value, detail_json, error"
            " FROM scores WHERE scoring_id = ?"
        )
        params: list[Any] = [scoring_id]
        if session_id is not None:
            sql += " AND session_id = ?"
            params.append(session_id)
        sql += " ORDER BY session_id, signal"
        return [
            ScoreRecord(r[0], r[1], r[2], Verdict(r[3]), r[4], json.loads(r[5]), r[6])
            for r in self.conn.execute(sql, params)
        ]

    def judge_cache_get(self, cache_key: str) -> Any:
        row = self.conn.execute(
            "SELECT response_json FROM judge_cache WHERE cache_key = ?", (cache_key,)
        ).fetchone()
        return None if row is None else json.loads(row[0])

    def transcripts(self, scoring_id: str, session_id: str | None = None) -> list[TranscriptRecord]:
        """The transcript layer a scoring's transcription stage made (empty: none ran)."""
        sql = (
            "SELECT scoring_id, session_id, channel, turn, start_s, end_s, text, error, cached"
            " FROM transcripts WHERE scoring_id = ?"
        )
        params: list[Any] = [scoring_id]
        if session_id is not None:
            sql += " AND session_id = ?"
            params.append(session_id)
        sql += " ORDER BY session_id, start_s, channel, turn"
        return [
            TranscriptRecord(r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], bool(r[8]))
            for r in self.conn.execute(sql, params).fetchall()
        ]

    def transcription_cache_get(self, cache_key: str) -> str | None:
        row = self.conn.execute(
            "SELECT text FROM transcription_cache WHERE cache_key = ?", (cache_key,)
        ).fetchone()
        return None if row is None else str(row[0])
