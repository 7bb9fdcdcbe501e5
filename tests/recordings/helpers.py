"""Writing small synthetic sessions straight into a store, and poking at it (store tests)."""

from __future__ import annotations

import sqlite3
from typing import Any

import numpy as np

from vae.recordings.audio import SegmentBuilder
from vae.recordings.backends.connection import open_store_readonly
from vae.recordings.backends.locator import StoreRef, locate
from vae.recordings.models import (
    Channel,
    EventKind,
    EventRecord,
    FinalStateRecord,
    RunRecord,
    RunScenario,
    RunStatus,
    SessionRecord,
    SessionStatus,
    Side,
)
from vae.recordings.write.writer import RecordingWriter

T0 = 1_700_000_000_000_000_000


async def add_run(writer: RecordingWriter, run_id: str, scenarios: list[str]) -> None:
    await writer.create_run(RunRecord(run_id, T0, RunStatus.RUNNING, "test"))
    await writer.add_run_scenarios(
        [RunScenario(run_id, name, i, "demo", {"name": name}) for i, name in enumerate(scenarios)]
    )


async def stream_channel(
    writer: RecordingWriter,
    session_id: str,
    channel: Channel,
    samples: np.ndarray,
    *,
    rate: int,
    start_s: float,
    frame: int = 320,
    t0_ns: int = T0,
    builder: SegmentBuilder | None = None,
) -> SegmentBuilder:
    """Record ``samples`` as frames arriving in real time from ``start_s``.

    Pass the returned builder back in to continue the same channel later.
    """
    builder = builder or SegmentBuilder(session_id, channel, rate)
    offset0 = round(start_s * rate)
    for i in range(0, len(samples), frame):
        chunk = samples[i : i + frame]
        arrival = t0_ns + round((offset0 + i) * 1e9 / rate)
        for seg in builder.add(chunk.astype("<i2").tobytes(), offset0 + i, i // frame, arrival):
            await writer.add_segment(seg)
    for seg in builder.close():
        await writer.add_segment(seg)
    return builder


async def add_session(
    writer: RecordingWriter,
    run_id: str,
    scenario: str,
    *,
    attempt: int = 1,
    session_id: str | None = None,
    ended: bool = True,
    user_turns: int = 2,
    agent_turns: int = 2,
    final_state: bool = True,
    stop_reason: str = "end_tool",
) -> str:
    sid = session_id or f"{run_id}/{scenario}/{attempt}"
    await writer.start_session(
        SessionRecord(sid, run_id, scenario, attempt, SessionStatus.RUNNING, T0)
    )
    await writer.add_events(
        [EventRecord(sid, Side.AGENT, EventKind.TRANSCRIPT, T0 + 10, {"text": "hi"}, bot_ns=5)]
    )
    if final_state:
        await writer.put_final_state(
            FinalStateRecord(sid, Side.AGENT, T0 + 20, state={"a": 1}, state_hash="h")
        )
    if ended:
        await writer.end_session(
            sid,
            ended_ns=T0 + 10**9,
            stop_reason=stop_reason,
            clean_exit=stop_reason == "end_tool",
            user_turns=user_turns,
            agent_turns=agent_turns,
        )
    return sid


def query(store: StoreRef, sql: str, params: tuple[object, ...] = ()) -> list[tuple[Any, ...]]:
    """Rows of one portable query, on a connection of its own (after writers closed)."""
    conn = open_store_readonly(store)
    try:
        return [tuple(r) for r in conn.execute(sql, params).fetchall()]
    finally:
        conn.close()


class WriteLock:
    """Another connection holding the store's write lock, as another process would.

    SQLite: ``BEGIN IMMEDIATE`` (the database's one write lock). PostgreSQL:
    every table of the store locked against writes (``SHARE ROW EXCLUSIVE``
    lets readers in, as SQLite's lock does).
    """

    def __init__(self, store: StoreRef) -> None:
        self.locator = locate(store)
        self.conn: Any
        if self.locator.is_postgres:
            import psycopg

            self.conn = psycopg.connect(str(self.locator), autocommit=True)
        else:
            self.conn = sqlite3.connect(self.locator.file, isolation_level=None)

    def hold(self) -> None:
        if self.locator.is_postgres:
            tables = [r[0] for r in self.conn.execute(
                "SELECT table_name FROM information_schema.tables"
                " WHERE table_schema = current_schema()")]  # fmt: skip
            self.conn.execute("BEGIN")
            self.conn.execute(f"LOCK TABLE {', '.join(tables)} IN SHARE ROW EXCLUSIVE MODE")
        else:
            self.conn.execute("BEGIN IMMEDIATE")

    def release(self) -> None:
        self.conn.execute("ROLLBACK")

    def close(self) -> None:
        self.conn.close()
