"""Entry point of a worker process: ``python -m vae.bridge_service.workers.main``.

Started only by a front door (``vae.bridge_service.workers.process``), never by
hand. The protocol with the parent is three lines of plain text:

- stdin, first line: the :class:`~vae.bridge_service.workers.worker_server.WorkerConfig`
  as JSON (the token and the internal secret travel here, never in argv or
  the environment, where other users could read them);
- stdout, one line once serving: ``{"address": ..., "control": ..., "pid": ...}``;
- stdin reaching its end: the front door asked this worker to stop, or died —
  either way the worker ends its sessions with ``shutdown``, records them and
  exits, so a worker never outlives its front door.

SIGTERM sent to the worker alone stops it the same way, but its sessions end
``worker_lost`` (the front door is still up and retries them). SIGINT is
ignored: a Ctrl-C in the terminal reaches the front door, which stops its
workers in order.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import signal
import sys

from vae.bridge_service import event_loop as loops
from vae.bridge_service.workers.config import WorkerConfig
from vae.bridge_service.workers.worker_server import WorkerServer


async def _stdin_closed() -> None:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    while await reader.read(4096):
        pass


async def serve(config: WorkerConfig) -> None:
    server = await WorkerServer(config).start()
    identity = server.identity
    ready = {"address": identity.address, "control": server.control_address, "pid": identity.pid}
    print(json.dumps(ready), flush=True)
    terminated = asyncio.Event()
    loop = asyncio.get_running_loop()
    with contextlib.suppress(NotImplementedError):
        loop.add_signal_handler(signal.SIGTERM, terminated.set)
    closed = asyncio.ensure_future(_stdin_closed())
    term = asyncio.ensure_future(terminated.wait())
    try:
        await asyncio.wait([closed, term], return_when=asyncio.FIRST_COMPLETED)
    finally:
        closed.cancel()
        term.cancel()
        await asyncio.gather(closed, term, return_exceptions=True)
        await server.stop(front_door_gone=not terminated.is_set())


def main() -> int:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    line = sys.stdin.readline()
    if not line:
        print("a worker is started by `vae bridge serve --workers N`", file=sys.stderr)
        return 2
    config = WorkerConfig.from_json(line)
    # As `vae bridge serve` logs (vae.cli.common.setup_logging), each line naming the worker.
    wanted = getattr(logging, config.log_level.upper(), logging.WARNING)
    logging.basicConfig(
        level=wanted,
        format=f"%(asctime)s %(levelname)s worker {config.index} %(name)s: %(message)s",
        stream=sys.stderr,
    )
    root = wanted if wanted <= logging.DEBUG else max(wanted, logging.WARNING)
    logging.getLogger().setLevel(root)
    logging.getLogger("vae").setLevel(wanted)
    loops.run(serve(config), config.event_loop)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
