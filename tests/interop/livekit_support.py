"""What the LiveKit interop tests share: the agent's venv, its stand-ins, scenarios, pids.

The example agent (``examples/livekit_agent/agent.py``) runs from its own venv
(``scripts/setup_livekit_env.sh``); its STT, LLM and TTS are the loopback
stand-ins of ``examples/livekit_agent/stand_ins.py``, loaded here from the
example so the tests run exactly what the docs tell a user to run.
"""

from __future__ import annotations

import importlib.util
import json
import os
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.interop.conftest import ROOT, require_path
from vae.bridge.v1 import bridge_pb2

LIVEKIT_PYTHON = ROOT / ".livekit-venv" / "bin" / "python"
EXAMPLE = ROOT / "examples" / "livekit_agent"
AGENT = EXAMPLE / "agent.py"
BROKEN = Path(__file__).resolve().parent / "livekit_agents"

BOOK_LINE = "I would like to book a table for two people at seven tonight."
REFUSE_LINE = "Do not book a table."
BOOKING = {"party_size": 2, "time": "19:00"}


def require_livekit_venv() -> Path:
    return require_path(LIVEKIT_PYTHON, "scripts/setup_livekit_env.sh")


def stand_ins_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("livekit_stand_ins", EXAMPLE / "stand_ins.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def stand_ins() -> Iterator[Any]:
    """STT, LLM and TTS on loopback; the STT knows the two caller lines below."""
    with stand_ins_module().StandIns([BOOK_LINE, REFUSE_LINE]) as server:
        yield server


def connector(stand_ins: Any, agent: Path = AGENT, **options: Any) -> bridge_pb2.ConnectorConfig:
    env = {"OPENAI_BASE_URL": stand_ins.base_url, "OPENAI_API_KEY": "offline"}
    env.update(options.pop("env", {}))
    body = {"python": str(require_livekit_venv()), "env": env, **options}
    return bridge_pb2.ConnectorConfig(
        kind="livekit", url=f"livekit:{agent}", options_json=json.dumps(body)
    )


def scenario(name: str, line: str, expected: list[dict[str, Any]]) -> dict[str, Any]:
    """A caller who says ``line`` to the host; ``expected`` are the bookings that should be."""
    doc: dict[str, Any] = {
        "name": name,
        "domain": "restaurant",
        "max_duration": 40,
        "user": {
            "persona": {"name": "Ann"},
            "task": {"goal": "talk to the restaurant"},
            "script": [{"say": line}],
        },
        "agent": {
            "persona": {"role": "host"},
            "resources": {"tools": {"book_table": {"party_size": "people", "time": "HH:MM"}}},
        },
        "initial_state": {"bookings": []},
        "expected_scenario_db": {"bookings": expected},
        "success_signals": ["DB_STATE_MATCH", "CLEAN_EXIT"],
    }
    if expected:
        doc["reference_answer"] = {"tool": "book_table", **expected[0]}
        doc["success_signals"] = ["ACTION_MATCH", "DB_STATE_MATCH", "CLEAN_EXIT"]
    return doc


BOOK = scenario("livekit_book_table", BOOK_LINE, [BOOKING])
MUST_NOT_BOOK = scenario("livekit_must_not_book", REFUSE_LINE, [])


def alive(pid: int) -> bool:
    """A process that exists and is not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def console_agents(marker: str) -> list[int]:
    """Live processes running LiveKit's console mode on an agent path containing ``marker``."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            argv = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"console" in argv and any(marker.encode() in a for a in argv) and alive(int(entry)):
            found.append(int(entry))
    return found


def agent_processes(marker: str) -> list[int]:
    """The agents themselves: console processes whose parent is not one (an agent's own
    forked helpers carry its command line too, so they are not counted as agents)."""
    every = console_agents(marker)
    return [pid for pid in every if parent_pid(pid) not in every]


def parent_pid(pid: int) -> int:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0
    return int(stat.rsplit(")", 1)[1].split()[1])
