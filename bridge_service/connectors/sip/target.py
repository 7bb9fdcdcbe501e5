"""The URL of ``--agent-connector sip:USER@HOST[:PORT][;transport=udp|tcp]``, checked.

``sips:`` and ``transport=tls`` are refused with a clear error (vae's SIP
stack speaks UDP and TCP; see docs/interop.md, "Limits"). Credentials never
go in the URL: a ``user:password@`` form is refused so a password cannot end
up recorded as part of the run's options.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from dataclasses import dataclass

from vae.bridge_service.connectors.base import ConnectorOptionsError
from vae.sip.transport import Peer

_URL = re.compile(
    r"^sip:(?P<user>[^@;:\s]+)@(?P<host>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)"
    r"(?::(?P<port>\d{1,5}))?(?P<params>(?:;[A-Za-z0-9_.=-]+)*)$"
)


@dataclass(frozen=True)
class Target:
    uri: str
    user: str
    peer: Peer


def parse_target(url: str) -> Target:
    if url.startswith("sips:"):
        raise ConnectorOptionsError(
            f"sip connector: {url!r}: sips: (SIP over TLS) is not supported; use sip: with "
            "transport=udp or transport=tcp"
        )
    found = _URL.match(url)
    if found is None:
        if re.match(r"^sip:[^@]*:[^@]*@", url):
            raise ConnectorOptionsError(
                "sip connector: put no password in the URL; give --sip-username and "
                "--sip-password (or VAE_SIP_USERNAME / VAE_SIP_PASSWORD)"
            )
        raise ConnectorOptionsError(
            f"sip connector: {url!r} is not sip:USER@HOST[:PORT][;transport=udp|tcp]"
        )
    params = dict([*p.split("=", 1), ""][:2] for p in found.group("params").split(";") if p)
    transport = params.get("transport", "udp").lower()
    if transport not in ("udp", "tcp"):
        raise ConnectorOptionsError(
            f"sip connector: transport={transport} is not supported (udp or tcp)"
        )
    port = int(found.group("port") or 5060)
    if not 1 <= port <= 65535:
        raise ConnectorOptionsError(f"sip connector: port {port} out of range")
    host = found.group("host").strip("[]")
    return Target(url, found.group("user"), Peer(transport, host, port))


def resolve(target: Target) -> Target:
    """The target with its host as an IP address (looked up once, at dial time)."""
    try:
        ipaddress.ip_address(target.peer.host)
        return target
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(target.peer.host, target.peer.port, type=socket.SOCK_DGRAM)
    except OSError as exc:
        problem = f"sip connector: cannot resolve {target.peer.host}: {exc}"
        raise ConnectorOptionsError(problem) from exc
    address = str(infos[0][4][0])
    peer = Peer(target.peer.transport, address, target.peer.port)
    return Target(target.uri, target.user, peer)


def local_address_towards(host: str, port: int) -> str:
    """The address this machine sends from to reach ``host`` (loopback for a loopback target).

    A connected UDP socket asks the routing table; nothing is sent.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_DGRAM) as probe:
        probe.connect((host, port))
        return str(probe.getsockname()[0])
