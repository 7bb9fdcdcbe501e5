"""A real PostgreSQL server for tests, from Debian's ``postgresql`` package.

:class:`PgServer` runs ``initdb`` and ``pg_ctl`` in a fresh folder under the
system temp dir and serves on a free loopback port (TCP only, no Unix
socket), trusting local connections for its one superuser ``vae``. PostgreSQL
refuses to run as root, so as root (CI, this machine) the server runs as the
``postgres`` user the package creates (through ``setpriv``, so Python can
still ``vfork``), in a folder handed to that user; as anyone else it runs as
the current user.

The test session shares one server per pytest process (one per xdist worker,
so workers never share state or race on a port), started the first time a
test asks for it; each test gets a fresh database (``fresh_database``).
Tests that stop or break the server start their own.

On the shared server durability settings are off (``fsync``,
``synchronous_commit``): it only ever holds throw-away test databases, and a
test that kills a *client* still sees every commit the server acknowledged.
A server a test stops or crashes (:func:`own_server`) keeps PostgreSQL's
durable defaults.
"""

from __future__ import annotations

import contextlib
import glob
import itertools
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path
from typing import Any

INSTALL_HINT = "bash scripts/ci_setup_postgres.sh (apt-get install postgresql; pip install psycopg)"
SUPERUSER = "vae"


def bindir() -> Path | None:
    """The newest installed PostgreSQL's bin folder (Debian's layout), or ``initdb`` on PATH."""
    found = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"),
        key=lambda p: int(Path(p).parts[-3]) if Path(p).parts[-3].isdigit() else 0,
    )
    if found:
        return Path(found[-1]).parent
    which = shutil.which("initdb")
    return Path(which).resolve().parent if which else None


def problem() -> str | None:
    """Why a server cannot be started here, or None."""
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return "psycopg is not installed"
    if bindir() is None:
        return "PostgreSQL (initdb, pg_ctl) is not installed"
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            return "running as root and there is no 'postgres' user to run the server as"
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class PgServer:
    """One PostgreSQL server in a temporary folder; :meth:`start` / :meth:`stop`."""

    def __init__(self, *, durable: bool = False) -> None:
        self.durable = durable
        found = bindir()
        assert found is not None, "PostgreSQL is not installed"
        self.bindir = found
        self.folder = Path(tempfile.mkdtemp(prefix="vae-pg-"))
        self.data = self.folder / "data"
        self.log = self.folder / "server.log"
        self.port = 0
        self._names = itertools.count(1)
        self._as_user: list[str] = []
        if os.geteuid() == 0:
            user = pwd.getpwnam("postgres")
            os.chown(self.folder, user.pw_uid, user.pw_gid)
            # setpriv, not Popen(user=...): switching users in Python forces fork()
            # instead of vfork(), and a fork beside gRPC's threads can abort the child.
            self._as_user = [
                "setpriv", f"--reuid={user.pw_uid}", f"--regid={user.pw_gid}", "--clear-groups",
            ]  # fmt: skip
        os.chmod(self.folder, 0o700)
        self._run(
            "initdb", "-D", str(self.data), "-U", SUPERUSER, "--auth=trust",
            "-E", "UTF8", "--locale=C.UTF-8", "--no-sync",
        )  # fmt: skip

    def _run(self, tool: str, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*self._as_user, str(self.bindir / tool), *args],
            capture_output=True,
            text=True,
            check=check,
            cwd=self.folder,
            timeout=60,
        )

    def start(self) -> None:
        """Start on a free port (a port taken in the meantime: try another)."""
        last = ""
        for _ in range(5):
            self.port = self.port or _free_port()
            options = (
                f"-p {self.port} -c listen_addresses=127.0.0.1 -c unix_socket_directories=''"
                " -c shared_buffers=16MB -c max_connections=100"
            )
            if not self.durable:
                options += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
            done = self._run(
                "pg_ctl", "-D", str(self.data), "-l", str(self.log), "-o", options,
                "-w", "-t", "30", "start", check=False,
            )  # fmt: skip
            if done.returncode == 0:
                return
            last = done.stderr + self.log.read_text(errors="replace")[-2000:]
            self.port = 0
        raise RuntimeError(f"PostgreSQL did not start: {last}")

    def stop(self, mode: str = "fast") -> None:
        self._run("pg_ctl", "-D", str(self.data), "-m", mode, "-w", "stop", check=False)

    def remove(self) -> None:
        self.stop("immediate")
        shutil.rmtree(self.folder, ignore_errors=True)

    @property
    def running(self) -> bool:
        return self._run("pg_ctl", "-D", str(self.data), "status", check=False).returncode == 0

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{SUPERUSER}@127.0.0.1:{self.port}/{database}"

    def admin(self, sql: str) -> None:
        """Run one statement as the superuser in the maintenance database."""
        import psycopg

        with psycopg.connect(self.url(), autocommit=True, connect_timeout=10) as conn:
            conn.execute(sql)  # type: ignore[arg-type]

    def drop_database(self, url: str) -> None:
        """Drop a database of :meth:`fresh_database`, closing whatever still uses it."""
        name = url.rsplit("/", 1)[1]
        if self.running:
            self.admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    def fresh_database(self) -> str:
        """A new, empty database; return its URL."""
        name = f"t{os.getpid()}_{next(self._names)}"
        self.admin(f'CREATE DATABASE "{name}" TEMPLATE template0')
        return self.url(name)


@contextlib.contextmanager
def own_server() -> Any:
    """A server of the test's own, for tests that stop or break it (durable: a crash
    loses nothing it acknowledged)."""
    server = PgServer(durable=True)
    try:
        server.start()
        yield server
    finally:
        server.remove()
