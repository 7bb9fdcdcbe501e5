"""Shared fixtures: stores (SQLite files, PostgreSQL databases), PCM helpers, tool requirements.

Tests that need an external tool (Chromium, Node.js, a pipecat venv,
PostgreSQL) call :func:`require_tool` / use :func:`pg_server`: locally a
missing tool skips the test with the command that installs it; in CI (``CI``
set) a missing tool fails the test, so nothing is silently skipped where it
must run.

``store`` runs a test once per back end: an SQLite file under tmp_path and a
fresh database on this process's PostgreSQL server (:mod:`tests.pg`).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from tests import pg
from vae.recordings.backends.locator import Locator, locate


def require_tool(name: str, install_hint: str) -> str:
    """Return the path of executable ``name`` or skip/fail as described above."""
    path = shutil.which(name)
    if path:
        return path
    message = f"{name} not found; install it with: {install_hint}"
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    """A fresh store file path (not created yet)."""
    return tmp_path / "vae.db"


@pytest.fixture(scope="session")
def pg_server() -> Iterator[pg.PgServer]:
    """This pytest process's PostgreSQL server (one per xdist worker), started on first use."""
    why = pg.problem()
    if why is not None:
        message = f"{why}; install it with: {pg.INSTALL_HINT}"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    server = pg.PgServer()
    try:
        server.start()
        yield server
    finally:
        server.remove()


@pytest.fixture
def pg_url(pg_server: pg.PgServer) -> Iterator[str]:
    """A fresh, empty database on the shared server (dropped after the test)."""
    url = pg_server.fresh_database()
    yield url
    pg_server.drop_database(url)


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Locator:
    """A fresh store on each back end: an SQLite file (not created yet), a PostgreSQL database."""
    if request.param == "sqlite":
        return locate(tmp_path / "vae.db")
    return locate(request.getfixturevalue("pg_url"))


def tone(seconds: float, rate: int = 16000, freq: float = 220.0, amp: float = 0.3) -> np.ndarray:
    """A deterministic int16 tone, for audio that must survive round trips."""
    t = np.arange(int(seconds * rate)) / rate
    return (np.sin(2 * np.pi * freq * t) * amp * 32767).astype(np.int16)


@pytest.fixture
def make_tone():  # type: ignore[no-untyped-def]
    return tone


@pytest.fixture(scope="session")
def ray_instance():  # type: ignore[no-untyped-def]
    """A local Ray instance shared by this test process (tests/ray_instance.py)."""
    from tests.ray_instance import start_ray

    yield from start_ray()
