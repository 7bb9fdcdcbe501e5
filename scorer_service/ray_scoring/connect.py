"""Connecting to Ray to score on it: the optional package, the address, the code workers run.

Why a module: how vae reaches a Ray cluster changes with Ray and with how
people deploy it, not with how a scoring is fanned out
(:mod:`vae.scorer_service.ray_scoring.runner`).

- ``ray`` is an optional extra: without it :func:`require_ray` raises
  :class:`RayUnavailableError`, naming ``pip install 'vae[ray]'``.
- Addresses: ``auto`` connects to the Ray instance this machine runs
  (``RAY_ADDRESS``, else the latest ``ray start``) or starts one here for
  this rescore; ``local`` always starts one here; ``HOST:PORT`` is a
  cluster's head (its GCS port, 6379 by default); ``ray://HOST:PORT`` a Ray
  Client server. An address of another shape is a usage error
  (:class:`RayAddressError`). Ray itself retries an address nobody answers
  on for ever, so the address is first tried here, within
  ``probe_timeout_s``: a name that does not resolve, a refused connection or
  a port that does not speak gRPC gives :class:`RayConnectError` at once.
- Workers run the caller's code: the packages a task imports
  (:data:`vae.scorer_service.ray_scoring.task.TASK_PACKAGES`) are shipped as the job's
  ``py_modules``, so a worker on any node imports exactly this process's
  code whatever vae is installed there (the nodes need the third-party
  packages: ``pip install 'vae[ray]'``). Every task also carries a
  fingerprint of that code and refuses to run other code.
- A process already connected to Ray (a library caller, a test) keeps its
  connection; :meth:`RayConnection.close` only shuts down what it started.
"""

from __future__ import annotations

import logging
import re
import socket
from dataclasses import dataclass
from types import ModuleType
from typing import Any

log = logging.getLogger("vae.scorer.ray")

INSTALL_HINT = "pip install 'vae[ray]'"
_HOST_PORT = re.compile(
    r"^(?:(?P<scheme>ray)://)?(?P<host>\[[0-9a-fA-F:.]+\]|[\w.-]+):(?P<port>\d+)$"
)


class RayScoringError(Exception):
    """Scoring on Ray cannot start or go on; the message says why."""


class RayUnavailableError(RayScoringError):
    """The ``ray`` package is not installed."""


class RayAddressError(RayScoringError, ValueError):
    """``--ray`` is not an address vae understands (a usage error)."""


class RayConnectError(RayScoringError):
    """Nothing usable answers at the address."""


def require_ray() -> ModuleType:
    """``import ray``, or a clear error naming the extra."""
    try:
        import ray
    except ImportError as exc:
        raise RayUnavailableError(
            f"scoring on Ray needs the ray package, which is not installed here: {INSTALL_HINT}"
        ) from exc
    return ray


def parse_address(address: str) -> tuple[str, str, int] | None:
    """``(scheme, host, port)`` of an address; None for ``auto`` and ``local``."""
    text = address.strip()
    if text in ("auto", "local"):
        return None
    m = _HOST_PORT.match(text)
    port = int(m.group("port")) if m else 0
    if m is None or not 0 < port < 65536:
        raise RayAddressError(
            f"--ray {address!r}: expected auto, local, HOST:PORT (a Ray head, e.g. "
            "10.0.0.5:6379) or ray://HOST:PORT (a Ray Client server)"
        )
    return m.group("scheme") or "", m.group("host").strip("[]"), port


def probe(address: str, host: str, port: int, timeout_s: float) -> None:
    """Fail fast unless a gRPC server (Ray's head speaks gRPC) answers at ``host:port``."""
    try:
        socket.getaddrinfo(host, port)
    except OSError as exc:
        raise RayConnectError(f"cannot reach Ray at {address}: unknown host {host!r}") from exc
    try:
        socket.create_connection((host, port), timeout=timeout_s).close()
    except OSError as exc:
        why = exc.strerror or type(exc).__name__
        raise RayConnectError(f"cannot reach Ray at {address}: {why}") from exc
    import grpc

    target = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    channel = grpc.insecure_channel(target)
    try:
        grpc.channel_ready_future(channel).result(timeout=timeout_s)
    except grpc.FutureTimeoutError as exc:
        raise RayConnectError(
            f"{address} answers but is not a Ray cluster (no gRPC within {timeout_s:g} s); "
            "give the head's GCS address (port 6379 by default) or ray://HOST:10001"
        ) from exc
    finally:
        channel.close()


def runtime_env() -> dict[str, Any]:
    """The job's runtime environment: this process's task code, shipped to every worker."""
    from vae.scorer_service.ray_scoring.task import package_dirs

    return {"py_modules": package_dirs(), "excludes": ["__pycache__", "*.pyc"]}


@dataclass
class RayConnection:
    """This process's connection to Ray; ``owned`` when :func:`connect` made it."""

    owned: bool
    #: How the connection was asked for (for messages).
    address: str

    @property
    def cpus(self) -> int:
        """The cluster's CPUs (how many tasks run at once)."""
        ray = require_ray()
        return max(1, int(ray.cluster_resources().get("CPU", 1)))

    def close(self) -> None:
        if self.owned:
            require_ray().shutdown()
            self.owned = False


def connect(
    address: str = "auto", *, num_cpus: int | None = None, probe_timeout_s: float = 5.0
) -> RayConnection:
    """Connect this process to Ray at ``address`` (see the module doc), or reuse its connection.

    ``num_cpus`` applies to ``local`` (an instance ``auto`` starts takes
    every core). Blocking: a new local instance takes seconds.
    """
    target = parse_address(address)
    ray = require_ray()
    if ray.is_initialized():
        return RayConnection(False, address)
    options: dict[str, Any] = {
        "runtime_env": runtime_env(),
        "logging_level": logging.WARNING,
        # Worker output stays in Ray's logs: stdout here may be a --json document.
        "log_to_driver": False,
        "namespace": "vae",
    }
    if target is None:
        local = address.strip() == "local"
        # ``auto`` may find a running instance, which refuses ``num_cpus``.
        options.update(address="local" if local else None, include_dashboard=False)
        options.update(num_cpus=num_cpus if local else None)
    else:
        scheme, host, port = target
        probe(address, host, port, probe_timeout_s)
        options["address"] = f"ray://{host}:{port}" if scheme else f"{host}:{port}"
    try:
        ray.init(**options)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        raise RayConnectError(f"cannot connect to Ray at {address}: {exc}") from exc
    log.info("connected to Ray at %s", address)
    return RayConnection(True, address)
