"""What a front door tells each worker at start: :class:`WorkerConfig`.

Why a module of its own: it is the one thing both ends of the process
boundary share — the front door writes it as one JSON line on the worker's
stdin (``process``), the worker reads it (``main``) — and it must not pull in
either end's servers.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vae.bridge_service.config import BridgeSettings
from vae.serving import TlsFiles


@dataclass(frozen=True)
class WorkerConfig:
    """What the front door tells a worker at start (one JSON line on its stdin)."""

    index: int
    db_path: str
    #: Host to serve bots on (the front door's host); the port is picked by the kernel.
    host: str
    front_door: str
    secret: str
    settings: dict[str, Any] = field(default_factory=dict)
    tls_cert: str = ""
    tls_key: str = ""
    token: str = ""
    event_loop: str = "asyncio"
    log_level: str = "warning"

    def to_json(self) -> str:
        return json.dumps(self.__dict__)

    @classmethod
    def from_json(cls, line: str) -> WorkerConfig:
        return cls(**json.loads(line))

    @property
    def bridge_settings(self) -> BridgeSettings:
        return BridgeSettings(**self.settings)

    @property
    def tls(self) -> TlsFiles | None:
        if not self.tls_cert:
            return None
        return TlsFiles(Path(self.tls_cert), Path(self.tls_key))
