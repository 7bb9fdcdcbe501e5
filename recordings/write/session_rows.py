"""A session's rows through its life, and its audio: what the bridge writes as a call runs.

Why apart from :mod:`vae.recordings.write.writer` (runs, events, final
states, artifacts, and the one writer per file): a session's row is written
in steps — started, its bots and audio settings, its mode, caller, line,
clock and bridge, ended (or superseded) — and its audio arrives as segments
many times a second, some from the bridge's real-time clock (``*_nowait``).
These writes change with what a session records about itself. They are
methods of every :class:`~vae.recordings.write.writer.RecordingWriter`; with a
:attr:`SessionWriter.privacy` filter (``vae run --redact``) rows of the runs it
covers are redacted before they are queued, and audio is held until its
session ends (:mod:`vae.recordings.write.privacy`).
"""

from __future__ import annotations

from typing import Any

from vae.recordings.models import SegmentRecord, SessionRecord
from vae.recordings.write.batch_commit import Row
from vae.recordings.write.batch_writer import BatchWriter
from vae.recordings.write.privacy import WriteFilter
from vae.recordings.write.row_text import dumps


class SessionWriter(BatchWriter):
    """Typed writes of a session's row and its audio segments."""

    #: Redacts the rows of the runs it covers (``vae run --redact``); None: none.
    privacy: WriteFilter | None = None

    def _private(self, key: str) -> WriteFilter | None:
        p = self.privacy
        return p if p is not None and (p.covers(key) or p.covers_run(key)) else None

    async def start_session(self, s: SessionRecord) -> None:
        if (p := self._private(s.run_id)) is not None:
            s = await p.session(s)
        await self.execute(
            "INSERT INTO sessions (session_id, run_id, scenario_name, attempt, status,"
            " started_ns, user_bot_json, agent_bot_json, audio_json, retry_reason)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                s.session_id,
                s.run_id,
                s.scenario_name,
                s.attempt,
                str(s.status),
                s.started_ns,
                dumps(s.user_bot),
                dumps(s.agent_bot),
                dumps(s.audio),
                s.retry_reason,
            ),
        )

    async def update_session_info(
        self,
        session_id: str,
        *,
        user_bot: dict[str, object],
        agent_bot: dict[str, object],
        audio: dict[str, object],
    ) -> None:
        if (p := self._private(session_id)) is not None:
            user_bot = await p.document(session_id, "sessions.user_bot_json", user_bot)  # type: ignore[assignment]
            agent_bot = await p.document(session_id, "sessions.agent_bot_json", agent_bot)  # type: ignore[assignment]
        await self.execute(
            "UPDATE sessions SET user_bot_json = ?, agent_bot_json = ?, audio_json = ?"
            " WHERE session_id = ?",
            (dumps(user_bot), dumps(agent_bot), dumps(audio), session_id),
        )

    async def end_session(
        self,
        session_id: str,
        *,
        ended_ns: int,
        stop_reason: str,
        stop_detail: str = "",
        clean_exit: bool | None,
        user_turns: int,
        agent_turns: int,
    ) -> None:
        if (p := self._private(session_id)) is not None:
            # The held audio, masked, goes before the row that says the session ended.
            for seg in await p.release(session_id):
                await self.execute(_SEGMENT_SQL, _segment_row(seg))
            stop_detail = await p.text(session_id, "sessions.stop_detail", stop_detail)
        await self.execute(
            "UPDATE sessions SET status = 'ended', ended_ns = ?, stop_reason = ?,"
            " stop_detail = ?, clean_exit = ?, user_turns = ?, agent_turns = ?"
            " WHERE session_id = ?",
            (
                ended_ns,
                stop_reason,
                stop_detail,
                None if clean_exit is None else int(clean_exit),
                user_turns,
                agent_turns,
                session_id,
            ),
        )

    async def mark_superseded(self, session_id: str, reason: str) -> None:
        await self.execute(
            "UPDATE sessions SET status = 'superseded', superseded_reason = ? WHERE session_id = ?",
            (reason, session_id),
        )

    async def add_segment(self, seg: SegmentRecord) -> None:
        if self.privacy is not None and self.privacy.hold(seg):
            return
        await self.execute(_SEGMENT_SQL, _segment_row(seg))

    def add_segment_nowait(self, seg: SegmentRecord) -> None:
        """Queue a segment without waiting (the bridge's audio clock)."""
        if self.privacy is not None and self.privacy.hold(seg):
            return
        self.execute_nowait(_SEGMENT_SQL, _segment_row(seg))

    async def put_session_mode(self, session_id: str, *, modality: str, clock: str) -> None:
        """Record how the session's bots talk (audio/text) and its clock (real/virtual)."""
        await self.execute(
            "UPDATE sessions SET modality = ?, clock = ? WHERE session_id = ?",
            (modality, clock, session_id),
        )

    async def put_session_caller(self, session_id: str, caller: dict[str, Any]) -> None:
        """Record the caller the session's scenario asked for (voice, behaviours, voicemail)."""
        if (p := self._private(session_id)) is not None:
            caller = await p.document(session_id, "sessions.caller_json", caller)  # type: ignore[assignment]
        await self.execute(
            "UPDATE sessions SET caller_json = ? WHERE session_id = ?",
            (dumps(caller), session_id),
        )

    async def put_session_clock(self, session_id: str, clock: dict[str, object]) -> None:
        """Record how late a session's clock ticked and its audio arrived."""
        await self.execute(
            "UPDATE sessions SET clock_json = ? WHERE session_id = ?", (dumps(clock), session_id)
        )

    async def put_session_line(self, session_id: str, line: dict[str, object]) -> None:
        """Record the phone line the caller's audio went through (``sessions.line_json``)."""
        await self.execute(
            "UPDATE sessions SET line_json = ? WHERE session_id = ?", (dumps(line), session_id)
        )

    async def put_session_bridge(self, session_id: str, bridge: dict[str, object]) -> None:
        """Record which bridge process served the attempt (host, pid, address, worker)."""
        await self.execute(
            "UPDATE sessions SET bridge_json = ? WHERE session_id = ?", (dumps(bridge), session_id)
        )


_SEGMENT_SQL = (
    "INSERT INTO audio_segments (session_id, channel, seq, start_offset, sample_count,"
    " sample_rate, first_arrival_ns, frames, pcm) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


def _segment_row(seg: SegmentRecord) -> Row:
    return (
        seg.session_id,
        str(seg.channel),
        seg.seq,
        seg.start_offset,
        seg.sample_count,
        seg.sample_rate,
        seg.first_arrival_ns,
        seg.frames,
        seg.pcm,
    )
