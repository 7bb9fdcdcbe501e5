"""PostgreSQL's own bad cases: malformed URLs, an unreachable server, no driver, and
a server stopped under a writer and a reader — clear errors, no hang, nothing half-written."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers import closed_port
from tests.pg import PgServer, own_server
from tests.recordings.helpers import add_run, add_session, query
from vae.recordings.backends.locator import (
    DriverMissingError,
    Locator,
    LocatorError,
    locate,
    require_driver,
)
from vae.recordings.backends.pg import DatabaseUnavailableError
from vae.recordings.errors import StorageError, StoreError
from vae.recordings.models import EventKind, EventRecord, Side
from vae.recordings.read.reader import RecordingReader
from vae.recordings.write.writer import RecordingWriter

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("postgresql://vae@127.0.0.1:notaport/db", "port"),
        ("postgresql://vae@127.0.0.1:0/db", "port"),
        ("postgresql://vae@127.0.0.1:99999/db", "port"),
        ("postgresql://vae@127.0.0.1:5432", "no database name"),
        ("postgresql://vae@127.0.0.1:5432/", "no database name"),
        ("postgresql:///db", "no host"),
        ("postgresql://vae@127.0.0.1:5432/db?nonsense=1", "nonsense"),
        ("postgresql://vae@127.0.0.1:5432/db#x", "fragment"),
        ("mysql://vae@127.0.0.1/db", "unsupported database URL scheme 'mysql'"),
    ],
)
def test_a_malformed_url_is_refused_naming_the_problem(url: str, why: str) -> None:
    with pytest.raises(LocatorError, match=why):
        locate(url)


def test_paths_stay_paths_and_passwords_stay_hidden() -> None:
    assert locate("vae.db") == Locator(path=Path("vae.db"))
    assert locate("dir/x:y.db").path == Path("dir/x:y.db")  # a colon alone is no URL
    secret = locate("postgres://me:hunter2@db.example:5433/vae?sslmode=require")
    assert secret.is_postgres and str(secret).endswith("sslmode=require")  # round trips
    assert "hunter2" not in secret.display() and "me:***@db.example:5433" in secret.display()
    with pytest.raises(TypeError, match="not a file"):
        os.fspath(secret)


async def test_an_unreachable_server_is_a_clear_error_within_seconds() -> None:
    with closed_port() as port:
        url = f"postgresql://vae@127.0.0.1:{port}/vae"
        t0 = time.monotonic()
        with pytest.raises(DatabaseUnavailableError, match=rf"127\.0\.0\.1:{port}/vae"):
            RecordingReader(url)
        writer = RecordingWriter(url)
        with pytest.raises(DatabaseUnavailableError, match=r"(?i)connection refused|connect"):
            await writer.start()
        assert time.monotonic() - t0 < 5


def test_a_silent_server_times_out() -> None:
    """A port that accepts and never answers: the connect timeout, not a hang."""
    import socket

    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        port = listener.getsockname()[1]
        t0 = time.monotonic()
        with pytest.raises(DatabaseUnavailableError, match=r"(?i)timeout|timed out"):
            RecordingReader(f"postgresql://vae@127.0.0.1:{port}/vae?connect_timeout=2")
        assert time.monotonic() - t0 < 6


def test_no_driver_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("vae.recordings.backends.locator.driver_available", lambda: False)
    with pytest.raises(DriverMissingError, match=r"pip install 'vae\[postgres\]'"):
        require_driver(locate("postgresql://vae@127.0.0.1:5432/vae"))


@pytest.fixture
def server() -> Iterator[PgServer]:
    with own_server() as srv:
        yield srv


def _batch(sid: str, n: int, size: int) -> list[EventRecord]:
    return [
        EventRecord(sid, Side.USER, EventKind.LOG, n * size + i, {"batch": n}) for i in range(size)
    ]


@pytest.mark.parametrize("mode", ["fast", "immediate"])
async def test_server_stopped_under_the_writer(server: PgServer, mode: str) -> None:
    url = server.fresh_database()
    size = 50
    writer = RecordingWriter(url, flush_interval_s=0.01)
    await writer.start()
    reader = RecordingReader(url)
    try:
        await add_run(writer, "r", ["s"])
        sid = await add_session(writer, "r", "s", ended=False)
        for n in range(5):
            await writer.add_events(_batch(sid, n, size))
            await writer.flush()
        await asyncio.to_thread(server.stop, mode)
        t0 = time.monotonic()
        with pytest.raises(StorageError, match="cannot be written"):
            for n in range(5, 50):  # until the writer notices
                await writer.add_events(_batch(sid, n, size))
                await asyncio.wait_for(writer.flush(), 10)
        assert writer.failed.is_set()
        assert time.monotonic() - t0 < 10
        await asyncio.wait_for(writer.add_events(_batch(sid, 99, size)), 2)  # dropped, no wait
        with pytest.raises(StoreError, match="PostgreSQL database"):
            reader.sessions("r")  # a reader says so too
    finally:
        await asyncio.wait_for(writer.close(), 15)  # the final-status retry gives up quickly
        reader.close()
    await asyncio.to_thread(server.start)
    counts = query(url, "SELECT payload_json, count(*) FROM events GROUP BY payload_json")
    # Each batch was one transaction: all of it is there, or none of it.
    assert all(n == size for text, n in counts if "batch" in text), counts
    assert len([1 for text, _ in counts if "batch" in text]) >= 5


NO_DRIVER = "raise ImportError(\"No module named 'psycopg'\")\n"


@pytest.mark.parametrize(
    "argv", [["runs", "list"], ["bridge", "serve", "--address", "127.0.0.1:0"]]
)
def test_the_cli_without_the_driver_names_the_extra(tmp_path: Path, argv: list[str]) -> None:
    (tmp_path / "psycopg").mkdir()
    (tmp_path / "psycopg" / "__init__.py").write_text(NO_DRIVER)
    done = subprocess.run(
        [sys.executable, "-m", "vae.cli.main", *argv, "--db", "postgresql://vae@127.0.0.1:1/vae"],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": f"{tmp_path}{os.pathsep}{ROOT}"},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert "pip install 'vae[postgres]'" in done.stderr
    assert "Traceback" not in done.stderr
