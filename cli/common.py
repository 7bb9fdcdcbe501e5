"""Shared options and output helpers for every ``vae`` command.

Exit codes: 0 ok, 1 failed (the work ran and did not succeed, or the store
refused), 2 usage (click's own, and bad references such as an unknown run).
Every option can be set from the environment: the common ones have explicit
names (``VAE_DB``, ``VAE_BRIDGE``, ``VAE_SCORER``, ``VAE_TOKEN``,
``VAE_LOG_LEVEL``), the rest follow click's ``VAE_<COMMAND>_<OPTION>``.

``--db`` takes a store locator: an SQLite file path (the default) or a
``postgresql://`` URL; commands receive a
:class:`~vae.recordings.backends.locator.Locator`.
"""

from __future__ import annotations

import functools
import json
import logging
import sqlite3
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

if TYPE_CHECKING:
    from vae.recordings.backends.locator import Locator

F = TypeVar("F", bound=Callable[..., Any])

DEFAULT_DB = "vae.db"


class StoreParam(click.ParamType):  # type: ignore[type-arg]
    """``--db``: an SQLite file path or a ``postgresql://`` URL, as a Locator.

    A malformed URL, another ``scheme://``, a directory, or a PostgreSQL URL
    without the ``postgres`` extra installed is a usage error (exit 2).
    """

    name = "PATH|URL"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        from vae.recordings.backends.locator import (
            EXTRA_HINT,
            Locator,
            LocatorError,
            driver_available,
            locate,
        )

        if isinstance(value, Locator):
            return value
        try:
            locator = locate(value)
        except LocatorError as exc:
            self.fail(str(exc), param, ctx)
        if locator.path is not None and locator.path.is_dir():
            self.fail(f"{locator.path} is a directory, not a vae database", param, ctx)
        if locator.is_postgres and not driver_available():
            self.fail(
                f"{locator.display()} is a PostgreSQL database and the driver is not "
                f"installed: {EXTRA_HINT}",
                param,
                ctx,
            )
        return locator


STORE = StoreParam()

db_option = click.option(
    "--db",
    "db_path",
    type=STORE,
    default=DEFAULT_DB,
    show_default=True,
    envvar="VAE_DB",
    help="The vae database: a file (SQLite) or postgresql://USER@HOST:PORT/DB (env VAE_DB).",
)
json_option = click.option(
    "--json", "as_json", is_flag=True, help="Print machine-readable JSON on stdout."
)
log_level_option = click.option(
    "--log-level",
    type=click.Choice(["debug", "info", "warning", "error"], case_sensitive=False),
    default="info",
    show_default=True,
    envvar="VAE_LOG_LEVEL",
    help="Logging verbosity (env VAE_LOG_LEVEL).",
)
token_option = click.option(
    "--token",
    envvar="VAE_TOKEN",
    default=None,
    help="Bearer token: a server requires it, a client sends it (env VAE_TOKEN).",
)


def tls_server_options(func: F) -> F:
    """``--tls-cert``/``--tls-key`` for a server command (both or neither)."""
    cert = click.option(
        "--tls-cert",
        type=click.Path(exists=True, dir_okay=False, path_type=Path),
        envvar="VAE_TLS_CERT",
        help="PEM certificate; with --tls-key serves TLS (env VAE_TLS_CERT).",
    )
    key = click.option(
        "--tls-key",
        type=click.Path(exists=True, dir_okay=False, path_type=Path),
        envvar="VAE_TLS_KEY",
        help="PEM private key of --tls-cert (env VAE_TLS_KEY).",
    )
    return cert(key(func))


#: The logger namespace of vae's own modules (``vae.bridge``, ``vae.scorer.judge``, ...).
OWN_LOGGER = "vae"


def setup_logging(level: str) -> None:
    """Log to stderr: vae's own loggers at ``level``, everything else from WARNING.

    Third-party libraries (the HTTP client under ``openai`` logs every request
    at INFO, whatever its logger is called) stay quiet unless ``level`` is
    ``debug``, which shows everything.
    """
    wanted = getattr(logging, level.upper())
    logging.basicConfig(
        level=wanted,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    # Set explicitly: basicConfig does nothing when logging is already configured.
    logging.getLogger().setLevel(
        wanted if wanted <= logging.DEBUG else max(wanted, logging.WARNING)
    )
    logging.getLogger(OWN_LOGGER).setLevel(wanted)


def print_json(value: Any) -> None:
    click.echo(json.dumps(value, indent=2, ensure_ascii=False, default=str))


def store_errors(func: F) -> F:
    """Turn store errors into clear messages and the documented exit codes."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from vae.recordings.backends.locator import LocatorError
        from vae.recordings.errors import RunSelectionError, StoreError
        from vae.recordings.identifiers import InvalidIdentifier

        try:
            return func(*args, **kwargs)
        except (RunSelectionError, InvalidIdentifier, LocatorError) as exc:
            raise click.UsageError(str(exc)) from exc
        except FileNotFoundError as exc:
            raise click.UsageError(str(exc)) from exc
        except StoreError as exc:
            click.echo(f"error: {exc}", err=True)
            sys.exit(1)
        except sqlite3.Error as exc:
            # A file damaged past its header shows only when a query reads it.
            from vae.recordings.backends.db_file import describe_sqlite_error

            path = kwargs.get("db_path")
            click.echo(f"error: {describe_sqlite_error(Path(str(path or '?')), exc)}", err=True)
            sys.exit(1)
        except Exception as exc:
            if not is_postgres_error(exc):
                raise
            from vae.recordings.backends.locator import locate
            from vae.recordings.backends.pg import unavailable

            where = locate(kwargs.get("db_path") or "?")
            click.echo(f"error: {unavailable(where, exc)}", err=True)
            sys.exit(1)

    return wrapper  # type: ignore[return-value]


def is_postgres_error(exc: BaseException) -> bool:
    """A psycopg error (checked without importing psycopg, an optional extra)."""
    return type(exc).__module__.split(".")[0] == "psycopg"


def shown(db: Locator | Path | str) -> str:
    """``--db`` as a message may show it (a URL's password hidden)."""
    display = getattr(db, "display", None)
    return str(display()) if callable(display) else str(db)
