"""Starting and stopping the bridge's SIP listener, without importing SIP until asked.

Why apart from :mod:`.inbound`: the bridge server imports this module always,
and a bridge without ``--sip-listen`` must start without the ``sip`` extra;
so the listener (and ``vae.sip``, which needs ``sipmessage``) is imported
here only when one is started.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from vae.bridge_service.connectors.sip.inbound import InboundListener

__all__ = ["parse_listen", "start_listener", "stop_listener"]


def parse_listen(value: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[::1]:5060`` for IPv6); ValueError naming the problem."""
    host, sep, port = value.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"--sip-listen {value!r}: give HOST:PORT, e.g. 127.0.0.1:5060")
    return host.strip("[]"), int(port)


async def start_listener(value: str) -> InboundListener:
    from vae.bridge_service.connectors.sip.inbound import InboundListener, install
    from vae.sip import require

    require()
    host, port = parse_listen(value)
    listener = await InboundListener(host, port).start()
    install(listener)
    return listener


async def stop_listener(listener: InboundListener) -> None:
    from vae.bridge_service.connectors.sip.inbound import install

    install(None)
    await listener.close()
