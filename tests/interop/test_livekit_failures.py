"""LiveKit agents that fail: each session ends with its own stop reason and stderr tail.

Four runs share one bridge at once: the example agent, an agent file that
raises while it is imported, one that exits mid-call and one that never
speaks (all real LiveKit agents, from ``tests/interop/livekit_agents``). The
three failures end ``agent_start_failed``, ``agent_crashed`` and
``agent_silent`` with the agents' own error lines recorded; the example's
session finishes as usual, and no process is left.
"""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.interop.conftest import start_run, watch_until_done
from tests.interop.livekit_support import (
    BOOK,
    BROKEN,
    alive,
    connector,
    console_agents,
    stand_ins,  # noqa: F401  (a fixture)
)
from vae.bots.brains.scripted import play_script
from vae.bots.runner import BotConfig, run_bots
from vae.bridge.v1 import bridge_pb2_grpc
from vae.bridge_service.server import BridgeServer
from vae.recordings.models import EventKind, SessionRecord
from vae.recordings.read.reader import RecordingReader


@pytest.mark.timeout(240)  # real-time sessions on a loaded CI machine
async def test_failing_agents_end_with_their_reasons_and_the_others_finish(
    bridge: BridgeServer,
    bridge_stub: bridge_pb2_grpc.BridgeServiceStub,
    stand_ins: Any,  # noqa: F811
    tmp_path: Path,
    db_path: Path,
) -> None:
    folder = Path(shutil.copytree(BROKEN, tmp_path / "agents"))
    runs: dict[str, str] = {}
    for name, agent, options in [
        ("good", None, {}),
        ("import_error", folder / "import_error.py", {}),
        ("exits_mid_call", folder / "exits_mid_call.py", {}),
        ("never_speaks", folder / "never_speaks.py", {"speak_timeout_s": 6}),
    ]:
        config = connector(stand_ins, agent, **options) if agent else connector(stand_ins)
        runs[name] = await start_run(bridge_stub, [{**BOOK, "name": name}], agent_connector=config)

    def user(run_id: str) -> BotConfig:
        return BotConfig(bridge.address, "user", lambda: play_script, run_filter=run_id,
                         max_sessions=1)  # fmt: skip

    talking = [run_bots(user(runs[n]), asyncio.Event()) for n in ("good", "exits_mid_call",
                                                                  "never_speaks")]  # fmt: skip
    async with asyncio.timeout(120):
        await asyncio.gather(*(watch_until_done(bridge_stub, r) for r in runs.values()), *talking)

    with RecordingReader(db_path) as r:
        session: dict[str, SessionRecord] = {n: r.sessions(run)[0] for n, run in runs.items()}
        errors = {
            n: [e.payload for e in r.events(s.session_id) if e.kind is EventKind.SESSION_ERROR]
            for n, s in session.items()
        }
    assert session["good"].stop_reason == "end_tool"

    broken = session["import_error"]
    assert broken.stop_reason == "agent_start_failed"
    assert "exited with status 1" in broken.stop_detail
    assert "ImportError: import_error agent: the package 'restaurant_model'" in broken.stop_detail

    crashed = session["exits_mid_call"]
    assert crashed.stop_reason == "agent_crashed"
    assert "exited with status 3 mid-call" in crashed.stop_detail
    (error,) = errors["exits_mid_call"]
    assert error["stop_reason"] == "agent_crashed"
    assert "out of memory, exiting" in error["stderr_tail"]
    assert crashed.agent_turns >= 1  # it greeted before it went

    silent = session["never_speaks"]
    assert silent.stop_reason == "agent_silent"
    assert "within speak_timeout_s (6 s)" in silent.stop_detail
    (error,) = errors["never_speaks"]
    assert "never_speaks agent: I only listen" in error["stderr_tail"]

    pids = [int(s.agent_bot["labels"]["pid"]) for s in session.values() if s.agent_bot]
    assert len(pids) == 3 and not [p for p in pids if alive(p)]
    assert not console_agents(str(tmp_path))
