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
``vae.bridge_service.connectors.messages`` and importable from here. This
module is the seam's public surface and the guide to it (connectors and the
session import from here): the protocol and its errors live in
:mod:`.endpoint`, the kinds in :mod:`.registry`, what a kind can follow in
:mod:`.capabilities`.
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

from vae.bridge_service.connectors.capabilities import (
    Capabilities,
    capabilities,
    connector_capabilities,
)
from vae.bridge_service.connectors.endpoint import (
    BotExited,
    BotLimitError,
    BotProtocolError,
    BotStartError,
    CallRefused,
    ConnectorError,
    ConnectorOptionsError,
    SideEndpoint,
    opened,
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
from vae.bridge_service.connectors.registry import (
    Check,
    ConnectorConfig,
    Dial,
    DialFor,
    check_connector,
    connector_kinds,
    default_capacity,
    dial,
    register_connector,
    resolve_connector,
)

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
    "opened",
    "register_connector",
    "resolve_connector",
]
