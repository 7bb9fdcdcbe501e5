"""Protobuf <-> domain for the internal front door <-> worker wire (``vae.internal.v1``).

An attempt travels as its plan — the scenario frozen as the run froze it, the
run's resolved options as recorded, the attempt and its retry reason, one
ticket per side — and comes back as the recorded result. The worker uses its
own process settings (``BridgeSettings``: the front door started it with the
same ones) and its own identity, so each recorded attempt names the process
that really served it.
"""

from __future__ import annotations

import json
from dataclasses import replace

from vae.bridge_service.config import BridgeSettings, RunSettings, StopReason
from vae.bridge_service.identity import BridgeIdentity
from vae.bridge_service.runs.attempt import SessionResult
from vae.bridge_service.session.plan import SessionPlan
from vae.internal.v1 import worker_pb2
from vae.recordings.models import Side
from vae.recordings.scenarios.parse import scenario_from_dict


def assign_pb(
    plan: SessionPlan, tickets: dict[Side, str], arrive_within_s: float
) -> worker_pb2.FrontDoorMessage:
    return worker_pb2.FrontDoorMessage(
        assign=worker_pb2.Assign(
            run_id=plan.run_id,
            session_id=plan.session_id,
            attempt=plan.attempt,
            scenario_json=json.dumps(plan.scenario.to_dict(), ensure_ascii=False),
            settings_json=json.dumps(plan.settings.to_dict(), ensure_ascii=False),
            retry_reason=plan.retry_reason,
            user_ticket=tickets[Side.USER],
            agent_ticket=tickets[Side.AGENT],
            arrive_within_s=arrive_within_s,
        )
    )


def plan_from_assign(
    assign: worker_pb2.Assign, bridge: BridgeSettings, identity: BridgeIdentity
) -> tuple[SessionPlan, dict[Side, str]]:
    scenario = scenario_from_dict(json.loads(assign.scenario_json), f"{assign.run_id} (frozen)")
    settings = RunSettings.from_dict(json.loads(assign.settings_json))
    if assign.arrive_within_s > 0:
        settings = replace(settings, pairing_timeout_s=assign.arrive_within_s)
    plan = SessionPlan(
        assign.run_id,
        assign.session_id,
        scenario,
        assign.attempt,
        settings,
        bridge,
        assign.retry_reason,
        served_by=identity,
    )
    return plan, {Side.USER: assign.user_ticket, Side.AGENT: assign.agent_ticket}


def end_pb(reason: StopReason, detail: str) -> worker_pb2.FrontDoorMessage:
    return worker_pb2.FrontDoorMessage(end=worker_pb2.EndSession(reason=str(reason), detail=detail))


def end_from_pb(end: worker_pb2.EndSession) -> tuple[StopReason, str]:
    try:
        reason = StopReason(end.reason)
    except ValueError:
        reason = StopReason.SHUTDOWN
    return reason, end.detail


def accepted_pb() -> worker_pb2.WorkerMessage:
    return worker_pb2.WorkerMessage(accepted=worker_pb2.Accepted())


def started_pb(started_ns: int) -> worker_pb2.WorkerMessage:
    return worker_pb2.WorkerMessage(started=worker_pb2.Started(started_unix_nanos=started_ns))


def ended_pb(result: SessionResult | None) -> worker_pb2.WorkerMessage:
    if result is None:
        return worker_pb2.WorkerMessage(ended=worker_pb2.Ended(recorded=False))
    return worker_pb2.WorkerMessage(
        ended=worker_pb2.Ended(
            recorded=True,
            stop_reason=str(result.stop_reason),
            detail=result.detail,
            clean_exit=result.clean_exit,
            user_turns=result.user_turns,
            agent_turns=result.agent_turns,
            started_unix_nanos=result.started_ns,
            ended_unix_nanos=result.ended_ns,
        )
    )


def result_from_ended(session_id: str, ended: worker_pb2.Ended) -> SessionResult | None:
    """The attempt's result as the worker recorded it; None when it recorded nothing."""
    if not ended.recorded:
        return None
    return SessionResult(
        session_id=session_id,
        stop_reason=StopReason(ended.stop_reason),
        detail=ended.detail,
        clean_exit=ended.clean_exit,
        user_turns=ended.user_turns,
        agent_turns=ended.agent_turns,
        started_ns=ended.started_unix_nanos,
        ended_ns=ended.ended_unix_nanos,
    )
