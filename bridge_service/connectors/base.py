"""The seam between a session and one bot: :class:`SideEndpoint`.

A session never sees gRPC, WebSockets or protobuf. It talks to each side
through one small interface, implemented by

- the gRPC stream adapter (``vae.bridge_service.edge.converse_endpoint``): a bot that
  dialled ``BridgeService.Converse`` and is waiting in the pairing pool;
- connectors: the run dials a bot that is not a gRPC client (a pipecat
  WebSocket bot, ``vae.bridge_service.connectors.pipecat.connector``; a phone agent speaking
  Twilio Media Streams, ``vae.bridge_service.connectors.twilio.connector``) once per
  session, through ``vae.bridge_service.connectors.pool`` (capacity per endpoint,
  pools of endpoints, bounded retries: written once for every kind).

Everything that crosses the seam is a plain dataclass, defined in
``vae.bridge_service.connectors.messages`` and importable from here (this module
is the seam's public surface: error types, messages, protocol, registry).
Direction bot -> bridge (what :meth:`SideEndpoint.receive` yields):
:class:`BotAudio`, :class:`BotEvent`, :class:`FinalStatePart`. Direction
bridge -> bot (what the session hands to :meth:`SideEndpoint.send`):
:class:`SessionStartInfo`, :class:`PeerAudio`, :class:`PeerEvent`,
:class:`StateSyncOut`, :class:`NoticeOut`, :class:`SessionEndingOut`,
:class:`SessionEndedOut`.

Writing a connector:

1. Subclass nothing; implement the :class:`SideEndpoint` protocol (a class
   with the attributes and async methods below).
2. Write a factory ``async def dial(config: ConnectorConfig, role: Side) ->
   SideEndpoint`` that connects (raise :class:`ConnectorError` with a clear
   message when the bot cannot be reached) and register it::

       register_connector("mykind", "mypackage.mymodule:dial")

   The target is imported lazily, the first time a run uses that kind, so a
   connector's optional dependencies cost nothing when it is unused. The
   built-in kinds are ``pipecat``, ``twilio``, ``sip`` (calling an agent),
   ``sip-inbound`` (taking an agent's call), ``livekit`` (an agent process
   per session), ``webrtc`` (pipecat's SmallWebRTC) and ``fake`` (for tests). Give
   ``check=`` a function ``(ConnectorConfig) -> None`` (or its
   ``"module:function"`` path) that raises :class:`ConnectorOptionsError` for
   wrong options or URLs: StartRun calls it (:func:`check_connector`), so a
   run with wrong options is refused (``INVALID_ARGUMENT``) before any session
   is attempted. ``dial`` raises :class:`ConnectorOptionsError` for the same
   (never retried) and :class:`ConnectorError` when the bot cannot be reached
   (retried by the pool).
3. ``receive`` yields the bot's audio (PCM16 LE mono at ``send_rate``), events
   (payloads follow the recorded-event convention in ``tests/factories.py``)
   and, after :class:`SessionEndingOut`, the final state. It returns when the
   bot leaves, and raises :class:`BotProtocolError` for input the bridge must
   refuse (the session ends with ``bot_error`` and the detail is recorded).
4. ``send`` must not block the session for long: audio frames
   (:class:`PeerAudio`) arrive every frame_ms; when the bot cannot keep up,
   drop audio and return False (the session records the drop), never control.
5. ``close`` is called exactly once per session, also after failures.
6. A connector that can carry text turns (``BotText``/``PeerText``) or follow
   the virtual clock (``ClockAck`` per step) says so: an endpoint attribute
   ``capabilities`` (:class:`Capabilities`), and ``capabilities=`` at
   registration, so StartRun refuses a text or virtual-clock run the kind
   cannot serve (:func:`connector_capabilities`) instead of falling back to
   audio or the real clock. Without it, a kind serves audio on the real clock.
"""

from __future__ import annotations

import importlib
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from vae.bridge_service.connectors.capabilities import (
    Capabilities,
    capabilities,
    connector_capabilities,
    declare_capabilities,
)
from vae.bridge_service.connectors.messages import (
    BotAudio,
    BotEvent,
    BotInfo,
    BotInput,
    BotText,
    BridgeOutput,
    ClockAck,
    ClockTickOut,
    DtmfOut,
    FinalStatePart,
    JsonPiece,
    NoticeOut,
    PeerAudio,
    PeerEvent,
    PeerText,
    RedirectOut,
    SessionEndedOut,
    SessionEndingOut,
    SessionStartInfo,
    StateSyncOut,
)
from vae.recordings.models import Side

__all__ = [
    "BotAudio",
    "BotEvent",
    "BotExited",
    "BotInfo",
    "BotInput",
    "BotLimitError",
    "BotProtocolError",
    "BotStartError",
    "BotText",
    "BridgeOutput",
    "CallRefused",
    "Capabilities",
    "Check",
    "ClockAck",
    "ClockTickOut",
    "ConnectorConfig",
    "ConnectorError",
    "ConnectorOptionsError",
    "Dial",
    "DialFor",
    "DtmfOut",
    "FinalStatePart",
    "JsonPiece",
    "NoticeOut",
    "PeerAudio",
    "PeerEvent",
    "PeerText",
    "RedirectOut",
    "SessionEndedOut",
    "SessionEndingOut",
    "SessionStartInfo",
    "SideEndpoint",
    "StateSyncOut",
    "capabilities",
    "check_connector",
    "connector_capabilities",
    "connector_kinds",
    "default_capacity",
    "dial",
    "register_connector",
    "resolve_connector",
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


@dataclass(frozen=True, slots=True)
class DialFor:
    """The session a dial is for (SIP puts it in headers; an inbound call is matched by it)."""

    run_id: str
    session_id: str
    scenario_name: str
    attempt: int = 1
    #: The session's W3C ``traceparent`` (SIP sends it as a header, LiveKit in the
    #: agent's environment: docs/traces.md).
    traceparent: str = ""


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


# ---------------------------------------------------------------- registry
@dataclass(frozen=True, slots=True)
class ConnectorConfig:
    """How a run reaches a bot that is not a gRPC client."""

    kind: str
    url: str = ""
    options: dict[str, Any] = field(default_factory=dict)
    #: More endpoints of the same bot; with ``url`` they form the run's pool.
    pool_urls: list[str] = field(default_factory=list)
    #: Sessions one endpoint holds at once.
    capacity: int = 1
    #: Seconds a refused or dropped connection is retried (see ``pool``).
    connect_timeout_s: float = 30.0
    #: Values the connector needs and vae never records, logs or returns (a SIP
    #: password): kept in memory for the run only (``RunSettings.to_dict`` drops them).
    secrets: dict[str, str] = field(default_factory=dict, repr=False, compare=False)
    #: Set on the copy handed to each dial (never recorded): the session it is for.
    session: DialFor | None = field(default=None, compare=False)

    @property
    def urls(self) -> list[str]:
        return [self.url, *(u for u in self.pool_urls if u != self.url)]


Dial = Callable[[ConnectorConfig, Side], Awaitable[SideEndpoint]]
#: Raises :class:`ConnectorOptionsError` when a config could never be dialled.
Check = Callable[[ConnectorConfig], None]

_registry: dict[str, str | Dial] = {
    "pipecat": "vae.bridge_service.connectors.pipecat.connector:dial",
    "fake": "vae.bridge_service.connectors.fake:dial",
    "twilio": "vae.bridge_service.connectors.twilio.connector:dial",
    # SIP's control messages (INFO packages) are protobuf JSON: the edge converts them.
    "sip": "vae.bridge_service.edge.sip_wire:dial",
    "sip-inbound": "vae.bridge_service.edge.sip_wire:take_call",
    "livekit": "vae.bridge_service.connectors.livekit.dial:dial",
    "webrtc": "vae.bridge_service.connectors.webrtc.connector:dial",
}
_checks: dict[str, str | Check] = {
    "pipecat": "vae.bridge_service.connectors.pipecat.connector:check_config",
    "twilio": "vae.bridge_service.connectors.twilio.connector:check_config",
    "sip": "vae.bridge_service.connectors.sip.outbound:check_config",
    "sip-inbound": "vae.bridge_service.connectors.sip.inbound:check_config",
    "livekit": "vae.bridge_service.connectors.livekit.dial:check_config",
    "webrtc": "vae.bridge_service.connectors.webrtc.connector:check_config",
}
#: Sessions one endpoint holds at once when the run does not say. A livekit
#: "endpoint" is an agent file started once per session: the run's concurrency
#: bounds it (``--connector-capacity`` caps the processes).
_capacities: dict[str, int] = {"livekit": 1 << 20}


def default_capacity(kind: str) -> int:
    """``ConnectorConfig.capacity`` of ``kind`` when the run gives none (1 for most)."""
    return _capacities.get(kind, 1)


def register_connector(
    kind: str,
    target: str | Dial,
    check: str | Check | None = None,
    capabilities: Capabilities | None = None,
    why_not: str = "",
) -> None:
    """Register a connector kind: a ``"module:function"`` path or the factory itself.

    ``check`` validates a config of this kind at StartRun (see :func:`check_connector`);
    ``capabilities`` says whether it can carry text or follow the virtual clock
    (default: neither), ``why_not`` why it cannot (shown in StartRun's refusal).
    """
    _registry[kind] = target
    if check is None:
        _checks.pop(kind, None)
    else:
        _checks[kind] = check
    declare_capabilities(kind, capabilities or Capabilities(), why_not)


def connector_kinds() -> list[str]:
    return sorted(_registry)


#: The extra that brings a kind's optional dependencies (named when they are missing).
_EXTRAS = {"livekit": "livekit", "webrtc": "webrtc"}


def _load(kind: str, target: str) -> Any:
    module_name, _, attr = target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        extra = _EXTRAS.get(kind)
        hint = f" (pip install 'vae[{extra}]')" if extra else ""
        raise ConnectorError(f"connector {kind!r} is not available: {exc}{hint}") from exc
    loaded = getattr(module, attr, None)
    if loaded is None:
        raise ConnectorError(f"connector {kind!r}: {target} does not exist")
    return loaded


def resolve_connector(kind: str) -> Dial:
    """The dial function of ``kind``, importing it on first use."""
    target = _registry.get(kind)
    if target is None:
        raise ConnectorError(f"unknown connector kind {kind!r} (known: {connector_kinds()})")
    if isinstance(target, str):
        dial: Dial = _load(kind, target)
        _registry[kind] = dial
        return dial
    return target


def check_connector(config: ConnectorConfig) -> None:
    """Raise :class:`ConnectorError` when no session could ever dial ``config``.

    An unknown or unavailable kind, or (through the kind's ``check``) wrong
    options or URLs. StartRun calls this, so such a run is refused at once
    instead of failing every attempt with ``connector_failed``.
    """
    resolve_connector(config.kind)
    check = _checks.get(config.kind)
    if isinstance(check, str):
        check = _checks[config.kind] = _load(config.kind, check)
    if check is not None:
        check(config)


async def dial(config: ConnectorConfig, role: Side) -> SideEndpoint:
    """Connect to the bot of ``role`` described by ``config``."""
    return await resolve_connector(config.kind)(config, role)
