"""The ticket desk's rules, one by one (no processes: the desk is plain asyncio).

Which Join is admitted, with which refusal (forged vs spent), when a session
has both its bots, and what happens to tickets and waiting bots when the
session stops waiting. The same rules are exercised end to end, with real
workers, in ``test_tickets``.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from vae.bridge_service.runs.pairing import PairingTimeout, TicketRefused, Waiting
from vae.bridge_service.workers.tickets import LeftEarly, TicketDesk
from vae.recordings.models import Side


class Endpoint:
    def __init__(self, role: Side) -> None:
        self.role = role


def waiting(role: Side, ticket: str) -> Waiting:
    endpoint: Any = Endpoint(role)
    return Waiting(endpoint, ticket=ticket)


def refused(desk: TicketDesk, ticket: str, role: Side) -> TicketRefused:
    with pytest.raises(TicketRefused) as caught:
        desk.admit(ticket, role)
    return caught.value


async def test_both_bots_arrive_and_the_session_takes_them() -> None:
    desk = TicketDesk("worker 1", "10.0.0.5:50051")
    arrival = desk.open("s1", {Side.USER: "tu", Side.AGENT: "ta"})
    claim = asyncio.create_task(desk.claim(arrival, 5))
    user, agent = waiting(Side.USER, "tu"), waiting(Side.AGENT, "ta")
    for entry in (user, agent):
        desk.admit(entry.ticket, entry.endpoint.role)
        await desk.add(entry)
    taken = await asyncio.wait_for(claim, 5)
    assert taken == {Side.USER: user.endpoint, Side.AGENT: agent.endpoint}
    assert user.assigned.is_set() and agent.assigned.is_set()
    assert desk.waiting() == 0
    desk.close(arrival, "the session stopped waiting")
    again = refused(desk, "tu", Side.USER)
    assert not again.forged and "already used" in str(again)


async def test_refusals_say_forged_or_spent_and_where_to_go() -> None:
    desk = TicketDesk("worker 2", "10.0.0.5:50051")
    desk.open("s1", {Side.USER: "tu", Side.AGENT: "ta"})
    none = refused(desk, "", Side.USER)
    assert not none.forged and "join 10.0.0.5:50051" in str(none)
    forged = refused(desk, "nope", Side.USER)
    assert forged.forged and "unknown to worker 2" in str(forged)
    wrong = refused(desk, "tu", Side.AGENT)
    assert wrong.forged and "issued for the user bot" in str(wrong)
    desk.admit("tu", Side.USER)
    twice = refused(desk, "tu", Side.USER)
    assert not twice.forged and "already used" in str(twice)


async def test_a_bot_that_never_arrives_times_the_session_out_and_frees_the_other() -> None:
    desk = TicketDesk("worker 1", "f:1")
    arrival = desk.open("s1", {Side.USER: "tu", Side.AGENT: "ta"})
    user = waiting(Side.USER, "tu")
    desk.admit("tu", Side.USER)
    await desk.add(user)
    assert desk.waiting(Side.USER) == 1
    with pytest.raises(PairingTimeout) as timed_out:
        await desk.claim(arrival, 0.2)
    assert "no agent bot joined within 0.2 s" in str(timed_out.value)
    desk.close(arrival, "the session stopped waiting for this bot")
    assert user.released.is_set() and not user.assigned.is_set()
    late = refused(desk, "ta", Side.AGENT)
    assert not late.forged and "stopped waiting" in str(late)
    desk.close(arrival, "again")  # idempotent: the reasons stay
    assert "stopped waiting" in str(refused(desk, "ta", Side.AGENT))


async def test_a_bot_that_leaves_before_its_peer_ends_the_wait_at_once() -> None:
    desk = TicketDesk("worker 1", "f:1")
    arrival = desk.open("s1", {Side.USER: "tu", Side.AGENT: "ta"})
    claim = asyncio.create_task(desk.claim(arrival, 30))
    user = waiting(Side.USER, "tu")
    desk.admit("tu", Side.USER)
    await desk.add(user)
    await desk.remove(user)
    with pytest.raises(LeftEarly) as left:
        await asyncio.wait_for(claim, 5)
    assert "the user bot arrived at worker 1 and left" in str(left.value)


async def test_a_stream_that_joins_after_its_session_gave_up_is_let_go() -> None:
    desk = TicketDesk("worker 1", "f:1")
    arrival = desk.open("s1", {Side.USER: "tu", Side.AGENT: "ta"})
    desk.admit("tu", Side.USER)  # admitted, then the session gives up before it is added
    desk.close(arrival, "the session stopped waiting for this bot")
    late = waiting(Side.USER, "tu")
    await desk.add(late)
    assert late.released.is_set()
