"""Connectors: reach bots that are not gRPC clients (see ``base`` for the seam)."""

from vae.bridge_service.connectors.base import (
    BotProtocolError,
    ConnectorConfig,
    ConnectorError,
    ConnectorOptionsError,
    SideEndpoint,
    check_connector,
    dial,
    register_connector,
)

__all__ = [
    "BotProtocolError",
    "ConnectorConfig",
    "ConnectorError",
    "ConnectorOptionsError",
    "SideEndpoint",
    "check_connector",
    "dial",
    "register_connector",
]
