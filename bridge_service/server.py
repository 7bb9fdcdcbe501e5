"""Starting and stopping a bridge: :class:`BridgeServer` (in-process) and :func:`serve`.

The CLI (``vae bridge serve``), the demo and the tests all start the bridge
through :meth:`BridgeServer.start`: it opens the store's single writer, builds
the pairing pool and run manager, and serves ``BridgeService`` with health
and reflection on ``address`` (127.0.0.1:50051 by default; port 0 picks one),
optionally with TLS and a bearer token (``vae.serving``). :meth:`stop` ends
live sessions with reason ``shutdown`` (each still records its end and asks
the bots for their final state), then stops the server and flushes the writer.

With ``workers`` ≥ 2 this process is the front door of a bridge on every
core (``vae.bridge_service.workers``): after binding it starts that many worker
processes on the same host and hands them the sessions of bots that follow
redirects; :meth:`stop` ends every session first (the workers' too), then
stops the workers, then itself.

With ``sip_listen`` (``host:port``) it takes agents' SIP calls there for runs
with ``--agent-connector sip-inbound:`` (``vae.bridge_service.connectors.sip``).

With ``share_runs`` (a PostgreSQL store only) it serves runs together with
every other bridge of the store that shares them (``vae.bridge_service.shared``).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import signal
from dataclasses import replace
from typing import TYPE_CHECKING

from vae import __version__
from vae.bridge_service.config import BridgeSettings
from vae.bridge_service.connectors.sip.listen import start_listener, stop_listener
from vae.bridge_service.edge.registration import SERVICE_NAME, register
from vae.bridge_service.edge.servicer import BridgeServicer
from vae.bridge_service.edge.servicer_converse import ConverseHandler
from vae.bridge_service.identity import BridgeIdentity
from vae.bridge_service.runs.manager import RunManager
from vae.bridge_service.runs.pairing import PairingPool
from vae.bridge_service.shared.service import SharedRuns
from vae.bridge_service.telemetry.hub import TraceHub
from vae.bridge_service.workers.dispatch import WorkerDispatch
from vae.bridge_service.workers.pool import WorkerPool
from vae.bridge_service.workers.process import WorkerLaunch
from vae.recordings.backends.locator import StoreRef, locate
from vae.recordings.write.writer import RecordingWriter, open_writer
from vae.serving import RunningServer, TlsFiles, start_server

if TYPE_CHECKING:
    from vae.bridge_service.connectors.sip.inbound import InboundListener

log = logging.getLogger("vae.bridge")

SHARE_NEEDS_POSTGRES = (
    "--share-runs needs a PostgreSQL --db (postgresql://USER@HOST:PORT/DATABASE) that every"
    " bridge reaches; an SQLite file is one bridge's store"
)


class BridgeServer:
    def __init__(
        self,
        db_path: StoreRef,
        settings: BridgeSettings | None = None,
        *,
        tls: TlsFiles | None = None,
        token: str | None = None,
        workers: int = 1,
        event_loop: str = "asyncio",
        log_level: str = "warning",
        share_runs: bool = False,
        sip_listen: str = "",
    ) -> None:
        self.db_path = locate(db_path)
        #: host:port where agents' SIP calls are taken (``connectors.sip.inbound``); "" for none.
        self.sip_listen = sip_listen
        self.sip: InboundListener | None = None
        if share_runs and not self.db_path.is_postgres:
            raise ValueError(SHARE_NEEDS_POSTGRES)
        #: Serve runs together with the other bridges of the store (``vae.bridge_service.shared``).
        self.share_runs = share_runs
        self.shared: SharedRuns | None = None
        self.settings = settings or BridgeSettings()
        self.tls = tls
        self.token = token
        #: Bridge processes serving sessions: 1 is this one alone; N >= 2 starts N workers.
        self.worker_count = workers
        self.event_loop = event_loop
        self.log_level = log_level
        self.workers: WorkerPool | None = None
        self.identity = BridgeIdentity.of_this_process()
        self.pool = PairingPool()
        self._stack = contextlib.AsyncExitStack()
        self._server: RunningServer | None = None
        self.writer: RecordingWriter | None = None
        self.runs: RunManager | None = None
        #: OpenTelemetry in and out (``vae.bridge_service.telemetry``).
        self.traces: TraceHub | None = None

    @property
    def port(self) -> int:
        assert self._server is not None, "not started"
        return self._server.port

    @property
    def address(self) -> str:
        host = self.settings.address.rsplit(":", 1)[0]
        return f"{host}:{self.port}"

    async def start(self) -> BridgeServer:
        self.writer = await self._stack.enter_async_context(open_writer(self.db_path))
        self.runs = RunManager(self.writer, self.db_path, self.pool, self.settings, __version__)
        self.runs.executor.identity = self.identity
        self.traces = TraceHub(self.writer, self.db_path, self.settings)
        self.runs.traces = self.runs.executor.traces = self.traces
        servicer = BridgeServicer(self.runs, ConverseHandler(self.pool, self.settings))
        try:
            self._server = await start_server(
                self.settings.address,
                lambda server: register(servicer, server),
                [SERVICE_NAME],
                tls=self.tls,
                token=self.token,
                max_receive_bytes=self.settings.max_receive_message_bytes,
            )
        except BaseException:
            await self._stack.aclose()
            raise
        self.identity.address = self.address
        try:
            await self.traces.start()
            if self.sip_listen:
                self.sip = await start_listener(self.sip_listen)
            if self.worker_count > 1:
                await self._start_workers()
            if self.share_runs:
                self.shared = SharedRuns(self.runs.executor, self.db_path, self.pool, __version__)
                await self.shared.start()
                self.runs.executor.shared = self.shared.owner
        except BaseException:
            await self.stop()
            raise
        # Everything alive now lives as long as the process: keep it out of the
        # cyclic GC's full collections, which otherwise pause every session's
        # clock for tens of ms each time they walk it.
        gc.collect()
        gc.freeze()
        log.info("bridge serving on %s (database %s)", self.address, self.db_path.display())
        return self

    async def _start_workers(self) -> None:
        assert self.runs is not None and self.writer is not None
        launch = WorkerLaunch(
            db_path=str(self.db_path),
            host=self.address.rsplit(":", 1)[0],
            front_door=self.address,
            settings=self.settings,
            tls=self.tls,
            token=self.token,
            event_loop=self.event_loop,
            log_level=self.log_level,
        )
        self.workers = WorkerPool(self.worker_count, launch)
        await self.workers.start()
        self.runs.executor.dispatch = WorkerDispatch(self.workers, self.writer, self.db_path)

    async def stop(self, grace: float = 2.0) -> None:
        if self.shared is not None:
            self.shared.quiesce(self.address)
        if self.runs is not None:
            await self.runs.shutdown()  # every call hung up with its session
        if self.sip is not None:
            await stop_listener(self.sip)
            self.sip = None
        if self.shared is not None:
            await self.shared.stop()
            self.shared = None
        if self.workers is not None:
            await self.workers.stop()
            self.workers = None
        if self.traces is not None:
            await self.traces.close()  # the spans still held are kept (or counted)
            self.traces = None
        if self._server is not None:
            await self._server.stop(grace)
            self._server = None
        await self._stack.aclose()

    async def __aenter__(self) -> BridgeServer:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()


async def serve(
    db_path: StoreRef,
    address: str = "127.0.0.1:50051",
    *,
    settings: BridgeSettings | None = None,
    tls: TlsFiles | None = None,
    token: str | None = None,
    ready: asyncio.Event | None = None,
    workers: int = 1,
    event_loop: str = "asyncio",
    log_level: str = "warning",
    share_runs: bool = False,
    sip_listen: str = "",
) -> None:
    """Serve until SIGINT/SIGTERM, then shut down gracefully."""
    settings = replace(settings or BridgeSettings(), address=address)
    server = BridgeServer(
        db_path,
        settings,
        tls=tls,
        token=token,
        workers=workers,
        event_loop=event_loop,
        log_level=log_level,
        share_runs=share_runs,
        sip_listen=sip_listen,
    )
    await server.start()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(sig, stop.set)
    print(f"vae bridge listening on {server.address}", flush=True)
    if server.workers is not None:
        shown = ", ".join(f"{w.label} pid {w.pid} port {w.port}" for w in server.workers.workers)
        print(
            f"  and {workers} worker processes for bots that follow redirects: {shown}", flush=True
        )
    if server.sip is not None:
        print(f"  taking agents' SIP calls at sip:{server.sip.address} (sip-inbound:)", flush=True)
    if server.traces is not None and server.traces.addresses:
        for where in server.traces.addresses:
            print(f"  receiving agents' OTLP traces at http://{where}/v1/traces", flush=True)
    if server.traces is not None and server.traces.endpoint:
        print(f"  exporting each run's trace to {server.traces.endpoint}", flush=True)
    if server.shared is not None:
        print("  sharing runs with every bridge on this database that shares runs", flush=True)
    if ready is not None:
        ready.set()
    try:
        await stop.wait()
    finally:
        log.info("shutting down: ending live sessions")
        await server.stop()
