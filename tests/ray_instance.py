"""One local Ray instance (2 CPUs) for every test that scores on Ray, shut down at the end.

Started once per test process through vae's own
:func:`vae.scorer_service.ray_scoring.connect.connect`
(``local``), so its workers run this checkout's code exactly as a user's rescore
would ship it. Tests in this process reuse the connection (a ``RayRunner`` finds
it); tests that run ``vae`` in a subprocess pass :attr:`RayInstance.address`.
Without the ``ray`` package the tests skip locally and fail in CI, like
:func:`tests.conftest.require_tool`.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Iterator
from dataclasses import dataclass

import pytest


@dataclass(frozen=True)
class RayInstance:
    #: The head's GCS address, for ``vae rescore --ray ADDRESS`` in another process.
    address: str


def start_ray() -> Iterator[RayInstance]:
    if importlib.util.find_spec("ray") is None:
        message = "ray is not installed; install it with: pip install 'vae[ray]'"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    import ray

    from vae.scorer_service.ray_scoring.connect import connect

    connection = connect("local", num_cpus=2)
    try:
        yield RayInstance(ray.get_runtime_context().gcs_address)
    finally:
        connection.close()
