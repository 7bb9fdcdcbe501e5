"""A full disk during an in-process ``vae rescore``: exit 1 with a message, no hang.

The database sits on a small tmpfs (tests run as root); a filler file takes
every free byte before the rescore starts writing its scoring. The command
must end within a bounded time with ``error:`` naming the failure and exit
code 1, without a traceback, and leave a database that passes SQLite's
integrity check with the recordings untouched.
"""

from __future__ import annotations

import contextlib
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.factories import SessionSpec, conversation, scenario, write_run_sync
from tests.tmpfs import small_tmpfs
from vae.cli.main import vae

RUN = "2024-06-01T10-00-00"


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    with small_tmpfs(tmp_path, "6m") as disk:
        yield disk


def counts(db: Path) -> tuple[int, int, int]:
    conn = sqlite3.connect(db)
    try:
        return tuple(  # type: ignore[return-value]
            conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]
            for t in ("sessions", "audio_segments", "events")
        )
    finally:
        conn.close()


def test_disk_full_during_rescore(small_disk: Path) -> None:
    db = small_disk / "vae.db"
    names = [f"s{i}" for i in range(4)]
    write_run_sync(
        db,
        [scenario(n) for n in names],
        [SessionSpec(n, turns=conversation(3)) for n in names],
        run_id=RUN,
    )
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    before = counts(db)
    filler = small_disk / "filler"
    with filler.open("wb") as f, contextlib.suppress(OSError):
        while True:
            f.write(bytes(64 * 1024))
            f.flush()
    t0 = time.monotonic()
    result = CliRunner().invoke(vae, ["rescore", "--run", RUN, "--db", str(db)])
    elapsed = time.monotonic() - t0
    assert result.exit_code == 1, result.output
    assert "error:" in result.output and "full" in result.output, result.output
    assert "Traceback" not in result.output
    assert not isinstance(result.exception, Exception) or isinstance(result.exception, SystemExit)
    assert elapsed < 30, elapsed
    filler.unlink()
    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    conn.close()
    assert counts(db) == before
