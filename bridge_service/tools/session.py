"""A session's tool backend from start to end: what ``runs.attempt`` calls.

- :func:`check_run` at StartRun: a run that asks for a backend (``vae run
  --tool-backend``, or any scenario's ``tool_backend: true``) is refused when
  the ``tools`` extra is missing, naming ``pip install 'vae[tools]'``;
- :func:`reserve` before the agent is dialled: the backend's port, bound now, so
  an agent vae starts (LiveKit: ``VAE_TOOLS_URL``) or calls (SIP headers)
  learns its address before ``SessionStart``;
- :func:`start_backend` before ``SessionStart``: the agent side's tools over
  its initial DB (``initial_state`` plus its ``initialization_actions``, run
  through the same effects), served on a free loopback port; a
  ``tool_backend`` event records the addresses and the tools;
- :func:`finish_backend` when the session ends, after the bots' final states
  were stored: the server stops, and its DB becomes the agent's final state
  (the agent's own context history is kept; a state the agent reported itself
  is replaced, and the ``tool_backend`` stop event says so), so
  DB_STATE_ASSERTION and DB_STATE_MATCH judge the world the agent changed,
  not what it says about it.
"""

from __future__ import annotations

import importlib.util
import sys
from typing import Any

from vae.bridge_service.config import RunSettings
from vae.bridge_service.session.plan import SessionPlan
from vae.bridge_service.session.state import SessionState
from vae.bridge_service.tools.backend import Reservation, ToolBackend
from vae.recordings.canonical import state_hash
from vae.recordings.models import EventKind, FinalStateRecord, Side
from vae.recordings.scenarios.model import Scenario
from vae.recordings.write.writer import RecordingWriter
from vae.tools.spec import ToolSet
from vae.tools.world import ToolWorld

#: What the tools extra brings, by the module each part needs.
_EXTRA = ("mcp", "uvicorn", "starlette")


class ToolBackendUnavailable(ValueError):
    """The run asks for a tool backend and this bridge cannot serve one."""


def _absent(name: str) -> bool:
    """Whether module ``name`` cannot be imported (found without importing it: cheap)."""
    if name in sys.modules:
        return sys.modules[name] is None
    return importlib.util.find_spec(name) is None


def missing_extra() -> str:
    """Why this process cannot serve a tool backend ("" when it can)."""
    missing = [name for name in _EXTRA if _absent(name)]
    if not missing:
        return ""
    return (
        f"the tool backend needs the tools extra (missing: {', '.join(missing)}): "
        "pip install 'vae[tools]'"
    )


def enabled(settings: RunSettings, scenario: Scenario) -> bool:
    return settings.tool_backend or scenario.tool_backend


def check_run(settings: RunSettings, scenarios: list[Scenario]) -> None:
    """Raise :class:`ToolBackendUnavailable` when the run needs a backend this bridge lacks."""
    if not any(enabled(settings, sc) for sc in scenarios):
        return
    why = missing_extra()
    if why:
        field = "options.tool_backend" if settings.tool_backend else "tool_backend"
        raise ToolBackendUnavailable(f"{field}: {why}")


def reserve(plan: SessionPlan) -> Reservation | None:
    """The session's backend port, bound before dialling, when it will have a backend."""
    if not enabled(plan.settings, plan.scenario) or missing_extra():
        return None
    return Reservation()


async def start_backend(
    plan: SessionPlan, io: SessionState, reserved: Reservation | None = None
) -> ToolBackend | None:
    """Start the session's backend when the run or the scenario asks for one (None otherwise).

    ``reserved``: its port, bound before the agent was dialled (:func:`reserve`).
    """
    scenario = plan.scenario
    if not enabled(plan.settings, scenario):
        return None
    why = missing_extra()
    if why:
        raise ToolBackendUnavailable(why)
    from vae.bridge_service.tools.http import application

    side = scenario.agent
    tools = ToolSet.from_side(side.resources.tools, side.extras)
    actions = [a for a in scenario.initialization_actions if a.get("side", "agent") == "agent"]
    world = ToolWorld(tools, scenario.initial_state, actions)

    async def record(kind: EventKind, payload: dict[str, Any], bridge_ns: int) -> None:
        await io.recorder.event(Side.AGENT, kind, payload, bridge_ns=bridge_ns)

    backend = ToolBackend(
        world, record, io.time_ns, io.started_ns, title=f"vae tool backend: {scenario.name}"
    )
    addresses = await backend.start(application, reserved.take() if reserved else None)
    started: dict[str, Any] = {"event": "started", **addresses.to_dict()}
    started["tools"] = sorted(tools.tools)
    if world.init_problems:
        started["initialization_problems"] = world.init_problems
    await record(EventKind.TOOL_BACKEND, started, io.time_ns())
    return backend


async def finish_backend(
    backend: ToolBackend,
    plan: SessionPlan,
    io: SessionState,
    writer: RecordingWriter,
    *,
    agent_reported_state: bool,
) -> None:
    """Stop serving and store the backend's DB as the agent's final state."""
    await backend.close()
    state = backend.world.state
    digest = state_hash(state, order_independent=plan.scenario.order_independent_lists)
    now = io.time_ns()
    record = FinalStateRecord(plan.session_id, Side.AGENT, now, state, digest, None)
    await writer.put_final_state_keeping_context(record)
    stopped: dict[str, Any] = {"event": "stopped", "calls": backend.calls, "state_hash": digest}
    if agent_reported_state:
        stopped["note"] = (
            "the agent also reported a final state of its own; the agent's final state is "
            "the tool backend's"
        )
    await io.recorder.event(Side.AGENT, EventKind.TOOL_BACKEND, stopped, bridge_ns=now)
