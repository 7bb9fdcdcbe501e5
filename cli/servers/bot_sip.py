"""``vae bot agent --sip-listen HOST:PORT``: the reference bot answering SIP calls.

Apart from ``bot_cmd`` so that the SIP stack (``vae[sip]``) is imported only
when asked for. Prints ``SIP <uri>`` on stdout once it takes calls (scripts
and tests wait for that line), then serves until SIGINT/SIGTERM or
``--sessions`` calls.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Callable
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from vae.bots.client import Brain
    from vae.bots.sound.speech import Synthesiser


def run_sip_bot(
    listen: str,
    role: str,
    make: Callable[[], Brain],
    synth: Synthesiser,
    sessions: int,
    name: str,
) -> int:
    from vae.sip import SipUnavailable, require

    try:
        require()
    except SipUnavailable as exc:
        raise click.UsageError(str(exc)) from exc
    host, sep, port = listen.rpartition(":")
    if not sep or not host or not port.isdigit() or int(port) > 65535:
        raise click.UsageError(f"--sip-listen {listen!r}: give HOST:PORT, e.g. 127.0.0.1:5080")
    return asyncio.run(_serve((host.strip("[]"), int(port)), role, make, synth, sessions, name))


async def _serve(
    listen: tuple[str, int],
    role: str,
    make: Callable[[], Brain],
    synth: Synthesiser,
    sessions: int,
    name: str,
) -> int:
    from vae.bots.sip.serve import serve_sip

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(sig, stop.set)

    def ready(uri: str) -> None:
        click.echo(f"SIP {uri}")
        click.echo(f"{role} bot: answering SIP calls at {uri}", err=True)

    try:
        outcomes = await serve_sip(listen, role, make, synth, stop, sessions=sessions, name=name,
                                   on_ready=ready)  # fmt: skip
    except OSError as exc:
        click.echo(f"error: cannot listen on {listen[0]}:{listen[1]}: {exc}", err=True)
        return 1
    click.echo(f"{role} bot: {len(outcomes)} SIP sessions played", err=True)
    return 0
