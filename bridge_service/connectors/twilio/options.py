"""Options of the Twilio Media Streams connector (``ConnectorConfig.options``), validated.

Every key is optional; an unknown key or a wrong type fails the run before it
starts: StartRun answers ``INVALID_ARGUMENT`` naming the key
(:class:`ConnectorOptionsError`, raised by ``twilio.check_config``). The sids
default to values derived from the session id: stable per session id only
(a retried or replayed attempt is a new session, so it gets new sids).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from vae.bridge_service.connectors.base import ConnectorOptionsError
from vae.bridge_service.connectors.options import parse_dataclass


@dataclass(frozen=True)
class TwilioOptions:
    """``--connector-options`` of the twilio kind (all optional)."""

    account_sid: str = "ACvae0000000000000000000000000000"
    #: Default: ``CA`` + 32 hex digits derived from the session id (likewise ``MZ`` for streams).
    call_sid: str = ""
    stream_sid: str = ""
    #: HTTP(S) URL answering GET with the bot's final state as JSON.
    final_state_url: str = ""
    final_state_timeout_s: float = 5.0
    #: Length of each outgoing media message, ms (Twilio sends 20).
    media_ms: int = 20
    open_timeout_s: float = 10.0
    max_buffer_bytes: int = 1_000_000
    #: Agent audio queued ahead of playout beyond which more is dropped (and recorded), s.
    max_queue_s: float = 120.0


def parse_options(raw: dict[str, Any]) -> tuple[TwilioOptions, dict[str, str]]:
    raw = dict(raw)
    custom = raw.pop("custom_parameters", {})
    if not isinstance(custom, dict):
        raise ConnectorOptionsError("twilio connector: custom_parameters must be a JSON object")
    options = parse_dataclass(TwilioOptions, raw, "twilio connector")
    if not 10 <= options.media_ms <= 100:
        raise ConnectorOptionsError("twilio connector: media_ms must be 10..100")
    return options, {str(k): str(v) for k, v in custom.items()}


def stream_sid(prefix: str, session_id: str) -> str:
    return prefix + hashlib.sha256(f"{prefix}:{session_id}".encode()).hexdigest()[:32]
