"""A scoring's reader connections are closed only once no thread uses them.

A failing session cancels its siblings: their coroutines stop awaiting, but
the threads reading the store run on. Closing an SQLite connection under a
running query crashed the whole process (a segfault in ``load_context``, seen
in a full test run). ``_Readers.close`` now waits for the running call.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from pathlib import Path

from vae.recordings.write.writer import open_writer
from vae.scorer_service.scoring.session_work import _Readers


async def test_closing_waits_for_the_call_a_cancelled_scoring_left_running(
    tmp_path: Path,
) -> None:
    db = tmp_path / "vae.db"
    async with open_writer(db):
        pass  # an empty store, schema and all
    readers = _Readers()
    reader = await readers.open(str(db))
    started, release = threading.Event(), threading.Event()
    seen: list[object] = []

    def slow_query() -> None:
        started.set()
        release.wait(10)
        seen.append(reader.list_runs())  # the connection, after the close was asked

    call = asyncio.create_task(readers.call(reader, slow_query))
    assert await asyncio.to_thread(started.wait, 10)
    call.cancel()  # as a TaskGroup cancels a sibling: the thread goes on
    with contextlib.suppress(asyncio.CancelledError):
        await call

    closer = threading.Thread(target=readers.close)
    closer.start()
    closer.join(timeout=0.5)
    assert closer.is_alive(), "the connection was closed while a query was running on it"
    release.set()
    closer.join(timeout=10)
    assert not closer.is_alive()
    assert seen == [[]], "the running query completed on an open connection"
