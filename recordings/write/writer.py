"""The single writer of a store file, and the recording's rows it writes.

Every write in a process goes through one :class:`RecordingWriter` per file
(see :func:`open_writer`), so rows of one file are committed in order by one
task and SQLite never sees two writers of ours. How rows are queued, batched
and committed, and how storage failures end the writer, is the engine
(:mod:`vae.recordings.write.batch_writer`, :mod:`vae.recordings.write.batch_commit`); the
scorer's rows are :mod:`vae.recordings.write.scoring_writes`, a session's row
and its audio :mod:`vae.recordings.write.session_rows`. This module turns the
rest of a recording — runs, events, final states, artifacts — into rows, and
hands out the one writer per file.

Real-time callers (the bridge's audio clock) use the ``*_nowait`` methods,
which never wait on disk.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator, Sequence
from typing import Any

from vae.recordings.backends.locator import StoreRef, locate
from vae.recordings.models import (
    ArtifactRecord,
    EventRecord,
    FinalStateRecord,
    RunRecord,
    RunScenario,
)
from vae.recordings.write.label_rows import LabelWriter
from vae.recordings.write.row_text import dumps
from vae.recordings.write.scoring_writes import ScoringWriter
from vae.recordings.write.session_rows import SessionWriter

__all__ = ["FINAL_STATE_SQL", "RecordingWriter", "open_writer"]


class RecordingWriter(SessionWriter, ScoringWriter, LabelWriter):
    """The single writer of one store file, with typed writes of every record.

    With a :attr:`privacy` filter, rows of the runs it covers are redacted
    before they are queued (:mod:`vae.recordings.write.privacy`).
    """

    async def create_run(self, run: RunRecord) -> None:
        if (p := self._private(run.run_id)) is not None:
            run = await p.run(run)
        await self.execute(
            "INSERT INTO runs (run_id, created_ns, finished_ns, status, options_json,"
            " vae_version, tags_json, source) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                run.run_id,
                run.created_ns,
                run.finished_ns,
                str(run.status),
                dumps(run.options),
                run.vae_version,
                dumps(run.tags),
                run.source,
            ),
        )

    async def update_run_status(
        self, run_id: str, status: str, finished_ns: int | None = None, error: str = ""
    ) -> None:
        if error and (p := self._private(run_id)) is not None:
            error = await p.text(run_id, "runs.error", error)
        await self.execute(
            "UPDATE runs SET status = ?, finished_ns = ?, error = ? WHERE run_id = ?",
            (str(status), finished_ns, error, run_id),
        )

    async def add_run_scenarios(self, scenarios: Sequence[RunScenario]) -> None:
        if scenarios and (p := self._private(scenarios[0].run_id)) is not None:
            scenarios = await p.scenarios(scenarios)
        await self.executemany(
            "INSERT INTO run_scenarios (run_id, scenario_name, ordinal, domain,"
            " scenario_json) VALUES (?, ?, ?, ?, ?) ON CONFLICT (run_id, scenario_name) DO NOTHING",
            [
                (s.run_id, s.scenario_name, s.ordinal, s.domain, dumps(s.scenario))
                for s in scenarios
            ],
        )

    async def drop_run_scenarios(self, run_id: str, names: Sequence[str]) -> None:
        """Take scenarios a drained run never started out of it (they have no session)."""
        await self.executemany(
            "DELETE FROM run_scenarios WHERE run_id = ? AND scenario_name = ?",
            [(run_id, name) for name in names],
        )

    async def add_events(self, events: Sequence[EventRecord]) -> None:
        p = self.privacy
        if p is not None and any(p.covers(e.session_id) for e in events):
            events = await p.events(events)
        await self.executemany(
            "INSERT INTO events (session_id, side, kind, bridge_ns, bot_ns, payload_json)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            [
                (e.session_id, str(e.side), str(e.kind), e.bridge_ns, e.bot_ns, dumps(e.payload))
                for e in events
            ],
        )

    async def put_final_state(self, fs: FinalStateRecord) -> None:
        if (p := self._private(fs.session_id)) is not None:
            fs = await p.final_state(fs)
        await self.execute(
            FINAL_STATE_SQL,
            (
                fs.session_id,
                str(fs.side),
                fs.received_ns,
                None if fs.state is None else dumps(fs.state),
                fs.state_hash,
                None if fs.context is None else dumps(fs.context),
            ),
        )

    async def put_final_state_keeping_context(self, fs: FinalStateRecord) -> None:
        """Store a side's state, keeping the context history its bot already sent.

        The agent's state when a tool backend served its tools is the backend's
        (bridge_service/tools), while its LLM context is still its own.
        """
        await self.execute(
            _STATE_ONLY_SQL,
            (
                fs.session_id,
                str(fs.side),
                fs.received_ns,
                None if fs.state is None else dumps(fs.state),
                fs.state_hash,
            ),
        )

    async def add_artifact(self, art: ArtifactRecord) -> None:
        if (p := self._private(art.run_id)) is not None:
            art = await p.artifact(art)
        await self.execute(
            "INSERT INTO artifacts (run_id, session_id, name, content) VALUES (?, ?, ?, ?)",
            (art.run_id, art.session_id, art.name, art.content),
        )


#: A side's final state; a second one for the same side replaces the first.
FINAL_STATE_SQL = (
    "INSERT INTO final_states (session_id, side, received_ns, state_json, state_hash,"
    " context_json) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (session_id, side) DO UPDATE SET"
    " received_ns = excluded.received_ns, state_json = excluded.state_json,"
    " state_hash = excluded.state_hash, context_json = excluded.context_json"
)

_STATE_ONLY_SQL = (
    "INSERT INTO final_states (session_id, side, received_ns, state_json, state_hash)"
    " VALUES (?, ?, ?, ?, ?) ON CONFLICT (session_id, side) DO UPDATE SET"
    " received_ns = excluded.received_ns, state_json = excluded.state_json,"
    " state_hash = excluded.state_hash"
)

# ---------------------------------------------------------------- one per file
_writers: dict[tuple[int, str], tuple[RecordingWriter, int]] = {}


@contextlib.asynccontextmanager
async def open_writer(path: StoreRef, **options: Any) -> AsyncIterator[RecordingWriter]:
    """The process's writer for a store (file or database): shared in this event loop.

    The first user starts it; the last one out flushes and closes it.
    """
    locator = locate(path)
    # abspath only joins with the cwd: no I/O worth a thread here.
    where = locator.url if locator.url is not None else os.path.abspath(locator.file)  # noqa: ASYNC240
    key = (id(asyncio.get_running_loop()), where)
    if key in _writers:
        writer, users = _writers[key]
        _writers[key] = (writer, users + 1)
    else:
        writer = RecordingWriter(locator, **options)
        await writer.start()
        _writers[key] = (writer, 1)
    try:
        yield writer
    finally:
        writer, users = _writers[key]
        if users <= 1:
            del _writers[key]
            await writer.close()
        else:
            _writers[key] = (writer, users - 1)
