"""Pairing waiting bots into sessions.

A bot's Converse stream, once joined, waits here as a :class:`Waiting` entry
until a session of a run it accepts (its ``run_filter``: empty for any run,
else that exact run id) needs its role. A session takes both roles at
once (:meth:`PairingPool.claim`), so it never holds one bot while waiting for
the other and starves another session. A stream that waits longer than the
bridge's wait timeout is told so (WaitTimeout) and released by its handler; a
bot that leaves while waiting is marked ``left`` and is never handed out.

A run in text or on the virtual clock takes only bots that declared they can
follow it at Join (``supports_text``, ``supports_virtual_clock``: the
endpoint's :class:`~vae.bridge_service.connectors.base.Capabilities`); the others
keep waiting for a run they can serve. When only such bots waited for a role
until the pairing timeout, :class:`PairingTimeout` names them (``unsupported``):
the attempt is recorded ``bot_unsupported``, never played on a clock or in a
modality its bot cannot follow.

A worker process of ``--workers N`` pairs by ticket instead
(``vae.bridge_service.workers.tickets``): both kinds of waiting room share the
:class:`WaitingRoom` interface the Converse handler uses, and
:meth:`PairingPool.admit` refuses a ticket, which only a worker can honour.
"""

from __future__ import annotations

import asyncio
import itertools
from dataclasses import dataclass, field
from typing import Protocol

from vae.bridge_service.connectors.base import SideEndpoint, capabilities
from vae.recordings.models import Side

_ids = itertools.count(1)


@dataclass(eq=False)
class Waiting:
    endpoint: SideEndpoint
    run_filter: str = ""
    stream_id: str = field(default_factory=lambda: f"s{next(_ids)}")
    left: bool = False
    assigned: asyncio.Event = field(default_factory=asyncio.Event)
    #: Join.ticket of a stream opened after a Redirect (only a worker takes one).
    ticket: str = ""
    #: Set when nothing will take this stream any more (a worker's session gave up on it).
    released: asyncio.Event = field(default_factory=asyncio.Event)

    def accepts(self, run_id: str) -> bool:
        # Exact: a prefix would let a bot meant for run X take sessions of run X-2.
        return not self.run_filter or run_id == self.run_filter


def describe_bots(entries: list[Waiting]) -> str:
    """``name version`` of each distinct bot, with its stream count."""
    counts: dict[str, int] = {}
    for entry in entries:
        bot = entry.endpoint.bot
        name = f"{bot.name or 'unnamed'} {bot.version}".strip()
        counts[name] = counts.get(name, 0) + 1
    return ", ".join(f"{n} ({c} streams)" if c > 1 else n for n, c in sorted(counts.items()))


class TicketRefused(Exception):
    """A Join's ticket cannot be honoured here.

    ``forged``: never issued (PERMISSION_DENIED); otherwise it is spent,
    expired or sent to the wrong place (FAILED_PRECONDITION: join the bridge's
    public address again).
    """

    def __init__(self, message: str, forged: bool = False) -> None:
        super().__init__(message)
        self.forged = forged


class WaitingRoom(Protocol):
    """Where joined streams wait for a session (the pairing pool, or a worker's ticket desk)."""

    def admit(self, ticket: str, role: Side) -> None:
        """Raise :class:`TicketRefused` when a Join with ``ticket`` cannot wait here."""
        ...

    def waiting(self, role: Side | None = None) -> int: ...

    async def add(self, entry: Waiting) -> None: ...

    async def remove(self, entry: Waiting) -> None: ...


class PairingTimeout(Exception):
    def __init__(
        self, missing: list[Side], waited_s: float, unsupported: dict[Side, str] | None = None
    ) -> None:
        #: Role -> why the bots of that role that did wait could not be taken.
        self.unsupported = unsupported or {}
        roles = " and ".join(str(m) for m in missing)
        message = f"no {roles} bot joined within {waited_s:g} s"
        if self.unsupported:
            message = "; ".join(
                f"no {role} bot that can follow this run joined within {waited_s:g} s"
                + (f" ({why})" if (why := self.unsupported.get(role)) else "")
                for role in missing
            )
        super().__init__(message)
        self.missing = missing


class PairingPool:
    def __init__(self) -> None:
        self._waiting: list[Waiting] = []
        self._changed = asyncio.Condition()

    def admit(self, ticket: str, role: Side) -> None:
        if ticket:
            raise TicketRefused(
                "join.ticket: this bridge issued no ticket (a ticket is only for the worker "
                "port a Redirect named); join without one"
            )

    async def add(self, entry: Waiting) -> None:
        async with self._changed:
            self._waiting.append(entry)
            self._changed.notify_all()

    async def remove(self, entry: Waiting) -> None:
        """Forget an entry (timed out or left); harmless if already taken."""
        entry.left = True
        async with self._changed:
            if entry in self._waiting:
                self._waiting.remove(entry)

    def waiting(self, role: Side | None = None) -> int:
        return sum(
            1 for w in self._waiting if not w.left and (role is None or w.endpoint.role is role)
        )

    async def until_waiting(self, role: Side, count: int) -> None:
        """Return once ``count`` bots of ``role`` wait here (the caller bounds the wait)."""
        async with self._changed:
            await self._changed.wait_for(lambda: self.waiting(role) >= count)

    def _find(self, role: Side, run_id: str, modality: str, clock: str) -> Waiting | None:
        for entry in self._waiting:
            if (
                not entry.left
                and entry.endpoint.role is role
                and entry.accepts(run_id)
                and not capabilities(entry.endpoint).lacks(modality, clock)
            ):
                return entry
        return None

    def unable(self, role: Side, run_id: str, modality: str, clock: str) -> str:
        """Why the bots of ``role`` waiting for ``run_id`` cannot take it ("": none such).

        Only when every such bot lacks what the run needs: names the bots and the
        Join fields they did not declare.
        """
        waiting = [
            w for w in self._waiting if not w.left and w.endpoint.role is role and w.accepts(run_id)
        ]
        lacking = [w for w in waiting if capabilities(w.endpoint).lacks(modality, clock)]
        if not waiting or len(lacking) < len(waiting):
            return ""
        fields = sorted(
            {f for w in lacking for f in capabilities(w.endpoint).lacks(modality, clock)}
        )
        return (
            f"the {role} bots waiting ({describe_bots(lacking)}) did not declare "
            + " and ".join(f"Join.{f}" for f in fields)
        )

    def can_pair(self, run_id: str, roles: list[Side], modality: str, clock: str) -> bool:
        """Whether a bot of each role that can take ``run_id`` waits here now."""
        return all(self._find(role, run_id, modality, clock) for role in roles)

    async def take_now(
        self, run_id: str, roles: list[Side], modality: str, clock: str
    ) -> dict[Side, SideEndpoint] | None:
        """:meth:`claim` without waiting: the bots, or None when a role has none free."""
        try:
            return await self.claim(run_id, roles, 0.0, modality=modality, clock=clock)
        except PairingTimeout:
            return None

    async def claim(
        self,
        run_id: str,
        roles: list[Side],
        timeout_s: float,
        *,
        modality: str = "audio",
        clock: str = "real",
    ) -> dict[Side, SideEndpoint]:
        """Take one waiting bot of each role for a session of ``run_id``, all or none.

        Only bots that can follow ``modality`` on ``clock`` are taken.
        """
        if not roles:
            return {}
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        async with self._changed:
            while True:
                # Drop entries whose stream went away without removing itself.
                self._waiting = [w for w in self._waiting if not w.left]
                found = {role: self._find(role, run_id, modality, clock) for role in roles}
                if all(found.values()):
                    taken: dict[Side, SideEndpoint] = {}
                    for role, entry in found.items():
                        assert entry is not None
                        self._waiting.remove(entry)
                        entry.assigned.set()
                        taken[role] = entry.endpoint
                    return taken
                remaining = deadline - loop.time()
                if remaining <= 0:
                    missing = [role for role, entry in found.items() if entry is None]
                    unsupported = {
                        role: why
                        for role in missing
                        if (why := self.unable(role, run_id, modality, clock))
                    }
                    raise PairingTimeout(missing, timeout_s, unsupported)
                try:
                    await asyncio.wait_for(self._changed.wait(), remaining)
                except TimeoutError:
                    continue
