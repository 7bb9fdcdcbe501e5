"""The connector kinds: which dial and check serve each, imported on first use.

A run names a kind (``pipecat``, ``twilio``, ``sip``, ...) in its
:class:`ConnectorConfig`; this module maps the kind to its ``dial`` and
``check`` functions as ``"module:function"`` paths and imports them the first
time a run uses the kind, so a connector's optional dependencies (its extra)
cost nothing when it is unused, and a missing one is named. It changes when a
kind is added or the way kinds are looked up does; what an endpoint is and
how it fails is :mod:`.endpoint`.
"""

from __future__ import annotations

import importlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from vae.bridge_service.connectors.capabilities import Capabilities, declare_capabilities
from vae.bridge_service.connectors.endpoint import ConnectorError, SideEndpoint
from vae.recordings.models import Side
from vae.tools.client import BackendAddresses

__all__ = [
    "Check",
    "ConnectorConfig",
    "Dial",
    "DialFor",
    "check_connector",
    "connector_kinds",
    "default_capacity",
    "dial",
    "register_connector",
    "resolve_connector",
]


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
    #: The session's tool backend, bound before the dial (LiveKit puts its
    #: ``http_url`` in the agent's environment as ``VAE_TOOLS_URL``, SIP in headers).
    tool_backend: BackendAddresses | None = None


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
