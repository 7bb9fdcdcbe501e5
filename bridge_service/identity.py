"""Which bridge process served an attempt: :class:`BridgeIdentity`.

Why: with ``vae bridge serve --workers N`` one bridge is several processes
(the front door on the public address and N workers), and later several
bridges may share one store. Each recorded attempt says which process served
it — host, pid, the address it served bots on, and which worker if any — so a
user can see how sessions were spread, and a test can prove that both bots of
a session were served by one process. Stored as ``sessions.bridge_json``,
shown by ``vae runs show`` and GetRun (``SessionSummary.bridge``).
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from typing import Any


@dataclass
class BridgeIdentity:
    host: str
    pid: int
    #: Where this process serves bots (``host:port``); set once the server is bound.
    address: str = ""
    #: 1..N for a worker of ``--workers N``; None for the process on the public address.
    worker: int | None = None
    #: For a worker: its bridge's public address.
    front_door: str = ""

    @classmethod
    def of_this_process(cls, worker: int | None = None, front_door: str = "") -> BridgeIdentity:
        return cls(socket.gethostname(), os.getpid(), worker=worker, front_door=front_door)

    def to_dict(self) -> dict[str, object]:
        return {
            "host": self.host,
            "pid": self.pid,
            "address": self.address,
            "worker": self.worker,
            "front_door": self.front_door,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> BridgeIdentity:
        worker = data.get("worker")
        return cls(
            host=str(data.get("host", "")),
            pid=int(data.get("pid", 0)),
            address=str(data.get("address", "")),
            worker=int(worker) if worker is not None else None,
            front_door=str(data.get("front_door", "")),
        )

    @property
    def label(self) -> str:
        """``worker 2`` or ``bridge`` (the process on the public address)."""
        return f"worker {self.worker}" if self.worker is not None else "bridge"
