"""A worker process's servers: bots on the front door's host, the front door on loopback.

Why two servers: bots reach a worker the way they reach the front door — the
same host they dialled, the same TLS and token — while the internal
``BridgeWorker`` service must never be reachable from elsewhere: it listens
on 127.0.0.1 only and refuses every call without the secret the front door
handed this worker at start (a fresh random one per start).

:class:`WorkerServer` opens the store's single writer (this process's own,
on the shared file), serves both, and stops in order: end every attempt
(``shutdown`` when the front door asked or went away, ``worker_lost`` when
the worker alone was told to stop, so the run retries it), wait for them to
record their end, stop the servers, flush the writer.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging

import grpc

from vae.bridge_service.config import StopReason
from vae.bridge_service.edge.registration import SERVICE_NAME, register
from vae.bridge_service.edge.servicer_converse import ConverseHandler
from vae.bridge_service.identity import BridgeIdentity
from vae.bridge_service.workers.config import WorkerConfig
from vae.bridge_service.workers.tickets import TicketDesk
from vae.bridge_service.workers.worker_servicer import WorkerBridgeServicer, WorkerControl
from vae.internal.v1 import worker_pb2_grpc
from vae.recordings.write.writer import open_writer
from vae.serving import RunningServer, start_server

log = logging.getLogger("vae.bridge.worker")

CONTROL_SERVICE = "vae.internal.v1.BridgeWorker"


class WorkerServer:
    def __init__(self, config: WorkerConfig) -> None:
        self.config = config
        self.settings = config.bridge_settings
        self.identity = BridgeIdentity.of_this_process(config.index, config.front_door)
        self.desk = TicketDesk(self.identity.label, config.front_door)
        self._stack = contextlib.AsyncExitStack()
        self._bots: RunningServer | None = None
        self._control: RunningServer | None = None
        self.control: WorkerControl | None = None

    @property
    def control_address(self) -> str:
        assert self._control is not None, "not started"
        return f"127.0.0.1:{self._control.port}"

    async def start(self) -> WorkerServer:
        config, settings = self.config, self.settings
        writer = await self._stack.enter_async_context(open_writer(config.db_path))
        self.control = control = WorkerControl(self.desk, writer, settings, self.identity)
        bots = WorkerBridgeServicer(
            ConverseHandler(self.desk, settings), self.identity.label, config.front_door
        )
        try:
            self._bots = await start_server(
                f"{config.host}:0",
                lambda server: register(bots, server),
                [SERVICE_NAME],
                tls=config.tls,
                token=config.token or None,
                max_receive_bytes=settings.max_receive_message_bytes,
            )
            self.identity.address = f"{config.host}:{self._bots.port}"

            def add_control(server: grpc.aio.Server) -> None:
                worker_pb2_grpc.add_BridgeWorkerServicer_to_server(control, server)

            self._control = await start_server(
                "127.0.0.1:0", add_control, [CONTROL_SERVICE], token=config.secret
            )
        except BaseException:
            await self._stop_servers()
            await self._stack.aclose()
            raise
        gc.collect()
        gc.freeze()  # as the front door does: keep start-up objects out of full collections
        log.info("%s serving bots on %s", self.identity.label, self.identity.address)
        return self

    async def stop(self, front_door_gone: bool) -> None:
        """End every attempt, wait for each to record its end, then stop and flush."""
        control = self.control
        if control is not None and control.attempts:
            if front_door_gone:
                control.end_all(StopReason.SHUTDOWN, "the bridge is shutting down")
            else:
                detail = f"{self.identity.label} (pid {self.identity.pid}) was stopped (SIGTERM)"
                control.end_all(StopReason.WORKER_LOST, detail)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(control.idle.wait(), self.settings.final_state_timeout_s + 5)
        await self._stop_servers()
        await self._stack.aclose()

    async def _stop_servers(self) -> None:
        for server in (self._bots, self._control):
            if server is not None:
                await server.stop(1.0)
        self._bots = self._control = None
