"""A step where the bridge itself was starved is harness-limited, and never the agent's knee.

A bridge in its own process (``vae bridge serve``), its own caller and agent
bots (the agent with a capacity of 3, far above these steps), and
``vae load --bridge`` stepping 1 then 2 calls at once. While step 2's calls
are live the test stops the bridge process (SIGSTOP) for three seconds, then
lets it go on: the calls' latency rises far above twice step 1's, which
would be a knee; but the bridge's clock skipped its frames meanwhile, so the
step is marked harness-limited, with the reason, and the knee search leaves
it out. About half a minute.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.cli.load.runs import finish, live_sessions, runs_like, start_load
from tests.helpers import ROOT, start_bridge, wait_until

#: How long the bridge is stopped: long enough to skip frames (> 10 ticks) and delay replies.
STOPPED_S = 3.0


async def _bot(role: str, address: str, *extra: str) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable, "-m", "vae.cli.main", "bot", role, "--bridge", address,
        "--concurrency", "2", "--tts", "buzz", "--log-level", "warning", *extra,
        cwd=ROOT, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL,
    )  # fmt: skip


@pytest.fixture
async def bridge_and_bots(tmp_path: Path) -> AsyncIterator[tuple[Path, str, int]]:
    db = tmp_path / "bridge.db"
    bridge, address = await start_bridge(db)
    bots = [await _bot("user", address), await _bot("agent", address, "--capacity", "3")]
    try:
        yield db, address, bridge.pid
    finally:
        for proc in [*bots, bridge]:
            if proc.returncode is None:
                os.kill(proc.pid, signal.SIGCONT)
                proc.terminate()
        for proc in [*bots, bridge]:
            await asyncio.wait_for(proc.wait(), 30)


@pytest.mark.timeout(240)
async def test_a_starved_bridge_makes_its_step_harness_limited_and_never_the_knee(
    bridge_and_bots: tuple[Path, str, int],
) -> None:
    db, address, bridge_pid = bridge_and_bots
    load = await start_load(db, "--bridge", address, "--steps", "1,2", "--step-duration", "4s")
    await wait_until(lambda: bool(runs_like(db, "load-%-step2-c2")), 90, "step 2's run",
                     alive=[load])  # fmt: skip
    step2 = runs_like(db, "load-%-step2-c2")[0][0]
    await wait_until(lambda: live_sessions(db, step2) == 2, 30, "step 2's calls", alive=[load])
    os.kill(bridge_pid, signal.SIGSTOP)
    try:
        await asyncio.sleep(STOPPED_S)  # the fault's length, not a synchronisation
    finally:
        os.kill(bridge_pid, signal.SIGCONT)
    code, doc, err = await finish(load, 120)
    assert code == 0, err[-3000:]
    one, two = doc["steps"]
    assert one["harness_limited"] is False, one["harness"]
    assert two["harness_limited"] is True
    reasons = " ".join(two["harness"]["reasons"])
    assert f"bridge pid {bridge_pid}" in reasons and "frames dropped" in reasons, reasons
    (process,) = two["harness"]["processes"]
    assert process["dropped_frames"] > 10 * 2 and process["role"] == "bridge"
    # The stall made the agent look slow: without the harness check this would be the knee.
    assert two["latency_ms"]["p95"] > 2 * one["latency_ms"]["p95"], (one, two)
    assert doc["knee"] is None
    assert doc["knee_detail"]["excluded"] == {"2": "harness-limited"}
    assert doc["largest_honest_concurrency"] == 1
    assert any("workers" in line for line in doc["advice"]), doc["advice"]
