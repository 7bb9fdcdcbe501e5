"""The shared queue of attempts (``vae.recordings.write.session_jobs``) on both back ends.

Bridges in separate processes are played here by writers of their own on
the same store (on PostgreSQL, real concurrent connections; on SQLite the
write lock serialises them): every job is claimed exactly once, a claimed job
cannot be withdrawn or claimed again, only the claimer's finish counts once
its owner gave the job up, an owner's end request reaches only the claimer,
and the beat forgets a dead bridge and the jobs nobody serves.
"""

from __future__ import annotations

import asyncio
from contextlib import AsyncExitStack

from vae.recordings.backends.locator import Locator
from vae.recordings.write import session_jobs as jobs
from vae.recordings.write.session_jobs import CLAIMED, DONE, QUEUED, SessionJob
from vae.recordings.write.writer import RecordingWriter, open_writer


def job(n: int, owner: str = "owner") -> SessionJob:
    plan = {"scenario": {"name": f"s{n}"}, "attempt": 1, "retry_reason": "", "settings": {}}
    return SessionJob(f"run_s{n}_a1", "run", owner, plan, "audio", "real", 1_000 + n)


async def writers(stack: AsyncExitStack, store: Locator, n: int) -> list[RecordingWriter]:
    return [await stack.enter_async_context(open_writer(store)) for _ in range(n)]


async def test_racing_bridges_claim_every_job_exactly_once(store: Locator) -> None:
    async with AsyncExitStack() as stack:
        owner, a, b = await writers(stack, store, 3)
        await jobs.beat(owner, "owner", {}, [])
        for n in range(30):
            await jobs.enqueue(owner, job(n))

        async def drain(w: RecordingWriter, me: str) -> list[str]:
            got = []
            while (taken := await jobs.claim(w, me, {"address": me}, lambda j: True)) is not None:
                assert taken.state == CLAIMED and taken.claimed_by == me
                got.append(taken.session_id)
            return got

        got_a, got_b = await asyncio.gather(drain(a, "a"), drain(b, "b"))
        assert sorted(got_a + got_b) == sorted(job(n).session_id for n in range(30))
        assert not set(got_a) & set(got_b)
        beat = await jobs.beat(owner, "owner", {}, [])
        assert {v.claimed_by for v in beat.owned.values()} <= {"a", "b"}
        assert all(v.state == CLAIMED for v in beat.owned.values()) and beat.queued == 0


async def test_a_job_is_claimed_oldest_first_and_only_where_it_fits(store: Locator) -> None:
    async with AsyncExitStack() as stack:
        (w,) = await writers(stack, store, 1)
        await jobs.beat(w, "owner", {}, [])
        for n in (3, 1, 2):
            await jobs.enqueue(w, job(n))
        taken = await jobs.claim(w, "a", {}, lambda j: j.session_id != "run_s1_a1")
        assert taken is not None and taken.session_id == "run_s2_a1"
        assert taken.plan["scenario"] == {"name": "s2"}
        assert await jobs.claim(w, "a", {}, lambda j: False) is None
        # Not claimable by anyone else, not withdrawable; released, it is queued again.
        assert not await jobs.withdraw(w, taken.session_id)
        assert await jobs.release(w, taken.session_id, "a")
        assert (await jobs.beat(w, "owner", {}, [])).owned[taken.session_id].state == QUEUED
        assert await jobs.withdraw(w, taken.session_id)


async def test_a_lost_job_cannot_be_finished_by_its_late_claimer(store: Locator) -> None:
    async with AsyncExitStack() as stack:
        owner, a = await writers(stack, store, 2)
        await jobs.beat(owner, "owner", {}, [])
        await jobs.enqueue(owner, job(1))
        taken = await jobs.claim(a, "a", {"address": "a:1"}, lambda j: True)
        assert taken is not None
        assert not await jobs.mark_lost(owner, taken.session_id, "somebody-else")
        await jobs.ask_end(owner, taken.session_id, "cancelled", "run cancelled")
        assert (await jobs.beat(a, "a", {}, [])).end_asked == {
            taken.session_id: ("cancelled", "run cancelled")
        }
        assert (await jobs.beat(owner, "owner", {}, [])).end_asked == {}
        assert await jobs.mark_lost(owner, taken.session_id, "a")
        assert not await jobs.finish(a, taken.session_id, "a")  # the owner gave it up first
        await jobs.enqueue(owner, job(2))
        second = await jobs.claim(a, "a", {}, lambda j: True)
        assert second is not None and await jobs.finish(a, second.session_id, "a")
        owned = (await jobs.beat(owner, "owner", {}, [])).owned
        assert owned[second.session_id].state == DONE
        assert owned[second.session_id].bridge == {}


async def test_the_beat_forgets_the_dead_and_the_jobs_nobody_serves(store: Locator) -> None:
    async with AsyncExitStack() as stack:
        alive, dead, claimer = await writers(stack, store, 3)
        await jobs.beat(dead, "dead", {"address": "d"}, [])
        await jobs.beat(claimer, "c", {}, [])
        for n in range(3):
            await jobs.enqueue(dead, job(n, owner="dead"))
        served = await jobs.claim(claimer, "c", {}, lambda j: True)
        assert served is not None
        first = await jobs.beat(alive, "alive", {}, [])
        assert first.beats == {"dead": 1, "c": 1, "alive": 1} and first.queued == 2
        assert await jobs.owners_of(alive, "run") == {"dead": {"address": "d"}}
        assert await jobs.owners_of(alive, "another run") == {}
        second = await jobs.beat(alive, "alive", {}, ["dead"])
        assert set(second.beats) == {"c", "alive"}
        # Its queued jobs went with it; the one being served stays until it ends.
        assert second.queued == 0
        assert await jobs.finish(claimer, served.session_id, "c")
        await jobs.beat(alive, "alive", {}, [])
        assert (await jobs.beat(dead, "dead", {}, [])).owned == {}
        # A clean leave removes the row at once.
        await jobs.leave(claimer, "c")
        assert "c" not in (await jobs.beat(alive, "alive", {}, [])).beats
