"""Storing a bot's final state without touching the event loop that drives the audio clocks.

Parsing, hashing and canonicalising a 64 MB JSON document takes the best part
of a second of CPU, and ``json`` holds the GIL throughout, so a thread would
stall every session as surely as the loop itself. A large final state is
therefore handed to a worker *process*: it reads the spooled document,
parses and hashes it, and writes the ``final_states`` row into the store
itself (the database arbitrates between processes; the bridge's own writer
waits, never on the loop). Only the hash and any problems travel back.

Small final states (the usual case) are parsed in place and queued on the
bridge's writer as before; a worker costs a process start the first time.
"""

from __future__ import annotations

import asyncio
import gc
import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor

from vae.bridge_service.session.final_state import (
    FinalStateCollector,
    FinalStateResult,
    Source,
    parse_documents,
)
from vae.recordings.backends.connection import commit_once
from vae.recordings.models import FinalStateRecord, Side
from vae.recordings.write.row_text import dumps
from vae.recordings.write.writer import FINAL_STATE_SQL, RecordingWriter

_pool: ProcessPoolExecutor | None = None


def _executor() -> ProcessPoolExecutor:
    """One small pool per process; spawned (never forked: gRPC's threads forbid it)."""
    global _pool
    if _pool is None:
        _pool = ProcessPoolExecutor(
            max_workers=2,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_lower_priority,
        )
    return _pool


def _lower_priority() -> None:
    """The worker's seconds of parsing must not take CPU from the sessions' clocks.

    Its documents are trees without cycles: the cyclic GC would only rescan them.
    """
    os.nice(10)
    gc.disable()


async def store_final_state(
    collector: FinalStateCollector,
    writer: RecordingWriter,
    *,
    session_id: str,
    side: Side,
    received_ns: int,
    order_independent: list[str],
) -> list[str]:
    """Parse, hash and store one side's final state; return the problems found."""
    try:
        if collector.empty:
            return []
        private = writer.privacy is not None and writer.privacy.covers(session_id)
        if private and collector.large:
            # A redacted run's state is redacted by the writer, which a worker process
            # writing the row itself would bypass: parsed here, off the loop.
            got = await asyncio.to_thread(collector.result, order_independent)
            if got.state is not None or got.context is not None:
                await writer.put_final_state(_record(got, session_id, side, received_ns))
            return got.problems
        if not collector.large:
            got = collector.result(order_independent)
            if got.state is not None or got.context is not None:  # nothing valid: no row
                await writer.put_final_state(_record(got, session_id, side, received_ns))
            return got.problems
        # The sessions row must be committed before the worker's row refers to it.
        await writer.flush()
        state, context = collector.sources()
        # Submitting may spawn the worker (tens of ms): do that off the loop too.
        future = await asyncio.to_thread(
            _executor().submit,
            store_in_worker,
            str(writer.locator),
            (session_id, str(side), received_ns),
            state,
            context,
            order_independent,
        )
        return await asyncio.wrap_future(future)
    finally:
        collector.discard()


def _record(
    got: FinalStateResult, session_id: str, side: Side, received_ns: int
) -> FinalStateRecord:
    return FinalStateRecord(
        session_id=session_id,
        side=side,
        received_ns=received_ns,
        state=got.state,
        state_hash=got.state_hash,
        context=got.context,
    )


def store_in_worker(
    store: str,
    key: tuple[str, str, int],
    state: Source,
    context: Source,
    order_independent: list[str],
) -> list[str]:
    """In the worker process: parse, hash and write the row; return the problems."""
    got = parse_documents(state, context, order_independent)
    session_id, side, received_ns = key
    row = (
        session_id,
        side,
        received_ns,
        None if got.state is None else dumps(got.state),
        got.state_hash,
        None if got.context is None else dumps(got.context),
    )
    problems = got.problems
    if got.state is None and got.context is None:  # nothing valid: no row
        return problems
    del got
    commit_once(store, [(FINAL_STATE_SQL, row)])
    return problems
