"""Starting a LiveKit agent for one session: its console command, its connection, its options.

``dial`` listens on a free loopback port, starts the agent file in LiveKit's
console mode pointed at it (through :func:`.process.launcher`), and waits
for the agent to connect (``start_timeout_s``) and answer
``get_framework_info``; a process that exits or never connects is a
:class:`BotStartError` carrying the tail of its stderr, and is stopped. The
agent runs in its file's folder with ``VAE_SESSION_DIR`` set to a folder of
the session's own (see :mod:`.connector`), and ``VAE_TOOLS_URL`` set to the
session's tool backend when it has one (docs/contract.md).
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

from vae.bridge_service.connectors.base import (
    BotProtocolError,
    BotStartError,
    ConnectorConfig,
    ConnectorOptionsError,
)
from vae.bridge_service.connectors.livekit import wire
from vae.bridge_service.connectors.livekit.connector import LivekitEndpoint
from vae.bridge_service.connectors.livekit.folder import SessionFolder
from vae.bridge_service.connectors.livekit.options import LivekitOptions, parse_options
from vae.bridge_service.connectors.livekit.process import AgentProcess, launcher
from vae.bridge_service.connectors.trace_context import process_environment
from vae.recordings.models import Side
from vae.tools.client import agent_environment

__all__ = ["agent_path", "check_config", "dial"]


def agent_path(url: str) -> Path:
    """The agent file of a ``livekit:PATH`` URL (``PATH`` alone is accepted too)."""
    return Path(url.removeprefix("livekit:")).expanduser()


def check_config(config: ConnectorConfig) -> tuple[LivekitOptions, dict[str, str]]:
    """Options and environment of ``config``; :class:`ConnectorOptionsError` for wrong ones."""
    options, env = parse_options(config.options)
    wire.protocol()
    for url in config.urls:
        path = agent_path(url)
        if not url or not path.is_file():
            raise ConnectorOptionsError(
                f"livekit connector: no agent file at {url!r} (livekit:PATH/agent.py)"
            )
    return options, env


async def dial(config: ConnectorConfig, role: Side) -> LivekitEndpoint:
    """Start the agent of ``config.url`` in console mode and wait for it to connect."""
    options, extra_env = check_config(config)
    path = agent_path(config.url).resolve()
    folder = SessionFolder()
    connected: asyncio.Future[tuple[asyncio.StreamReader, asyncio.StreamWriter]]
    connected = asyncio.get_running_loop().create_future()

    async def accept(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if connected.done():
            writer.close()  # one agent, one connection
        else:
            connected.set_result((reader, writer))

    server = await asyncio.start_server(accept, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    argv = [*launcher(options.python), "-m", "livekit.agents", "console", str(path),
            "--connect-addr", f"127.0.0.1:{port}", *options.args]  # fmt: skip
    env = {**os.environ, **extra_env, "VAE_SESSION_DIR": str(folder.path), "PYTHONUNBUFFERED": "1"}
    if config.session is not None:  # the session's trace context (connectors/trace_context.py)
        env |= process_environment(config.session.session_id, config.session.traceparent)
        if config.session.tool_backend is not None:  # the session's tools: VAE_TOOLS_URL
            env |= agent_environment(config.session.tool_backend)
    process: AgentProcess | None = None
    try:
        try:
            process = await AgentProcess.start(argv, env, str(path.parent), options.log_lines)
        except OSError as exc:  # the interpreter vanished or cannot run: no retry helps
            raise BotStartError(f"cannot start the agent {path}: {exc}") from exc
        exited: asyncio.Future[Any] = asyncio.ensure_future(process.exited.wait())
        waits: set[asyncio.Future[Any]] = {connected, exited}
        try:
            await asyncio.wait(
                waits, timeout=options.start_timeout_s, return_when=asyncio.FIRST_COMPLETED
            )
        finally:
            exited.cancel()
        if not connected.done():
            why = (
                process.how_it_ended()
                if process.exited.is_set()
                else (f"did not connect within start_timeout_s ({options.start_timeout_s:g} s)")
            )
            raise BotStartError(f"the agent {path} (pid {process.pid}) {why}", process.tail.text())
        endpoint = LivekitEndpoint(role, config.url, options, process, connected.result(), folder)
        try:
            await endpoint.handshake(min(10.0, options.start_timeout_s))
        except (BotProtocolError, TimeoutError) as exc:
            raise BotStartError(
                f"the agent {path} (pid {process.pid}) connected but did not answer "
                f"get_framework_info ({exc or 'timed out'})",
                process.tail.text(),
            ) from exc
        return endpoint
    except BaseException:
        if connected.done() and not connected.cancelled():
            connected.result()[1].close()
        else:
            connected.cancel()
        if process is not None:
            await process.stop(options.stop_timeout_s)
        folder.remove()
        raise
    finally:
        server.close()
