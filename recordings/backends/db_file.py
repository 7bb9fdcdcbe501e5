"""Checking a store file before SQLite touches it.

SQLite is forgiving in ways that hurt here: connecting to a 0-byte file and
running a query creates a database in it; switching to WAL rewrites the
header of a file we would refuse a moment later; a text file or random bytes
only fail at the first query, deep inside a command, as a traceback. So every
open goes through :func:`inspect` first, which reads the header with plain
file I/O and refuses, with a message naming the file and what is wrong:

- a missing file where one must exist, a directory;
- a 0-byte file when opened for reading (a reader never creates a database;
  a writer — ``vae bridge serve``, ``vae import`` — may initialise it);
- a file that is not SQLite (header magic), a header that cannot be right
  (page size), a file shorter than its header says (truncated).

Schema versions are checked by :mod:`vae.recordings.backends.connection` before any
pragma that writes. Errors raised by SQLite later (a file damaged past the
header, a read-only file or folder) are turned into :class:`DatabaseFileError`
by :func:`describe_sqlite_error`, so callers have one error type to report.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from pathlib import Path

from vae.recordings.errors import StoreError

_MAGIC = b"SQLite format 3\x00"
_HEADER = 100


class DatabaseFileError(StoreError):
    """The file cannot be used as a vae database; the message says why."""


class DatabaseMissingError(DatabaseFileError, FileNotFoundError):
    """No file where one must exist (also a FileNotFoundError for older callers)."""


#: Files (device, inode) whose header this process has checked. Checked once:
#: closing *any* descriptor of a file drops every POSIX lock this process holds
#: on it (SQLite's locks included), so once SQLite may have the file open here,
#: this module must not open and close it again.
_checked: set[tuple[int, int]] = set()


def inspect(path: Path, *, for_write: bool) -> bool:
    """Return True if ``path`` holds data (False: absent or empty, may be created).

    Raise :class:`DatabaseFileError` for anything that is not a usable SQLite file.
    """
    if path.is_dir():
        raise DatabaseFileError(f"{path} is a directory, not a vae database")
    if not path.exists():
        if for_write:
            return False
        raise DatabaseMissingError(f"no vae database at {path}")
    st = path.stat()
    size = st.st_size
    if size == 0:
        if for_write:
            return False
        raise DatabaseFileError(f"{path} is empty (0 bytes), not a vae database")
    if (st.st_dev, st.st_ino) in _checked:
        return True
    _check_header(path, size)
    _checked.add((st.st_dev, st.st_ino))
    return True


def mark_checked(path: Path) -> None:
    """Record that SQLite opened ``path`` here (created it, or after a check)."""
    with contextlib.suppress(OSError):
        st = path.stat()
        _checked.add((st.st_dev, st.st_ino))


def _check_header(path: Path, size: int) -> None:
    try:
        with path.open("rb") as f:
            header = f.read(_HEADER)
    except OSError as exc:
        raise DatabaseFileError(f"cannot read {path}: {exc.strerror or exc}") from exc
    if not header.startswith(_MAGIC):
        raise DatabaseFileError(f"{path} is not a vae database (not an SQLite file)")
    if len(header) < _HEADER:
        raise DatabaseFileError(f"{path} is truncated ({size} bytes, shorter than a header)")
    page_size = int.from_bytes(header[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    if page_size < 512 or page_size & (page_size - 1):
        raise DatabaseFileError(f"{path} has a damaged header (page size {page_size})")
    pages = int.from_bytes(header[28:32], "big")
    valid_count = header[24:28] == header[92:96]
    if valid_count and pages and size < pages * page_size:
        raise DatabaseFileError(
            f"{path} is truncated: {size} bytes, its header says {pages * page_size}"
        )


def _read_only_mount(path: Path) -> bool:
    try:
        return bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except OSError:
        return False


def writable_file(path: Path) -> bool:
    """Whether an existing ``path`` can be written (a read-only mount stops root too)."""
    return not _read_only_mount(path) and os.access(path, os.W_OK)


def writable_folder(path: Path) -> bool:
    """Whether new files can be created beside ``path`` (the -wal/-shm of WAL mode).

    ``os.access`` is not enough: root passes it on a read-only mount, so ask
    the file system itself.
    """
    folder = path.resolve().parent
    try:
        st = os.statvfs(folder)
    except OSError:
        return False
    return not (st.f_flag & os.ST_RDONLY) and os.access(folder, os.W_OK)


def describe_sqlite_error(path: Path, exc: sqlite3.Error) -> DatabaseFileError:
    """A clear :class:`DatabaseFileError` for an SQLite error on ``path``."""
    text = str(exc)
    lowered = text.lower()
    if "readonly" in lowered or "read-only" in lowered:
        why = "is read-only (file or folder); vae needs to write to it here"
    elif "malformed" in lowered or "not a database" in lowered:
        why = "is damaged (not a valid vae database)"
    elif "unable to open" in lowered:
        why = "cannot be opened (missing, or its folder is not writable)"
    elif "locked" in lowered or "busy" in lowered:
        why = "is locked by another process beyond the busy timeout"
    elif "disk" in lowered and ("full" in lowered or "i/o" in lowered):
        why = "cannot be written (disk full or I/O error)"
    else:
        why = "cannot be used"
    return DatabaseFileError(f"{path} {why}: {text}")
