"""What the bridge holds for OpenTelemetry: receivers, the matcher, exports at run end.

A receiver is opened per address and shared: the bridge's own (``vae bridge
serve --otlp-receiver``, open as long as the bridge) and each run's (``vae run
--otlp-receiver``, opened when the run starts and closed
:data:`~vae.recordings.traces.model.GRACE_S` after it ends, so late spans still
arrive; two runs naming one address share it). One task owned by the hub
sweeps the matcher once a second and closes receivers whose time is up.

Exports: a run is exported when it ends to the run's ``otel_endpoint``, else
the bridge's (``--otel-endpoint``, else the standard ``OTEL_EXPORTER_OTLP_*``
variables). An export error never changes the run's outcome.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable
from dataclasses import dataclass

from vae.bridge_service.config import BridgeSettings, RunSettings
from vae.bridge_service.telemetry.matcher import Matcher
from vae.bridge_service.telemetry.registry import Registry
from vae.bridge_service.telemetry.run_export import export_run
from vae.otel.receiver import OtlpReceiver
from vae.recordings.backends.locator import Locator
from vae.recordings.traces.model import GRACE_S
from vae.recordings.write.writer import RecordingWriter

log = logging.getLogger("vae.bridge.traces")


@dataclass
class _Open:
    receiver: OtlpReceiver
    users: int = 0
    #: Monotonic time after which an unused run receiver closes (None: in use or the bridge's).
    close_at: float | None = None
    permanent: bool = False


class TraceHub:
    def __init__(self, writer: RecordingWriter, db: Locator, settings: BridgeSettings) -> None:
        self.writer = writer
        self.db = db
        self.settings = settings
        self.registry = Registry()
        self.matcher = Matcher(self.registry, writer)
        self._open: dict[str, _Open] = {}
        self._task: asyncio.Task[None] | None = None
        self.endpoint = self._bridge_endpoint()

    def _bridge_endpoint(self) -> str | None:
        """The bridge's export URL, as the CLI resolved it (a full traces URL); None: off."""
        return self.settings.otel_endpoint or None

    # ------------------------------------------------------------ lifetime
    async def start(self) -> None:
        if self.settings.otlp_receiver:
            await self._acquire(self.settings.otlp_receiver, permanent=True)
        self._task = asyncio.create_task(self._sweeper(), name="otel-sweep")

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        with contextlib.suppress(Exception):
            await self.matcher.sweep(flush=True)
        for entry in self._open.values():
            await entry.receiver.close()
        self._open.clear()

    @property
    def addresses(self) -> list[str]:
        return [e.receiver.address for e in self._open.values()]

    async def _acquire(self, address: str, permanent: bool = False) -> OtlpReceiver:
        from vae.otel import require
        from vae.otel.address import parse_hostport

        entry = self._open.get(address)
        if entry is None:
            require()
            host, port = parse_hostport(address)
            receiver = OtlpReceiver(self.matcher.take, host, port)
            await receiver.start()
            entry = self._open[address] = _Open(receiver, permanent=permanent)
        entry.users += 1
        entry.close_at = None
        return entry.receiver

    async def _sweeper(self) -> None:
        while True:
            await asyncio.sleep(1.0)
            try:
                await self.matcher.sweep()
            except Exception:  # a bug must not end the bridge's trace keeping
                log.exception("OpenTelemetry: sweeping the agent's spans failed")
            now = time.monotonic()
            for address, entry in list(self._open.items()):
                if entry.close_at is not None and now >= entry.close_at and entry.users == 0:
                    del self._open[address]
                    await entry.receiver.close()

    # ------------------------------------------------------------ sessions
    def session_started(self, run_id: str, session_id: str, endpoint: str) -> None:
        self.registry.started(run_id, session_id, endpoint, time.time_ns())

    def session_ended(self, session_id: str, ended_ns: int | None = None) -> None:
        self.registry.ended(session_id, ended_ns)

    # ------------------------------------------------------------ runs
    async def around_run(self, run_id: str, settings: RunSettings, body: Awaitable[None]) -> None:
        """Run ``body`` (the run) with its receiver open; export the run once it ends."""
        address = settings.otlp_receiver
        if address:
            try:
                receiver = await self._acquire(address)
                log.info("run %s: receiving OTLP traces at http://%s/v1/traces", run_id,
                         receiver.address)  # fmt: skip
            except OSError as exc:
                log.warning("run %s: cannot receive traces at %s: %s", run_id, address, exc)
                address = ""
        try:
            await body
        finally:
            if address and address in self._open:
                entry = self._open[address]
                entry.users -= 1
                if entry.users == 0 and not entry.permanent:
                    entry.close_at = time.monotonic() + GRACE_S
        endpoint = settings.otel_endpoint or self.endpoint
        if endpoint:
            from vae.otel.endpoint import traces_url

            url = traces_url(endpoint) if settings.otel_endpoint else endpoint
            await export_run(self.writer, self.db, run_id, url)
