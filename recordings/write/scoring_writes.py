"""The scorer's rows: scorings, their scores, transcript layers and the caches.

A scoring is written long after its run was recorded, by another service
(``vae rescore``, the scorer) or an importer, and its tables change with how
runs are judged, not with how they are recorded. These writes are methods of
every :class:`~vae.recordings.write.writer.RecordingWriter`; they queue rows on the same
single writer (:mod:`vae.recordings.write.batch_writer`) as the recording's own rows.

A scoring is never deleted: a newer one marks the older ones superseded.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from vae.recordings.models import ScoreRecord, ScoringRecord, TranscriptRecord
from vae.recordings.write.batch_writer import BatchWriter
from vae.recordings.write.row_text import dumps


class ScoringWriter(BatchWriter):
    """Typed writes of scorings, scores and judge answers."""

    async def create_scoring(self, sc: ScoringRecord) -> None:
        await self.execute(
            "INSERT INTO scorings (scoring_id, run_id, created_ns, status, mode, config_json,"
            " versions_json, judge_model, prompt_hash, summary_json)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                sc.scoring_id,
                sc.run_id,
                sc.created_ns,
                sc.status,
                sc.mode,
                dumps(sc.config),
                dumps(sc.versions),
                sc.judge_model,
                sc.prompt_hash,
                dumps(sc.summary),
            ),
        )

    async def add_scores(self, scores: Sequence[ScoreRecord]) -> None:
        await self.executemany(
            "INSERT INTO scores (scoring_id, session_id, signal, verdict, value, passed,"
            " detail_json, error) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
            " ON CONFLICT (scoring_id, session_id, signal) DO UPDATE SET"
            " verdict = excluded.verdict, value = excluded.value, passed = excluded.passed,"
            " detail_json = excluded.detail_json, error = excluded.error",
            [
                (
                    s.scoring_id,
                    s.session_id,
                    s.signal,
                    str(s.verdict),
                    s.value,
                    None if s.passed is None else int(s.passed),
                    dumps(s.detail),
                    s.error,
                )
                for s in scores
            ],
        )

    async def delete_session_scores(self, scoring_id: str, session_id: str) -> None:
        """Drop what a scoring holds for one session (a failed worker's partial rows)."""
        await self.execute(
            "DELETE FROM scores WHERE scoring_id = ? AND session_id = ?", (scoring_id, session_id)
        )

    async def finish_scoring(
        self, scoring_id: str, *, status: str, summary: dict[str, object], finished_ns: int
    ) -> None:
        await self.execute(
            "UPDATE scorings SET status = ?, summary_json = ?, finished_ns = ?"
            " WHERE scoring_id = ?",
            (status, dumps(summary), finished_ns, scoring_id),
        )

    async def supersede_scorings(self, run_id: str, new_scoring_id: str) -> None:
        """Mark the run's current scorings superseded by ``new_scoring_id`` (never deletes)."""
        await self.execute(
            "UPDATE scorings SET superseded_by = ? WHERE run_id = ? AND scoring_id != ?"
            " AND superseded_by IS NULL",
            (new_scoring_id, run_id, new_scoring_id),
        )

    async def put_judge_cache(
        self, cache_key: str, model: str, request: object, response: object
    ) -> None:
        await self.execute(
            "INSERT INTO judge_cache (cache_key, model, request_json, response_json, created_ns)"
            " VALUES (?, ?, ?, ?, ?) ON CONFLICT (cache_key) DO UPDATE SET"
            " model = excluded.model, request_json = excluded.request_json,"
            " response_json = excluded.response_json, created_ns = excluded.created_ns",
            (cache_key, model, dumps(request), dumps(response), time.time_ns()),
        )

    async def add_transcripts(self, rows: Sequence[TranscriptRecord]) -> None:
        """A scoring's transcript layer (never touches what the bots reported)."""
        await self.executemany(
            "INSERT INTO transcripts (scoring_id, session_id, channel, turn, start_s, end_s,"
            " text, error, cached) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (t.scoring_id, t.session_id, t.channel, t.turn, t.start_s, t.end_s, t.text,
                 t.error, int(t.cached))
                for t in rows
            ],
        )  # fmt: skip

    async def put_transcription_cache(
        self, cache_key: str, engine: str, config: object, text: str
    ) -> None:
        await self.execute(
            "INSERT INTO transcription_cache (cache_key, engine, config_json, text, created_ns)"
            " VALUES (?, ?, ?, ?, ?) ON CONFLICT (cache_key) DO UPDATE SET text = excluded.text,"
            " created_ns = excluded.created_ns",
            (cache_key, engine, dumps(config), text, time.time_ns()),
        )
