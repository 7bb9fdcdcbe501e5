"""The shared queue of attempts that several bridges on one store serve together.

Why in the store: bridges on different machines that share one PostgreSQL
database (``vae bridge serve --share-runs``) agree on who serves which
attempt only through the database. The run's own bridge (the *owner*)
enqueues each attempt as a ``session_jobs`` row; whichever bridge has a free
pair of bots claims it (``SELECT … FOR UPDATE SKIP LOCKED``, the dialect's
``lock_rows``: two claimers never take the same row and never wait for each
other), runs the session, records it as any bridge does, and marks the job
``done``; the owner reads the recorded result and removes the job.

Each bridge also beats: ``bridge_beats.beat`` is incremented every fraction
of a second (:func:`beat`). Another bridge judges a bridge dead when its beat
has not moved for a lease measured on its *own* clock (so machines' clocks
need not agree), or when its row is gone (it left cleanly). A job claimed by
a dead bridge is marked ``lost`` by its owner (:func:`mark_lost`), which ends
the attempt unfinished so it is retried elsewhere.

Every statement goes through the writer's :meth:`transaction`, so each step
is one short transaction, committed at once, in order with the process's
other writes (a claimer's session rows are committed before its ``done``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from vae.recordings.backends.writer_conn import Transaction
from vae.recordings.write.batch_writer import BatchWriter

QUEUED, CLAIMED, DONE, LOST = "queued", "claimed", "done", "lost"


@dataclass(frozen=True)
class SessionJob:
    """One attempt waiting for, or held by, a bridge."""

    session_id: str
    run_id: str
    #: The bridge id of the run's own bridge (it waits for the result).
    owner: str
    #: Everything a bridge needs to run the attempt (scenario, attempt, run options).
    plan: dict[str, Any]
    modality: str
    clock: str
    enqueued_ns: int
    state: str = QUEUED
    claimed_by: str = ""
    #: The claiming bridge's identity (``vae.bridge_service.identity``), as recorded.
    bridge: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class JobView:
    """A job as its owner sees it at one beat."""

    state: str
    claimed_by: str
    bridge: dict[str, Any]


@dataclass(frozen=True)
class Beat:
    """What one bridge learns at each beat."""

    #: bridge id -> its beat counter, for every bridge in the table.
    beats: dict[str, int]
    #: This bridge's jobs (as owner) by session id.
    owned: dict[str, JobView]
    #: Session id -> (stop reason, detail) the owner asked of a job this bridge holds.
    end_asked: dict[str, tuple[str, str]]
    #: Jobs waiting for any bridge.
    queued: int


_COLUMNS = "session_id, run_id, owner, plan_json, modality, clock, enqueued_ns"


async def enqueue(writer: BatchWriter, job: SessionJob) -> None:
    """Queue ``job`` (a stale row of the same attempt, left by a dead owner, is replaced)."""

    async def work(tx: Transaction) -> None:
        await tx.execute(
            f"INSERT INTO session_jobs ({_COLUMNS}, state) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
            " ON CONFLICT (session_id) DO UPDATE SET run_id = excluded.run_id,"
            " owner = excluded.owner, plan_json = excluded.plan_json,"
            " modality = excluded.modality, clock = excluded.clock,"
            " enqueued_ns = excluded.enqueued_ns, state = excluded.state, claimed_by = '',"
            " bridge_json = '', end_reason = '', end_detail = ''",
            (
                job.session_id,
                job.run_id,
                job.owner,
                json.dumps(job.plan),
                job.modality,
                job.clock,
                job.enqueued_ns,
                QUEUED,
            ),
        )

    await writer.transaction(work)


async def claim(
    writer: BatchWriter,
    me: str,
    bridge: dict[str, Any],
    fits: Callable[[SessionJob], bool],
    *,
    look_at: int = 32,
) -> SessionJob | None:
    """Claim the oldest queued job that ``fits`` (a free pair of bots here), or None."""

    async def work(tx: Transaction) -> SessionJob | None:
        rows = await tx.execute(
            f"SELECT {_COLUMNS} FROM session_jobs WHERE state = ?"
            f" ORDER BY enqueued_ns, session_id LIMIT ?{tx.dialect.lock_rows}",
            (QUEUED, look_at),
        )
        for row in rows:
            job = SessionJob(
                row[0], row[1], row[2], json.loads(row[3]), row[4], row[5], int(row[6])
            )
            if not fits(job):
                continue
            await tx.execute(
                "UPDATE session_jobs SET state = ?, claimed_by = ?, bridge_json = ?"
                " WHERE session_id = ?",
                (CLAIMED, me, json.dumps(bridge), job.session_id),
            )
            return SessionJob(
                job.session_id, job.run_id, job.owner, job.plan, job.modality, job.clock,
                job.enqueued_ns, CLAIMED, me, bridge,
            )  # fmt: skip
        return None

    return await writer.transaction(work)


async def _change(writer: BatchWriter, sql: str, params: tuple[Any, ...]) -> bool:
    """Run one conditional change; True when it changed a row."""

    async def work(tx: Transaction) -> bool:
        await tx.execute(sql, params)
        return tx.rowcount > 0

    return await writer.transaction(work)


async def release(writer: BatchWriter, session_id: str, me: str) -> bool:
    """Put a job this bridge claimed but could not serve back in the queue."""
    return await _change(
        writer,
        "UPDATE session_jobs SET state = ?, claimed_by = '', bridge_json = ''"
        " WHERE session_id = ? AND claimed_by = ? AND state = ?",
        (QUEUED, session_id, me, CLAIMED),
    )


async def finish(writer: BatchWriter, session_id: str, me: str) -> bool:
    """Mark a job this bridge served ``done`` (False: its owner gave it up as lost)."""
    return await _change(
        writer,
        "UPDATE session_jobs SET state = ? WHERE session_id = ? AND claimed_by = ? AND state = ?",
        (DONE, session_id, me, CLAIMED),
    )


async def withdraw(writer: BatchWriter, session_id: str) -> bool:
    """Take back a job nobody claimed yet (False: a bridge claimed it meanwhile)."""
    return await _change(
        writer,
        "DELETE FROM session_jobs WHERE session_id = ? AND state = ?",
        (session_id, QUEUED),
    )


async def mark_lost(writer: BatchWriter, session_id: str, claimer: str) -> bool:
    """Give up a job held by ``claimer`` (judged dead); False if it finished meanwhile."""
    return await _change(
        writer,
        "UPDATE session_jobs SET state = ? WHERE session_id = ? AND claimed_by = ? AND state = ?",
        (LOST, session_id, claimer, CLAIMED),
    )


async def ask_end(writer: BatchWriter, session_id: str, reason: str, detail: str) -> None:
    """Ask the bridge holding a job to end its session (a cancel, the owner's shutdown)."""
    await _change(
        writer,
        "UPDATE session_jobs SET end_reason = ?, end_detail = ?"
        " WHERE session_id = ? AND end_reason = ''",
        (reason, detail, session_id),
    )


async def forget(writer: BatchWriter, session_id: str) -> None:
    """Remove a job whose result the owner has."""
    await _change(writer, "DELETE FROM session_jobs WHERE session_id = ?", (session_id,))


async def beat(writer: BatchWriter, me: str, bridge: dict[str, Any], dead: list[str]) -> Beat:
    """Beat once, forget the bridges in ``dead``, and read what this bridge needs to know.

    A dead bridge's row goes, and with it every job of an owner that has no
    row and that nobody serves (a bridge judged dead wrongly — paused longer
    than the lease — comes back at its next beat and re-queues what it still
    waits for). A bridge beats once before it queues anything.
    """

    async def work(tx: Transaction) -> Beat:
        for other in dead:
            await tx.execute("DELETE FROM bridge_beats WHERE bridge_id = ?", (other,))
        await tx.execute(
            "INSERT INTO bridge_beats (bridge_id, bridge_json, beat) VALUES (?, ?, 1)"
            " ON CONFLICT (bridge_id) DO UPDATE SET beat = bridge_beats.beat + 1",
            (me, json.dumps(bridge)),
        )
        # Jobs whose owner is gone: nobody waits for them (one still served ends first).
        await tx.execute(
            "DELETE FROM session_jobs WHERE state != ?"
            " AND owner NOT IN (SELECT bridge_id FROM bridge_beats)",
            (CLAIMED,),
        )
        beats = {str(r[0]): int(r[1]) for r in await tx.execute(
            "SELECT bridge_id, beat FROM bridge_beats", ()
        )}  # fmt: skip
        owned = {
            str(r[0]): JobView(str(r[1]), str(r[2]), json.loads(r[3]) if r[3] else {})
            for r in await tx.execute(
                "SELECT session_id, state, claimed_by, bridge_json FROM session_jobs"
                " WHERE owner = ?",
                (me,),
            )
        }
        asked = {
            str(r[0]): (str(r[1]), str(r[2]))
            for r in await tx.execute(
                "SELECT session_id, end_reason, end_detail FROM session_jobs"
                " WHERE claimed_by = ? AND state = ? AND end_reason != ''",
                (me, CLAIMED),
            )
        }
        (queued,) = (await tx.execute("SELECT COUNT(*) FROM session_jobs WHERE state = ?",
                                      (QUEUED,)))[0]  # fmt: skip
        return Beat(beats, owned, asked, int(queued))

    return await writer.transaction(work)


async def owners_of(writer: BatchWriter, run_id: str) -> dict[str, dict[str, Any]]:
    """The bridges with attempts of ``run_id`` in the queue -> their identity (if beating)."""

    async def work(tx: Transaction) -> dict[str, dict[str, Any]]:
        owners = await tx.execute(
            "SELECT DISTINCT owner FROM session_jobs WHERE run_id = ?", (run_id,)
        )
        found: dict[str, dict[str, Any]] = {}
        for (owner,) in owners:
            rows = await tx.execute(
                "SELECT bridge_json FROM bridge_beats WHERE bridge_id = ?", (owner,)
            )
            found[str(owner)] = json.loads(rows[0][0]) if rows else {}
        return found

    return await writer.transaction(work)


async def leave(writer: BatchWriter, me: str) -> None:
    """A bridge stopping cleanly: its beat row and its jobs nobody serves go."""

    async def work(tx: Transaction) -> None:
        await tx.execute("DELETE FROM bridge_beats WHERE bridge_id = ?", (me,))
        await tx.execute("DELETE FROM session_jobs WHERE owner = ? AND state != ?", (me, CLAIMED))

    await writer.transaction(work)
