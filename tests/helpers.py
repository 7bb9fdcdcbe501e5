"""Helpers that tests in several packages share, kept in one place.

Waiting on an observable condition, invoking the CLI as a user would, a port
for a server or one nothing listens on, a bridge in its own process, and a
fake connector's config: each was written more than once, and copies drift
(one poll checks that the processes are still alive, another forgets), so
every test takes them from here.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import shutil
import socket
import sqlite3
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from click.testing import CliRunner

from vae.bridge.v1 import bridge_pb2
from vae.cli.main import vae

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE_SUITE = ROOT / "examples" / "suite"


def example_expectations() -> dict[str, bool]:
    """Scenario name -> built to fail (the ``expect-fail`` tag), from the example suite's files."""
    import yaml

    out = {}
    for path in sorted(EXAMPLE_SUITE.glob("*.yaml")):
        doc = yaml.safe_load(path.read_text())
        out[doc["name"]] = "expect-fail" in doc.get("tags", [])
    return out


def untag_expect_fail(path: Path) -> None:
    """Remove the ``expect-fail`` tag from a scenario file (as a user who forgot it)."""
    text, n = re.subn(r"expect-fail(, )?", "", path.read_text())
    assert n == 1, f"{path} has no expect-fail tag"
    path.write_text(text)


def copy_example_suite(dest: Path, *, untag: str = "") -> Path:
    """The example suite copied to ``dest``; ``untag``: that scenario loses its ``expect-fail``
    tag, so it is expected to pass while it is built to fail."""
    shutil.copytree(EXAMPLE_SUITE, dest)
    if untag:
        untag_expect_fail(dest / f"{untag}.yaml")
    return dest


async def cli(*args: str) -> tuple[int, str, str]:
    """`vae ...` in a worker thread (it runs its own event loop), as a user would."""
    result = await asyncio.to_thread(CliRunner().invoke, vae, list(args))
    return result.exit_code, result.stdout, result.stderr


async def wait_until(
    check: Callable[[], bool],
    limit_s: float,
    what: str = "the condition",
    alive: Sequence[asyncio.subprocess.Process] = (),
) -> None:
    """Poll an observable condition, failing after ``limit_s`` or as soon as a
    process in ``alive`` has exited (it would never make the condition true)."""
    deadline = time.monotonic() + limit_s
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        for proc in alive:
            assert proc.returncode is None, f"a process exited (code {proc.returncode})"
        await asyncio.sleep(0.05)


def free_port() -> int:
    """A port that was free a moment ago, for a server the test starts itself.

    Only for servers that must be given a number (a subprocess or a library
    that cannot bind port 0 and say where): prefer binding port 0 and reading
    the address back, which no other test can race.
    """
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def closed_port() -> Iterator[int]:
    """A port bound but not listening, held for the ``with`` block: a connection
    to it is refused, and no other test can start a server on it meanwhile."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        yield int(s.getsockname()[1])


def count(db: Path, sql: str) -> int:
    """One number from the store file (another process may be writing it)."""
    with sqlite3.connect(db) as conn:
        return int(conn.execute(sql).fetchone()[0])


async def start_bridge(
    db: Path, address: str = "127.0.0.1:0", limit_s: float = 20.0, *extra: str
) -> tuple[asyncio.subprocess.Process, str]:
    """`vae bridge serve` in its own process; returns it and the address it prints.

    On the default ``127.0.0.1:0`` the kernel picks the port, so parallel tests
    never race for one; pass the returned address to restart on the same port.
    ``extra`` options are passed on (e.g. ``--workers 2``).
    """
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "vae.cli.main", "bridge", "serve", "--address", address,
        "--db", str(db), "--log-level", "warning", "--final-state-timeout", "2", *extra,
        cwd=ROOT,
        stdout=asyncio.subprocess.PIPE,
    )  # fmt: skip
    assert proc.stdout is not None
    line = await asyncio.wait_for(proc.stdout.readline(), limit_s)
    assert line.startswith(b"vae bridge listening on "), line
    return proc, line.decode().rsplit(" ", 1)[1].strip()


def fake_connector(url: str, **options: object) -> bridge_pb2.ConnectorConfig:
    """The config of the bridge's built-in fake connector (a scripted bot in-process)."""
    return bridge_pb2.ConnectorConfig(kind="fake", url=url, options_json=json.dumps(options))
