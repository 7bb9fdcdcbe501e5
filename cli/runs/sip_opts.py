"""``vae run``'s SIP options: credentials (never recorded) and the RTP timeout.

Why apart from ``run_cmd``: these only touch connectors of the SIP kinds. The
credentials travel in ``ConnectorConfig.secrets``, which the bridge keeps in
memory for the run and never records, logs or returns; the RTP timeout is a
connector option (``rtp_timeout_s``) and is recorded like the others.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from vae.bridge.v1 import bridge_pb2

SIP_KINDS = ("sip", "sip-inbound")


#: URL prefixes and the connector kind each implies (first match wins; else pipecat).
KIND_PREFIXES = (
    ("twilio+", "twilio"),
    ("sip-inbound:", "sip-inbound"),
    ("sip:", "sip"),
    ("sips:", "sip"),
    ("livekit:", "livekit"),
    ("webrtc+", "webrtc"),
)


def kind_of(url: str) -> str:
    """The connector kind a URL implies."""
    return next((kind for prefix, kind in KIND_PREFIXES if url.startswith(prefix)), "pipecat")


def sip_options(command: Callable[..., Any]) -> Callable[..., Any]:
    for option in reversed(
        [
            click.option(
                "--sip-username",
                envvar="VAE_SIP_USERNAME",
                default="",
                help="SIP digest username for --agent-connector sip:... (env VAE_SIP_USERNAME).",
            ),
            click.option(
                "--sip-password",
                envvar="VAE_SIP_PASSWORD",
                default="",
                help="SIP digest password; never recorded, logged or shown (prefer the env"
                " VAE_SIP_PASSWORD: a command line is visible to other users).",
            ),
            click.option(
                "--sip-rtp-timeout",
                type=click.FloatRange(min=0.1, max=3600),
                default=None,
                help="Seconds without RTP from the SIP agent that end the session"
                " (sip_rtp_timeout) [30].",
            ),
        ]
    ):
        command = option(command)
    return command


def apply_sip(cfg: bridge_pb2.ConnectorConfig, opts: dict[str, Any]) -> None:
    """Put the SIP credentials and RTP timeout on a connector of a SIP kind."""
    if cfg.kind not in SIP_KINDS:
        return
    if opts.get("sip_username"):
        cfg.secrets["sip_username"] = str(opts["sip_username"])
        cfg.secrets["sip_password"] = str(opts.get("sip_password") or "")
    if opts.get("sip_rtp_timeout") is not None:
        options = json.loads(cfg.options_json or "{}")
        options.setdefault("rtp_timeout_s", float(opts["sip_rtp_timeout"]))
        cfg.options_json = json.dumps(options)


def sip_code(stop_detail: str) -> int | None:
    """The SIP status a stop detail names (``... SIP 486 Busy Here: ...``), else None."""
    found = re.search(r"\bSIP ([1-6]\d\d) ", stop_detail or "")
    return int(found.group(1)) if found else None
