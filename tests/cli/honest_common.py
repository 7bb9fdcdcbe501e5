"""Helpers of the failure-table test (tests/cli/test_honest_verdicts.py)."""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import Callable
from pathlib import Path

from click.testing import CliRunner

from cli.main import vae
from recordings.reader import RecordingReader

ROOT = Path(__file__).resolve().parents[2]
IMPORTED = "2024-06-01T10-22-33"
#: Every gating signal, so a judge signal that is not decided shows in the composite.
ALL_SIGNALS = {"*": {"success_signals": ["ACTION_MATCH", "NL_ASSERTION", "JUDGE_PASSED"]}}


async def cli(*args: str) -> tuple[int, str, str]:
    """`vae ...` in a worker thread (it runs its own event loop), as a user would."""
    result = await asyncio.to_thread(CliRunner().invoke, vae, list(args))
    return result.exit_code, result.stdout, result.stderr


async def until(check: Callable[[], bool], limit_s: float = 20.0) -> None:
    """Wait for an observable condition (polling the store), failing after ``limit_s``."""
    deadline = time.monotonic() + limit_s
    while not check():
        assert time.monotonic() < deadline, "condition not reached"
        await asyncio.sleep(0.05)


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


def verdicts(reader: RecordingReader, scoring_id: str, signal: str) -> dict[str, str]:
    return {s.session_id: str(s.verdict) for s in reader.scores(scoring_id) if s.signal == signal}
