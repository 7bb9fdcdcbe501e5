"""Options of the SIP connectors (``--connector-options`` JSON), validated before the run.

Every key is optional. ``headers`` adds SIP headers to the INVITE beside
``X-Vae-Run``, ``X-Vae-Session`` and ``X-Vae-Scenario`` (names must be
header tokens, values one line). Credentials are no option: they come from
``ConnectorConfig.secrets`` (``vae run --sip-username/--sip-password``),
which vae never records.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from vae.bridge_service.connectors.base import ConnectorConfig, ConnectorOptionsError
from vae.bridge_service.connectors.options import parse_dataclass
from vae.sip.digest import Credentials

_TOKEN = re.compile(r"^[A-Za-z0-9!%*_+`'~.-]+$")
_RESERVED = {"via", "from", "to", "call-id", "cseq", "contact", "max-forwards",
             "content-length", "content-type", "authorization", "proxy-authorization",
             "route", "record-route", "recv-info"}  # fmt: skip


@dataclass(frozen=True)
class SipOptions:
    #: Seconds the call may ring before it is cancelled (``sip_no_answer``).
    ring_timeout_s: float = 30.0
    #: Seconds without RTP from the far end that end the session (``sip_rtp_timeout``).
    rtp_timeout_s: float = 30.0
    #: Receive jitter buffer, ms.
    jitter_ms: int = 60
    #: Address to bind and advertise (default: the one the system routes to the target).
    local_host: str = ""
    #: RTP packets a second beyond which the excess is dropped; 2 s of it ends the call.
    max_rtp_packets_per_s: int = 250
    #: Inbound: seconds a session waits for the agent's call (then ``peer_never_joined``).
    wait_s: float = 60.0


def parse_options(raw: dict[str, Any]) -> tuple[SipOptions, list[tuple[str, str]]]:
    raw = dict(raw)
    headers = raw.pop("headers", {})
    if not isinstance(headers, dict):
        raise ConnectorOptionsError("sip connector: headers must be a JSON object")
    options = parse_dataclass(SipOptions, raw, "sip connector")
    checks = [
        (options.ring_timeout_s > 0, "ring_timeout_s must be positive"),
        (0 < options.rtp_timeout_s <= 3600, "rtp_timeout_s must be 0..3600 s"),
        (0 <= options.jitter_ms <= 1000, "jitter_ms must be 0..1000"),
        (options.max_rtp_packets_per_s >= 60, "max_rtp_packets_per_s must be at least 60"),
        (options.wait_s > 0, "wait_s must be positive"),
    ]
    for ok, problem in checks:
        if not ok:
            raise ConnectorOptionsError(f"sip connector: {problem}")
    out = []
    for name, value in headers.items():
        if not _TOKEN.match(str(name)) or str(name).lower() in _RESERVED:
            raise ConnectorOptionsError(f"sip connector: header name {name!r} is not allowed")
        text = str(value)
        if any(c in text for c in "\r\n\0"):
            raise ConnectorOptionsError(f"sip connector: header {name}: one line only")
        out.append((str(name), text))
    return options, out


def credentials(config: ConnectorConfig) -> Credentials | None:
    """The digest credentials of the run (never recorded), or None."""
    user = config.secrets.get("sip_username", "")
    if not user:
        return None
    return Credentials(user, config.secrets.get("sip_password", ""))


def header_value(text: str) -> str:
    """``text`` safe as one header value (scenario names come from files: hostile)."""
    return re.sub(r"[\x00-\x1f\x7f]+", " ", text).strip()[:256]
