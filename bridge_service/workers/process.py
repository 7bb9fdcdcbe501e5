"""One worker process, as its front door holds it: start, reach, stop, kill.

Why a module of its own: this is the process boundary — how a worker is
started (``python -m vae.bridge_service.workers.main`` in its own session, so a
Ctrl-C in the terminal reaches only the front door, which stops its workers
in order), what it is told (one JSON line on stdin: the store, the host to
serve bots on, TLS and token, a fresh secret for the internal service), how
the front door learns where it serves (one JSON line on stdout), and how it
is stopped (stdin closed: it ends its sessions and exits) or killed. Which
worker takes a session and what happens when one dies is ``pool``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import secrets
import signal
import socket
import sys
from dataclasses import asdict, dataclass

import grpc

from vae.bridge_service.config import BridgeSettings
from vae.bridge_service.identity import BridgeIdentity
from vae.bridge_service.workers.config import WorkerConfig
from vae.bridge_service.workers.remote_wire import WorkerStub, open_control
from vae.serving import TlsFiles

log = logging.getLogger("vae.bridge.workers")


class WorkerStartError(Exception):
    """A worker process did not come up."""


@dataclass(frozen=True)
class WorkerLaunch:
    """What every worker of one front door is started with."""

    db_path: str
    #: The front door's bind host: workers serve bots on the same one.
    host: str
    front_door: str
    settings: BridgeSettings
    tls: TlsFiles | None = None
    token: str | None = None
    event_loop: str = "asyncio"
    log_level: str = "warning"
    start_timeout_s: float = 60.0


def describe_exit(code: int | None) -> str:
    if code is None:
        return "still running"
    if code < 0:
        with contextlib.suppress(ValueError):
            return f"killed by {signal.Signals(-code).name}"
        return f"killed by signal {-code}"
    return f"exited with code {code}"


class WorkerProcess:
    def __init__(self, index: int, launch: WorkerLaunch) -> None:
        self.index = index
        self.launch = launch
        self.label = f"worker {index}"
        self.proc: asyncio.subprocess.Process | None = None
        self.identity: BridgeIdentity | None = None
        #: The port it serves bots on (on the front door's host).
        self.port = 0
        #: Its internal service (loopback, guarded by the secret it was started with).
        self.control_address = ""
        self.stub: WorkerStub | None = None
        self._channel: grpc.aio.Channel | None = None
        #: Sessions the front door has handed to it and not yet seen end.
        self.load = 0
        self.last_chosen = -1

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.returncode is None and self.stub is not None

    @property
    def pid(self) -> int:
        return 0 if self.proc is None else self.proc.pid

    async def start(self) -> None:
        launch = self.launch
        secret = secrets.token_urlsafe(32)
        config = WorkerConfig(
            index=self.index,
            db_path=launch.db_path,
            host=launch.host,
            front_door=launch.front_door,
            secret=secret,
            settings=asdict(launch.settings),
            tls_cert=str(launch.tls.cert) if launch.tls else "",
            tls_key=str(launch.tls.key) if launch.tls else "",
            token=launch.token or "",
            event_loop=launch.event_loop,
            log_level=launch.log_level,
        )
        self.proc = proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "vae.bridge_service.workers.main",
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            start_new_session=True,
        )
        assert proc.stdin is not None and proc.stdout is not None
        try:
            proc.stdin.write(config.to_json().encode() + b"\n")
            await proc.stdin.drain()
            line = await asyncio.wait_for(proc.stdout.readline(), launch.start_timeout_s)
            if not line:
                code = await proc.wait()
                raise WorkerStartError(
                    f"{self.label} {describe_exit(code)} before serving (its log is above)"
                )
            ready = json.loads(line)
        except (TimeoutError, OSError, ValueError) as exc:
            await self.kill()
            raise WorkerStartError(f"{self.label} did not start: {exc!r}") from exc
        except BaseException:
            await self.kill()
            raise
        address = str(ready["address"])
        self.port = int(address.rsplit(":", 1)[1])
        self.identity = BridgeIdentity(
            socket.gethostname(), int(ready["pid"]), address, self.index, launch.front_door
        )
        self.control_address = str(ready["control"])
        self._channel, self.stub = open_control(self.control_address, secret)
        log.info("%s (pid %d) serving bots on %s", self.label, proc.pid, address)

    async def wait(self) -> int:
        assert self.proc is not None
        return await self.proc.wait()

    async def stop(self, grace_s: float) -> None:
        """Close its stdin (it ends its sessions and exits); kill it after ``grace_s``."""
        proc = self.proc
        if proc is not None and proc.returncode is None:
            assert proc.stdin is not None
            with contextlib.suppress(OSError):
                proc.stdin.close()
            try:
                await asyncio.wait_for(proc.wait(), grace_s)
            except TimeoutError:
                log.warning("%s did not stop within %g s; killing it", self.label, grace_s)
                await self.kill()
        await self.close_channel()

    async def kill(self) -> None:
        proc = self.proc
        if proc is not None and proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            await proc.wait()

    async def close_channel(self) -> None:
        if self._channel is not None:
            await self._channel.close()
            self._channel = None
        self.stub = None
