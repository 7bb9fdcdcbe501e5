"""Talking to a PostgreSQL server: connections, errors, and what they mean here.

Only this module and :mod:`.pg_open` / :mod:`.pg_async`
import psycopg (the optional ``postgres`` extra), and only once a
``postgresql://`` store is opened. A :class:`PgConnection` takes the store's
portable SQL (``?`` placeholders) through :mod:`vae.recordings.backends.dialect`, so the
readers' ``self.conn.execute(sql, params).fetchall()`` runs unchanged.

Every connection is made with bounds, so nothing waits on an absent or
silent server for long: ``connect_timeout`` (5 s), TCP keepalives and a TCP
user timeout (a dead peer is noticed within about half a minute); a URL's
own parameters win. Each connection is in autocommit mode (explicit ``BEGIN`` …
``COMMIT`` where a transaction is meant, as on SQLite) and says it is vae
(``application_name``). Readers' connections are read-only and their explicit
transactions are snapshots (``REPEATABLE READ``), as SQLite's WAL readers are.

Results read like SQLite's: ``numeric`` (what ``sum``/``avg`` of integers
give) loads as ``int`` or ``float``; ``bytea`` is ``bytes``. Parameters are
adapted the other way, as ``sqlite3`` stores them: ``bool`` → 0/1, an enum →
its value, and a NUL character in text (which PostgreSQL cannot store)
becomes U+FFFD.

:func:`fault` sorts a psycopg error into ``lock`` (wait and retry),
``storage`` (the server is gone, full, read-only, or the schema vanished:
the writer stops) or ``row`` (this row was refused; keep the others).
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from typing import Any

import psycopg
from psycopg import conninfo
from psycopg.adapt import Buffer, Loader

from vae.recordings.backends.dialect import POSTGRES
from vae.recordings.backends.locator import Locator, LocatorError, require_driver
from vae.recordings.errors import StoreError

#: Defaults a URL's own query parameters override.
DEFAULTS: dict[str, Any] = {
    "connect_timeout": 5,
    "application_name": "vae",
    "keepalives": 1,
    "keepalives_idle": 10,
    "keepalives_interval": 5,
    "keepalives_count": 3,
    # Unacknowledged data to a vanished server: give up after 30 s, not TCP's ~15 min.
    "tcp_user_timeout": 30_000,
}
#: SQLSTATE classes and codes meaning the store cannot be written any more.
_STORAGE_CLASSES = ("08", "53", "57", "58", "XX", "3D", "28")
_STORAGE_CODES = ("25006", "42P01", "42501")
_LOCK_CODES = ("55P03", "40P01", "40001")


class DatabaseUnavailableError(StoreError):
    """The PostgreSQL server cannot be reached or used; the message says why."""


class _NumberLoader(Loader):
    """``numeric`` as SQLite gives it: an int when whole, else a float."""

    def load(self, data: Buffer) -> Any:
        text = bytes(data).decode()
        return int(text) if text.lstrip("-").isdigit() else float(text)


_PLAIN = frozenset({int, float, bytes, type(None)})


def _param(value: Any) -> Any:
    kind = type(value)
    if kind is str:
        return value.replace("\x00", "\ufffd") if "\x00" in value else value
    if kind in _PLAIN:
        return value
    if kind is bool:
        return int(value)
    if isinstance(value, enum.Enum):  # psycopg would store the name; sqlite3 the value
        return _param(value.value)
    if isinstance(value, str | int):
        return _param(str(value) if isinstance(value, str) else int(value))
    return value


def params(row: Sequence[Any]) -> tuple[Any, ...]:
    """A row's parameters as PostgreSQL takes them (see the module docstring)."""
    return tuple(_param(v) for v in row)


def conninfo_for(locator: Locator, **overrides: Any) -> dict[str, Any]:
    """Connection parameters: our defaults, then the URL's, then ``overrides``."""
    require_driver(locator)
    assert locator.url is not None
    try:
        given = conninfo.conninfo_to_dict(locator.url)
    except psycopg.ProgrammingError as exc:
        shown = locator.display()
        raise LocatorError(f"--db {shown!r} is not a valid PostgreSQL URL: {exc}") from exc
    return {**DEFAULTS, **given, **overrides}


def adapt(conn: psycopg.Connection[Any] | psycopg.AsyncConnection[Any]) -> None:
    conn.adapters.register_loader("numeric", _NumberLoader)


def connect(locator: Locator, *, readonly: bool = False, **overrides: Any) -> PgConnection:
    """A connection to the store's database, or :class:`DatabaseUnavailableError`."""
    info = conninfo_for(locator, **overrides)
    try:
        raw = psycopg.connect(**info, autocommit=True)
    except psycopg.Error as exc:
        raise unavailable(locator, exc) from exc
    adapt(raw)
    try:
        if readonly:
            raw.execute("SET default_transaction_read_only = on")
            raw.execute("SET default_transaction_isolation = 'repeatable read'")
    except psycopg.Error as exc:
        raw.close()
        raise unavailable(locator, exc) from exc
    return PgConnection(raw, locator)


def unavailable(locator: Locator, exc: BaseException) -> DatabaseUnavailableError:
    """A clear error for a connection that failed or broke."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    where = locator.display()
    return DatabaseUnavailableError(f"cannot use the PostgreSQL database {where}: {text}")


class PgConnection:
    """A psycopg connection that runs the store's portable SQL (the readers' ``conn``)."""

    dialect = POSTGRES

    def __init__(self, raw: psycopg.Connection[Any], locator: Locator) -> None:
        self.raw = raw
        self.locator = locator

    def execute(self, sql: str, parameters: Sequence[Any] = (), /) -> psycopg.Cursor[Any]:
        try:
            return self.raw.execute(POSTGRES.translate(sql), params(parameters))
        except psycopg.Error as exc:
            if fault(exc, self.raw) == "storage":
                raise unavailable(self.locator, exc) from exc
            raise

    def close(self) -> None:
        self.raw.close()


def fault(exc: BaseException, conn: Any = None) -> str | None:
    """``lock``, ``storage`` or ``row`` for a psycopg error; None for anything else."""
    if not isinstance(exc, psycopg.Error):
        return None
    state = exc.sqlstate or ""
    if state in _LOCK_CODES:
        return "lock"
    if state.startswith(_STORAGE_CLASSES) or state in _STORAGE_CODES:
        return "storage"
    if conn is not None and (conn.broken or conn.closed):
        return "storage"
    if not state and isinstance(exc, psycopg.OperationalError | psycopg.InterfaceError):
        return "storage"  # the client lost the connection: no server code at all
    return "row"


def commit_once(
    locator: Locator, statements: Sequence[tuple[str, Sequence[Any]]], *, timeout_s: float
) -> None:
    """Commit ``statements`` in one transaction on a fresh, short-lived connection.

    A row that violates a constraint (already there) is skipped, the others kept.
    """
    conn = connect(locator, connect_timeout=max(1, round(timeout_s)))
    try:
        conn.raw.execute(f"SET lock_timeout = '{int(timeout_s * 1000)}ms'")
        conn.raw.execute("BEGIN")
        for sql, row in statements:
            conn.raw.execute("SAVEPOINT vae_row")
            try:
                conn.execute(sql, row)
            except psycopg.errors.IntegrityError:
                conn.raw.execute("ROLLBACK TO SAVEPOINT vae_row")
            else:
                conn.raw.execute("RELEASE SAVEPOINT vae_row")
        conn.raw.execute("COMMIT")
    finally:
        conn.close()
