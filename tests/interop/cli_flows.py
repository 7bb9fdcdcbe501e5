"""The documented flows through the real CLI, as the interop tests run them.

``docs/interop.md`` shows, per kind of agent, the same two steps: ``vae run``
on a suite while reference user bots join the bridge, then ``vae rescore``.
The pipecat, WebRTC and LiveKit flow tests each ran them with their own copy
of these helpers; copies drift (one waited 240 s, another 120 s), so they
share these.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import sys
from pathlib import Path
from typing import Any

from tests.interop.conftest import ROOT
from vae.bots.brains.scripted import play_script
from vae.bots.runner import BotConfig, run_bots

SUITE = ROOT / "examples" / "suite"


async def vae(*args: str) -> tuple[int, str, str]:
    """``python -m vae.cli.main ARGS`` from the repository root: exit code, stdout, stderr."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "vae.cli.main", *args,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, cwd=ROOT,
    )  # fmt: skip
    out, err = await proc.communicate()
    return int(proc.returncode or 0), out.decode(), err.decode()


def suite_of(tmp_path: Path, *names: str) -> Path:
    """A folder holding the named scenarios of the example suite."""
    folder = tmp_path / "suite"
    folder.mkdir()
    for name in names:
        shutil.copy(SUITE / f"{name}.yaml", folder)
    return folder


async def run_with_users(
    address: str, args: list[str], concurrency: int = 1, timeout_s: float = 240
) -> tuple[int, str, str]:
    """``vae run ARGS --bridge ADDRESS --json`` while scripted user bots play its sessions."""
    stop = asyncio.Event()
    user = BotConfig(address, "user", lambda: play_script, concurrency=concurrency)
    users = asyncio.create_task(run_bots(user, stop))
    try:
        async with asyncio.timeout(timeout_s):
            return await vae("run", *args, "--bridge", address, "--json")
    finally:
        stop.set()
        await users


async def rescored(run_id: str, db: Path) -> tuple[int, list[dict[str, Any]], str]:
    """``vae rescore`` of a run without a judge: exit code, its sessions' JSON, stderr."""
    code, out, err = await vae("rescore", "--run", run_id, "--db", str(db),
                               "--no-judge", "--allow-unscored", "--json")  # fmt: skip
    return code, json.loads(out)["sessions"] if out.strip() else [], err


def verdicts(session: dict[str, Any]) -> dict[str, str]:
    """A rescored session's verdict per signal."""
    return {x["signal"]: x["verdict"] for x in session["scores"]}
