"""What a dial is told about its session, and how a refused call is recorded.

Why apart from ``execute``: a connector that places calls (SIP) names the
session in the call (``X-Vae-Run``/``-Session``/``-Scenario``) and an inbound
one matches the agent's call to it, so each dial gets a copy of its
connector config carrying the session (:class:`DialFor`, never recorded);
and a call the far end refused (busy, not found, no answer, declined, a
server error, credentials refused) ends its attempt with the stop reason the
connector named (:class:`CallRefused`), not ``connector_failed``.
"""

from __future__ import annotations

from dataclasses import replace

from vae.bridge_service.config import StopReason
from vae.bridge_service.connectors.base import CallRefused, ConnectorConfig, DialFor
from vae.bridge_service.session.plan import SessionPlan
from vae.recordings.traces.ids import traceparent
from vae.tools.client import BackendAddresses


def dial_for(
    config: ConnectorConfig, plan: SessionPlan | None, tools: BackendAddresses | None = None
) -> ConnectorConfig:
    """``config`` for one dial: the session, its trace context and (agent side) its tools."""
    if plan is None:
        return config
    session = DialFor(
        plan.run_id,
        plan.session_id,
        plan.scenario.name,
        plan.attempt,
        traceparent(plan.run_id, plan.session_id),
        tools,
    )
    return replace(config, session=session)


def refusal_reason(exc: Exception) -> StopReason:
    """The stop reason of a dial that failed: a SIP final answer, an agent process that never
    came up (``BotStartError``), else ``connector_failed``."""
    reason = getattr(exc, "stop_reason", None)
    if isinstance(exc, CallRefused) or isinstance(reason, str):
        try:
            return StopReason(str(reason))
        except ValueError:
            pass
    return StopReason.CONNECTOR_FAILED
