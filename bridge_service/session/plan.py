"""What a session needs to know before it starts: :class:`SessionPlan`.

Built by the run manager for each attempt; turned into each side's
``SessionStart`` by :func:`start_info` (the prompt rendered from the side's
persona, task, actions and resources; tools as ``{"tool": {"arg": "desc"}}``;
the side's initial state and initialization actions; its scenario extras).
"""

from __future__ import annotations

from dataclasses import dataclass

from vae.bridge_service.audio.framing import Framing
from vae.bridge_service.audio.noise import noise_seed
from vae.bridge_service.config import BridgeSettings, RunSettings
from vae.bridge_service.connectors.base import SessionStartInfo
from vae.bridge_service.identity import BridgeIdentity
from vae.bridge_service.session.caller_record import side_config
from vae.recordings.models import Side
from vae.recordings.scenarios.model import Scenario, render_prompt
from vae.recordings.traces import ids
from vae.recordings.trials import split_trial
from vae.tools.client import BackendAddresses


@dataclass(frozen=True)
class SessionPlan:
    run_id: str
    session_id: str
    scenario: Scenario
    attempt: int
    settings: RunSettings
    bridge: BridgeSettings
    retry_reason: str = ""
    #: The bridge process that serves the attempt (recorded with it); None: not recorded.
    served_by: BridgeIdentity | None = None

    @property
    def max_duration_s(self) -> float:
        if self.settings.max_duration_s is not None:
            return self.settings.max_duration_s
        return self.scenario.max_duration


def start_info(
    plan: SessionPlan,
    side: Side,
    receive_rate: int,
    framing: Framing | None = None,
    tool_backend: BackendAddresses | None = None,
) -> SessionStartInfo:
    """``tool_backend``: the session's tool backend, told to the agent only."""
    sc = plan.scenario
    spec = sc.side(str(side))
    state = sc.initial_state if side is Side.AGENT else sc.initial_user_state
    actions = [
        {"func_name": a["func_name"], "arguments": a.get("arguments", {})}
        for a in sc.initialization_actions
        if a.get("side", "agent") == str(side)
    ]
    return SessionStartInfo(
        run_id=plan.run_id,
        session_id=plan.session_id,
        scenario_name=sc.name,
        attempt=plan.attempt,
        role=side,
        domain=sc.domain,
        system_prompt=render_prompt(spec),
        tools=spec.resources.tools,
        initial_state=state,
        initialization_actions=actions,
        side_config=side_config(spec.extras, plan.settings.modality),
        max_duration_ms=int(plan.max_duration_s * 1000),
        share_transcripts=plan.settings.share_transcripts,
        receive_rate=receive_rate,
        frame_ms=framing.frame_ms if framing else plan.settings.frame_ms,
        frames_per_message=framing.frames_per_message if framing else 1,
        first_speaker=plan.settings.first_speaker or sc.first_speaker or "",
        seed=noise_seed(plan.settings.seed, sc.name),
        trial=split_trial(sc.name)[1] or 0,
        modality=plan.settings.modality,
        clock=plan.settings.clock,
        tool_backend=tool_backend if side is Side.AGENT else None,
        traceparent=ids.traceparent(plan.run_id, plan.session_id),
    )
