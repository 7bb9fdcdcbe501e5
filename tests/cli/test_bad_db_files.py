"""Bad database files, for every command that opens one.

Each case: a clear ``error:`` line (or usage error), exit code 1 or 2, no
Python traceback, and the file byte-for-byte unchanged (no WAL switch, no
migration, no database created inside an empty file). Readers succeed
where reading is possible (a read-only file or folder) and leave the file as
it was; writers must refuse, except ``import`` creating a database where
there is none.

Read-only cases: the tests run as root, which ignores permission bits, so a
read-only *folder* is a tmpfs remounted read-only and a read-only *file* is a
read-only bind mount of the file over itself — what the kernel enforces for
root too. The serve commands run as subprocesses with a timeout (on a bad
file they must exit, not serve).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.factories import SessionSpec, conversation, scenario, write_run_sync
from tests.interop import nemo_fixture
from vae.cli.main import vae

RUN = "2024-06-01T10-00-00"


def _mount(*args: str) -> None:
    subprocess.run(["mount", *args], check=True, capture_output=True)


def _umount(path: Path) -> None:
    subprocess.run(["umount", str(path)], check=False, capture_output=True)


@pytest.fixture(scope="module")
def good_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("good") / "vae.db"
    write_run_sync(db, [scenario("s1")], [SessionSpec("s1", turns=conversation(2))], run_id=RUN)
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return db


def _digest(path: Path) -> str | None:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else None


def make_case(kind: str, good: Path, tmp: Path, stack: list[Path]) -> Path:
    db = tmp / "case" / "vae.db"
    db.parent.mkdir()
    if kind == "nonexistent":
        return db
    if kind == "empty":
        db.write_bytes(b"")
    elif kind == "random":
        db.write_bytes(os.urandom(8192))
    elif kind == "text":
        db.write_text("this is a text file, not a database\n" * 50)
    elif kind == "foreign":
        conn = sqlite3.connect(db)
        conn.execute("CREATE TABLE notes (body TEXT)")
        conn.execute("INSERT INTO notes VALUES ('not vae')")
        conn.commit()
        conn.close()
    elif kind == "truncated":
        data = good.read_bytes()
        db.write_bytes(data[: len(data) // 2])
    elif kind == "newer":
        shutil.copy(good, db)
        conn = sqlite3.connect(db)
        conn.execute(
            "INSERT INTO schema_migrations (id, name, applied_ns) VALUES (999, '0999_future', 0)"
        )
        conn.execute("PRAGMA user_version = 999")
        conn.commit()
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.execute("PRAGMA journal_mode = DELETE")
        conn.close()
    elif kind == "readonly-file":
        shutil.copy(good, db)
        _mount("--bind", str(db), str(db))
        stack.append(db)
        _mount("-o", "remount,ro,bind", str(db))
    elif kind == "readonly-folder":
        _mount("-t", "tmpfs", "-o", "size=8m", "tmpfs", str(db.parent))
        stack.append(db.parent)
        shutil.copy(good, db)
        _mount("-o", "remount,ro", str(db.parent))
    return db


@pytest.fixture
def case_db(good_db: Path, tmp_path: Path) -> Iterator[Callable[[str], Path]]:
    stack: list[Path] = []
    yield lambda kind: make_case(kind, good_db, tmp_path, stack)
    for path in reversed(stack):
        _umount(path)


KINDS = [
    "nonexistent",
    "empty",
    "random",
    "text",
    "foreign",
    "truncated",
    "newer",
    "readonly-file",
    "readonly-folder",
]
READERS: dict[str, list[str]] = {
    "runs-list": ["runs", "list"],
    "runs-show": ["runs", "show", RUN],
    "scores-list": ["scores", "list", RUN],
    "report": ["report", RUN, "-o", "{out}/r.html"],
    "export": ["export", RUN, "--format", "json", "-o", "{out}/x"],
}
WRITERS: dict[str, list[str]] = {
    "rescore": ["rescore", "--run", RUN],
    "import": ["import", "nemo", "{nemo}"],
}
#: Where reading is possible, a reader succeeds; a writer never may.
READABLE = {"readonly-file", "readonly-folder"}
#: The one writer that creates a database where there is none: importing
#: into a missing file. Every other writer refuses a missing or empty file.
CREATABLE = {("import", "nonexistent")}


def _args(template: list[str], db: Path, tmp: Path) -> list[str]:
    nemo = tmp / "nemo"
    if "{nemo}" in template and not nemo.exists():
        nemo_fixture.build(nemo)
        nemo = next(p for p in nemo.iterdir() if p.is_dir())
    elif "{nemo}" in template:
        nemo = next(p for p in nemo.iterdir() if p.is_dir())
    out = tmp / "out"
    filled = [a.replace("{out}", str(out)).replace("{nemo}", str(nemo)) for a in template]
    return [*filled, "--db", str(db)]


def _check_refused(code: int, output: str, db: Path, before: str | None) -> None:
    assert "Traceback" not in output, output
    assert code in (1, 2), output
    assert "error" in output.lower(), output
    assert _digest(db) == before
    if before is None:
        assert not db.exists()
    assert not Path(f"{db}-wal").exists() or before is not None


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("command", [*READERS, *WRITERS])
def test_bad_database_file(
    command: str, kind: str, case_db: Callable[[str], Path], tmp_path: Path
) -> None:
    db = case_db(kind)
    before = _digest(db)
    template = READERS.get(command) or WRITERS[command]
    result = CliRunner().invoke(vae, _args(template, db, tmp_path))
    output = result.output + (str(result.exception) if result.exception else "")
    if isinstance(result.exception, SystemExit) or result.exception is None:
        pass
    else:  # an uncaught exception is a traceback for the user
        pytest.fail(f"uncaught {type(result.exception).__name__}: {result.exception}")
    writer = command in WRITERS
    if kind in READABLE and not writer:
        assert result.exit_code == 0, output
        assert "Traceback" not in output, output
        assert _digest(db) == before
        return
    if (command, kind) in CREATABLE:
        assert result.exit_code == 0, output
        assert "Traceback" not in output, output
        assert db.is_file()
        return
    _check_refused(result.exit_code, output, db, before)
    if kind == "empty":
        assert "is empty (0 bytes)" in output
        assert db.stat().st_size == 0
    if kind == "newer":
        assert "newer" in output
    if kind in ("random", "text"):
        assert "not a vae database" in output
    if kind == "foreign":
        assert "another program" in output
    if kind == "truncated":
        assert "truncated" in output or "damaged" in output


def _serve(args: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "vae.cli.main", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])},
    )


@pytest.mark.parametrize("kind", ["random", "truncated", "newer", "readonly-folder"])
@pytest.mark.parametrize("service", ["bridge", "scorer"])
def test_serve_refuses_at_start(service: str, kind: str, case_db: Callable[[str], Path]) -> None:
    db = case_db(kind)
    before = _digest(db)
    got = _serve([service, "serve", "--db", str(db), "--address", "127.0.0.1:0"])
    assert got.returncode == 1, got.stderr
    assert "Traceback" not in got.stderr, got.stderr
    assert "error:" in got.stderr
    assert _digest(db) == before
    assert not Path(f"{db}-wal").exists()


def test_empty_file_is_not_turned_into_a_database_by_a_reader(tmp_path: Path) -> None:
    db = tmp_path / "vae.db"
    db.write_bytes(b"")
    result = CliRunner().invoke(vae, ["runs", "list", "--db", str(db)])
    assert result.exit_code == 1
    assert "empty (0 bytes)" in result.output
    assert db.stat().st_size == 0
