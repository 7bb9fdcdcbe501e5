"""One bot in one session, as the session sees it, and what its connector may raise.

:class:`SideEndpoint` is the whole seam between a session and a bot: a role,
who the bot is, two audio rates, ``receive``, ``send`` and ``close``. The
exceptions beside it are the ways reaching or hearing a bot can go wrong, and
each one means something to the caller: :class:`ConnectorError` is retried by
the pool, :class:`ConnectorOptionsError` (and :class:`BotStartError`) fails
the run at once, :class:`CallRefused` ends the attempt with its own stop
reason, :class:`BotProtocolError` and :class:`BotExited` end a session that
was running. They change together, with what a connector promises the
session; how kinds are registered and dialled is :mod:`.registry`, and the
guide to writing a connector is :mod:`.base`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable
from typing import Protocol, TypeVar

from vae.bridge_service.connectors.messages import BotInfo, BotInput, BridgeOutput
from vae.recordings.models import Side

__all__ = [
    "BotExited",
    "BotLimitError",
    "BotProtocolError",
    "BotStartError",
    "CallRefused",
    "ConnectorError",
    "ConnectorOptionsError",
    "SideEndpoint",
    "opened",
]


class BotProtocolError(Exception):
    """A bot sent something the bridge refuses; ``field`` names what was wrong."""

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(f"{field}: {problem}")
        self.field = field
        self.problem = problem


class BotLimitError(BotProtocolError):
    """A bot exceeded one of the bridge's limits (gRPC: ``RESOURCE_EXHAUSTED``).

    ``field`` names the limit's setting (e.g. ``max_events_per_s``).
    """


class ConnectorError(Exception):
    """A connector could not reach or configure its bot."""


class ConnectorOptionsError(ConnectorError):
    """The connector's options are wrong: retrying cannot help, the run fails at once."""


class CallRefused(ConnectorError):
    """The bot was reached and refused or never answered the call (a SIP final response).

    Not retried by the pool: the attempt ends at once with ``stop_reason`` (a
    :class:`~vae.bridge_service.config.StopReason` value) and this message as its detail.
    """

    def __init__(self, stop_reason: str, detail: str) -> None:
        super().__init__(detail)
        self.stop_reason = stop_reason


class BotStartError(ConnectorOptionsError):
    """A bot the connector starts itself (its own process) never came up.

    Not retried by the pool (the same program would fail the same way); the
    attempt is recorded with ``stop_reason`` and this message, which carries
    the tail of the process's stderr.
    """

    stop_reason = "agent_start_failed"

    def __init__(self, message: str, log_tail: str = "") -> None:
        super().__init__(f"{message}; stderr tail:\n{log_tail}" if log_tail else message)
        self.log_tail = log_tail


class BotExited(Exception):
    """Raised by ``receive``: the bot's own process ended the call (see ``stop_reason``).

    For connectors that run the bot as a process of their own: ``stop_reason``
    is a stop reason of ``vae.recordings.stop_reasons`` (``agent_crashed``,
    ``agent_silent``), ``detail`` says what happened, and ``log_tail`` (the
    tail of the process's stderr) is recorded with the session's
    ``session_error`` event.
    """

    def __init__(self, stop_reason: str, detail: str, log_tail: str = "") -> None:
        super().__init__(detail)
        self.stop_reason = stop_reason
        self.detail = detail
        self.log_tail = log_tail


class SideEndpoint(Protocol):
    """One bot taking part in one session, as the session sees it."""

    role: Side
    bot: BotInfo
    #: Rate of the PCM16 mono audio the bot sends, Hz.
    send_rate: int
    #: Rate the bot wants the peer's audio in, Hz.
    receive_rate: int

    def receive(self) -> AsyncIterator[BotInput]:
        """The bot's messages in order; ends when the bot leaves."""
        ...

    async def send(self, message: BridgeOutput) -> bool:
        """Deliver one message; False if it was dropped (audio to a slow reader)."""
        ...

    async def close(self, error: BotProtocolError | None = None) -> None:
        """End this side; with ``error`` the bot is told what it did wrong."""
        ...


E = TypeVar("E", bound=SideEndpoint)


async def opened(endpoint: E, opening: Awaitable[None]) -> E:
    """``endpoint`` once ``opening`` (its handshake) is done; closed again if that fails.

    For a dial: an endpoint whose handshake failed, timed out or was cancelled
    holds a connection that nothing else would close.
    """
    try:
        await opening
    except BaseException:
        await endpoint.close()
        raise
    return endpoint
