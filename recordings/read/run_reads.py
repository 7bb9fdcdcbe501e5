"""Reading a recording's runs and sessions: what was run, each attempt, and how it ended.

These queries change with the ``runs``, ``run_scenarios`` and ``sessions``
tables (and the per-session JSON columns a migration adds: clock, caller,
line, bridge); the media a session holds — events, audio, final states,
artifacts — is read by :class:`~vae.recordings.read.reader.RecordingReader`,
which extends this base and opens the connection. Each query is one text with
``?`` placeholders, run on either back end.
"""

from __future__ import annotations

import json
from typing import Any

from vae.recordings.backends.dialect import StoreConnection
from vae.recordings.models import (
    RunRecord,
    RunScenario,
    RunStatus,
    SessionMode,
    SessionRecord,
    SessionStatus,
)


class RunReader:
    """Typed queries over the runs, their scenarios and their sessions of one store."""

    conn: StoreConnection

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

    def session_clocks(self, run_id: str) -> dict[str, dict[str, Any]]:
        """Session id -> its clock record (:meth:`session_clock`), for a run's sessions."""
        return self._json_per_session(run_id, "clock_json")

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
