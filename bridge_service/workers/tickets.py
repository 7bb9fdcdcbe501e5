"""A worker's ticket desk: the redirected bots of each session, admitted by ticket.

Why not the pairing pool: at a worker nothing is paired by role and run —
the front door already paired the two bots and gave each a one-time ticket
for one session. The desk is the worker's waiting room
(:class:`~vae.bridge_service.runs.pairing.WaitingRoom`, so the Converse handler is the
same code as the front door's):

- :meth:`TicketDesk.open` registers a session's tickets (before the front
  door redirects the bots); :meth:`admit` checks a Join's ticket: a ticket
  never issued is *forged* (PERMISSION_DENIED), one already used or whose
  session stopped waiting is spent (FAILED_PRECONDITION: join the public
  address again), and a Join with none is sent back to the front door;
- :meth:`claim` waits for both bots of a session, for the run's pairing
  timeout; a bot that never arrives, or leaves before its peer came, raises
  :class:`PairingTimeout` and the attempt is recorded ``peer_never_joined``;
- :meth:`close` expires the session's unused tickets and lets any bot still
  waiting go (it gets ``WaitTimeout`` and rejoins the front door).
"""

from __future__ import annotations

import asyncio
import collections
from dataclasses import dataclass, field

from vae.bridge_service.connectors.base import SideEndpoint
from vae.bridge_service.runs.pairing import PairingTimeout, TicketRefused, Waiting
from vae.recordings.models import Side

#: Spent tickets remembered, so a reused one is told so rather than called forged.
_REMEMBER = 4096


@dataclass(eq=False)
class Arrival:
    """One session's bots, expected at this worker."""

    session_id: str
    tickets: dict[Side, str]
    arrived: dict[Side, Waiting] = field(default_factory=dict)
    changed: asyncio.Event = field(default_factory=asyncio.Event)


class TicketDesk:
    def __init__(self, label: str, front_door: str) -> None:
        self.label = label
        self.front_door = front_door
        self._pending: dict[str, tuple[Arrival, Side]] = {}
        self._taken: set[str] = set()
        self._spent: collections.OrderedDict[str, str] = collections.OrderedDict()

    # ------------------------------------------------------------ the worker's side
    def open(self, session_id: str, tickets: dict[Side, str]) -> Arrival:
        arrival = Arrival(session_id, dict(tickets))
        for side, ticket in tickets.items():
            self._pending[ticket] = (arrival, side)
        return arrival

    async def claim(self, arrival: Arrival, timeout_s: float) -> dict[Side, SideEndpoint]:
        """Both bots of ``arrival`` once they are there; PairingTimeout naming who is not."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        while True:
            gone = [side for side, w in arrival.arrived.items() if w.left]
            if gone:
                raise LeftEarly(gone, self.label)
            if all(side in arrival.arrived for side in arrival.tickets):
                taken: dict[Side, SideEndpoint] = {}
                for side, entry in arrival.arrived.items():
                    entry.assigned.set()
                    taken[side] = entry.endpoint
                return taken
            remaining = deadline - loop.time()
            if remaining <= 0:
                missing = [side for side in arrival.tickets if side not in arrival.arrived]
                raise PairingTimeout(missing, timeout_s)
            arrival.changed.clear()
            try:
                await asyncio.wait_for(arrival.changed.wait(), remaining)
            except TimeoutError:
                continue

    def close(self, arrival: Arrival, why: str) -> None:
        """The session stopped waiting: spend its tickets, let go of bots still waiting."""
        for ticket in arrival.tickets.values():
            if self._pending.pop(ticket, None) is None:
                continue  # closed already
            if ticket in self._taken:
                self._taken.discard(ticket)
                self._spend(ticket, "already used by another stream")
            else:
                self._spend(ticket, why)
        for entry in arrival.arrived.values():
            if not entry.assigned.is_set():
                entry.released.set()

    # ------------------------------------------------------------ WaitingRoom
    def admit(self, ticket: str, role: Side) -> None:
        if not ticket:
            raise TicketRefused(
                f"this is {self.label} of the bridge at {self.front_door}: join "
                f"{self.front_door} (a worker takes only bots redirected to it, with their ticket)"
            )
        pending = self._pending.get(ticket)
        if pending is not None:
            _arrival, side = pending
            if side is not role:
                raise TicketRefused(
                    f"join.ticket: issued for the {side} bot, not the {role} bot", forged=True
                )
            if ticket in self._taken:
                raise TicketRefused(
                    f"join.ticket: already used by another stream; join {self.front_door} again"
                )
            self._taken.add(ticket)
            return
        why = self._spent.get(ticket)
        if why is not None:
            raise TicketRefused(f"join.ticket: {why}; join {self.front_door} again")
        raise TicketRefused(
            f"join.ticket: unknown to {self.label} (not issued by the bridge at {self.front_door})",
            forged=True,
        )

    def waiting(self, role: Side | None = None) -> int:
        arrivals = {id(a): a for a, _side in self._pending.values()}.values()
        return sum(
            1
            for arrival in arrivals
            for side, w in arrival.arrived.items()
            if not w.left and not w.assigned.is_set() and (role is None or side is role)
        )

    async def add(self, entry: Waiting) -> None:
        pending = self._pending.get(entry.ticket)
        if pending is None:  # the session gave up between the Join and now
            entry.released.set()
            return
        arrival, side = pending
        arrival.arrived[side] = entry
        arrival.changed.set()

    async def remove(self, entry: Waiting) -> None:
        entry.left = True
        pending = self._pending.get(entry.ticket)
        if pending is not None:
            pending[0].changed.set()

    def _spend(self, ticket: str, why: str) -> None:
        self._spent[ticket] = why
        while len(self._spent) > _REMEMBER:
            self._spent.popitem(last=False)


class LeftEarly(PairingTimeout):
    """A redirected bot arrived and left before its peer did: the session cannot start."""

    def __init__(self, sides: list[Side], label: str) -> None:
        super().__init__(sides, 0)
        roles = " and ".join(str(s) for s in sides)
        self.args = (f"the {roles} bot arrived at {label} and left before the session started",)
