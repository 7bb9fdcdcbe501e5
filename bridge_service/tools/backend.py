"""One session's tool backend: a loopback server over one tool world, recording every call.

The server is one ASGI application (:mod:`.http` routes beside the MCP
endpoint of :mod:`.mcp_server`) run by uvicorn inside the bridge's event loop,
on its own port: no other session can reach this session's state. Uvicorn is
driven through ``startup``/``shutdown`` only, never ``serve``, so it installs
no signal handlers and runs no ticking loop of its own in the bridge.

Every call, refused or answered, over HTTP or MCP, is recorded through
``record`` (a ``tool_backend_call`` event at the call's arrival time on the
session clock) with its tool, arguments, status, result and transport. A
delay the scenario asks for (``tool_responses[].delay_s``) is awaited per
call, so a slow tool never holds up another call or the session.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import time
from collections.abc import Awaitable, Callable
from typing import Any

from vae.recordings.models import EventKind
from vae.tools.client import BackendAddresses
from vae.tools.world import Pending, Served, ToolWorld

log = logging.getLogger("vae.bridge.tools")

#: ``record(kind, payload, bridge_ns)``: how the backend's events reach the session's record.
Record = Callable[[EventKind, dict[str, Any], int], Awaitable[None]]
#: The largest request body a tool call may have (a bigger one is refused with 413).
MAX_BODY_BYTES = 64 * 1024
#: Characters of a refused body (or a tool name) kept in the record.
EXCERPT = 200


class ToolBackend:
    """The tools of one session, served on ``127.0.0.1`` until :meth:`close`."""

    def __init__(
        self,
        world: ToolWorld,
        record: Record,
        now_ns: Callable[[], int],
        started_ns: int,
        title: str = "vae tool backend",
        max_body_bytes: int = MAX_BODY_BYTES,
    ) -> None:
        self.world = world
        self.title = title
        self.max_body_bytes = max_body_bytes
        self._record = record
        self._now_ns = now_ns
        self._started_ns = started_ns
        self._server: Any = None
        self._socket: socket.socket | None = None
        self.addresses: BackendAddresses | None = None
        #: Calls served so far (refusals included).
        self.calls = 0

    # ------------------------------------------------------------ calls
    async def call(self, name: str, arguments: Any, transport: str, arrival_ns: int) -> Served:
        """Answer one call (after its delay) and record it."""
        started = time.perf_counter()
        try:
            prepared = self.world.prepare(name, arguments)
            if isinstance(prepared, Pending):
                if prepared.delay_s > 0:
                    await asyncio.sleep(prepared.delay_s)  # the scenario's slow API
                prepared = self.world.complete(prepared)
            served = prepared
        except Exception as exc:  # a bug must not end the session: a 500, recorded
            log.exception("tool backend: %s failed", name[:EXCERPT])
            message = f"the tool backend failed: {type(exc).__name__}: {exc}"
            served = Served(500, {"error": message, "status": 500}, message)
        await self.record_call(
            name,
            transport,
            arrival_ns,
            served,
            arguments=arguments if isinstance(arguments, dict) else None,
            duration_s=time.perf_counter() - started,
        )
        return served

    async def refuse(
        self, name: str, transport: str, arrival_ns: int, status: int, message: str, **extra: Any
    ) -> Served:
        """Record and return a refusal made before the call reached its tool (413, 400, 405)."""
        served = Served(status, {"error": message, "status": status}, message)
        await self.record_call(name, transport, arrival_ns, served, **extra)
        return served

    async def record_call(
        self,
        name: str,
        transport: str,
        arrival_ns: int,
        served: Served,
        *,
        arguments: dict[str, Any] | None = None,
        duration_s: float = 0.0,
        **extra: Any,
    ) -> None:
        self.calls += 1
        payload: dict[str, Any] = {
            "tool": name[:EXCERPT],
            "transport": transport,
            "arguments": arguments,
            "status": served.status,
            "result": served.body,
            "error": served.error,
            "is_write": served.is_write,
            "applied": served.applied,
            "rule": served.rule,
            "delay_s": served.delay_s,
            "t_s": round((arrival_ns - self._started_ns) / 1e9, 6),
            "duration_ms": round(duration_s * 1000, 3),
            **extra,
        }
        if served.argument:
            payload["argument"] = served.argument
        await self._record(EventKind.TOOL_BACKEND_CALL, payload, arrival_ns)

    def now_ns(self) -> int:
        return self._now_ns()

    # ------------------------------------------------------------ serving
    async def start(
        self, app: Callable[[ToolBackend], Any], sock: socket.socket | None = None
    ) -> BackendAddresses:
        """Serve ``app(self)`` (an ASGI app) on ``sock``; return the addresses.

        ``sock``: a loopback socket bound before the session's agent was started
        (:class:`Reservation`), so an agent process vae starts learns the address in
        its environment; without one, a free loopback port is bound now. The socket
        is this backend's from here on (closed by :meth:`close`).
        """
        import uvicorn  # the tools extra: checked before any session (session.check_run)

        quiet = logging.getLogger("uvicorn.error")
        if quiet.level == logging.NOTSET:
            quiet.setLevel(logging.WARNING)  # no per-session start/stop lines from uvicorn
        sock = sock if sock is not None else bind_loopback()
        self.addresses = addresses_of(sock)
        config = uvicorn.Config(
            app(self),
            lifespan="on",
            log_config=None,
            access_log=False,
            http="h11",
            ws="none",
            timeout_graceful_shutdown=1,
        )
        config.load()
        server = uvicorn.Server(config)
        server.lifespan = config.lifespan_class(config)
        try:
            await server.startup(sockets=[sock])
        except SystemExit as exc:  # uvicorn's answer to a failed lifespan: not the bridge's
            sock.close()
            raise RuntimeError("the tool backend could not start its MCP endpoint") from exc
        self._server, self._socket = server, sock
        return self.addresses

    async def close(self) -> None:
        """Stop serving (idempotent); calls still in flight get a second to finish."""
        server, sock = self._server, self._socket
        self._server = self._socket = None
        if server is None:
            return
        server.should_exit = True
        try:
            await server.shutdown(sockets=[sock] if sock is not None else None)
        except Exception:
            log.exception("tool backend: stopping the server failed")


def bind_loopback() -> socket.socket:
    """A listening socket on a free loopback port (connections queue until served)."""
    return socket.create_server(("127.0.0.1", 0))


def addresses_of(sock: socket.socket) -> BackendAddresses:
    return BackendAddresses.at(f"http://127.0.0.1:{sock.getsockname()[1]}")


class Reservation:
    """A session's backend port, bound before its agent is dialled; the backend serves it.

    Why: an agent process vae starts (LiveKit) reads ``VAE_TOOLS_URL`` from its
    environment when it starts, and a SIP INVITE names the backend in headers,
    both before ``SessionStart``. An agent that calls before the backend serves
    waits in the socket's backlog. Closed if the session never starts.
    """

    def __init__(self) -> None:
        self.socket: socket.socket | None = bind_loopback()
        self.addresses = addresses_of(self.socket)

    def take(self) -> socket.socket | None:
        """The socket, now the backend's (``None`` once taken or closed)."""
        sock, self.socket = self.socket, None
        return sock

    def close(self) -> None:
        if (sock := self.take()) is not None:
            sock.close()
