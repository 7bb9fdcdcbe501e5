"""Where a store lives: an SQLite file path or a ``postgresql://`` URL.

Every ``--db`` (and ``VAE_DB``) names a store by a *locator*: a file path
(the embedded default, SQLite) or a PostgreSQL URL
(``postgresql://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?key=value...]``,
``postgres://`` alike, the keys being libpq's). :func:`locate` turns the text
into a :class:`Locator` once, so the rest of vae asks it which back end to
use instead of guessing from strings, and a malformed URL is refused where
it enters, naming what is wrong. Any other ``scheme://`` is refused rather
than taken for a file name.

``str(locator)`` gives the text back unchanged (so it can be handed to
another process); :meth:`Locator.display` hides a password, for logs and
messages. A PostgreSQL locator has no file path: ``os.fspath`` of one raises.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import SplitResult, unquote, urlsplit

from vae.recordings.errors import StoreError

SCHEMES = ("postgresql", "postgres")
EXTRA_HINT = "pip install 'vae[postgres]'"
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")


class LocatorError(StoreError, ValueError):
    """``--db`` is neither a usable file path nor a well-formed PostgreSQL URL."""


class DriverMissingError(StoreError):
    """A PostgreSQL store was asked for, but the ``postgres`` extra is not installed."""


@dataclass(frozen=True)
class Locator:
    """A store: ``path`` for SQLite, ``url`` for PostgreSQL (exactly one is set)."""

    path: Path | None = None
    url: str | None = None

    @property
    def is_postgres(self) -> bool:
        return self.url is not None

    @property
    def backend(self) -> str:
        return "postgresql" if self.is_postgres else "sqlite"

    @property
    def file(self) -> Path:
        """The SQLite file; a PostgreSQL store has none (``TypeError``)."""
        if self.path is None:
            raise TypeError(f"{self.display()} is a PostgreSQL database, not a file")
        return self.path

    def exists(self) -> bool:
        """Whether the SQLite file exists; a server's database is checked when opened."""
        return self.path.exists() if self.path is not None else True

    def display(self) -> str:
        """The locator for messages: a URL's password replaced by ``***``."""
        if self.url is None:
            return str(self.path)
        parts = urlsplit(self.url)
        if parts.password is None:
            return self.url
        host = parts.netloc.rsplit("@", 1)[1]
        user = parts.netloc.rsplit("@", 1)[0].split(":", 1)[0]
        return parts._replace(netloc=f"{user}:***@{host}").geturl()

    def __str__(self) -> str:
        return self.url if self.url is not None else str(self.path)

    def __fspath__(self) -> str:
        return str(self.file)


#: What every API taking a store accepts: a path, a URL, or a parsed locator.
StoreRef = str | os.PathLike[str] | Locator


def locate(value: StoreRef) -> Locator:
    """The :class:`Locator` for a ``--db`` value; raise :class:`LocatorError` if malformed."""
    if isinstance(value, Locator):
        return value
    if isinstance(value, Path):
        return Locator(path=value)
    text = os.fspath(value)
    match = _SCHEME.match(text)
    if match is None:
        return Locator(path=Path(text))
    scheme = match.group(1).lower()
    if scheme not in SCHEMES:
        raise LocatorError(
            f"--db {text!r}: unsupported database URL scheme {scheme!r} "
            "(give a file path for SQLite, or postgresql://USER@HOST:PORT/DATABASE)"
        )
    _check_url(text, urlsplit(text))
    return Locator(url=text)


def _check_url(text: str, parts: SplitResult) -> None:
    shown = Locator(url=text).display() if "@" in parts.netloc else text

    def bad(why: str) -> LocatorError:
        return LocatorError(f"--db {shown!r} is not a valid PostgreSQL URL: {why}")

    try:
        port = parts.port
    except ValueError as exc:
        raise bad(f"the port is not a number from 1 to 65535 ({exc})") from exc
    if port == 0:
        raise bad("the port is not a number from 1 to 65535")
    if not parts.hostname:
        raise bad("no host (postgresql://USER@HOST:PORT/DATABASE)")
    database = unquote(parts.path.lstrip("/"))
    if not database:
        raise bad("no database name after the host (postgresql://USER@HOST:PORT/DATABASE)")
    if "/" in database:
        raise bad(f"the database name {database!r} holds a '/'")
    if parts.fragment:
        raise bad("a '#' fragment has no meaning here")
    if driver_available():
        from psycopg import ProgrammingError, conninfo

        try:
            conninfo.conninfo_to_dict(text)
        except ProgrammingError as exc:
            raise bad(str(exc)) from exc


def driver_available() -> bool:
    """Whether psycopg (the ``postgres`` extra) can be imported (asked for PostgreSQL only)."""
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return False
    return True


def require_driver(locator: Locator) -> None:
    """Raise :class:`DriverMissingError` naming the extra when psycopg is missing."""
    if not driver_available():
        raise DriverMissingError(
            f"{locator.display()} is a PostgreSQL database, and the PostgreSQL driver is not "
            f"installed: {EXTRA_HINT}"
        )
