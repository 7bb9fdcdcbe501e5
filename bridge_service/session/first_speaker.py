"""Who opens the call, and what happens when that side never does.

Why a rule of its own: an agent built to answer speech (most pipecat bots)
paired with a scenario whose agent is expected to greet gives two bots that
each wait for the other. Without this check the session sits in silence until
the inactivity timeout or the maximum duration, and the stale attempt is then
retried to the same end. Instead, when the expected first speaker has not
spoken and neither has anyone else for ``first_speaker_timeout_s`` after the
session started, the session ends with ``first_speaker_silent`` and a detail
that names the option changing who speaks first. Such an attempt is not
retried: nothing about a second try would differ.

Who is expected: ``RunSettings.first_speaker`` (``vae run --first-speaker``)
over the scenario's ``first_speaker``, over the phone convention that the
callee (the agent) answers first.
"""

from __future__ import annotations

from vae.bridge_service.config import StopReason
from vae.bridge_service.session.ending import EndRequest
from vae.bridge_service.session.plan import SessionPlan
from vae.recordings.models import Side

_NS = 1_000_000_000


def expected_first_speaker(plan: SessionPlan) -> Side:
    name = plan.settings.first_speaker or plan.scenario.first_speaker or "agent"
    return Side.USER if name == "user" else Side.AGENT


def silent_first_speaker(
    plan: SessionPlan, started_ns: int, now_ns: int, turns: dict[Side, int]
) -> EndRequest | None:
    """The end request when the line stayed silent past the timeout, else None."""
    timeout = plan.settings.first_speaker_timeout_s
    if any(turns.values()) or now_ns - started_ns < timeout * _NS:
        return None
    first = expected_first_speaker(plan)
    other = Side.USER if first is Side.AGENT else Side.AGENT
    detail = (
        f"the {first} was expected to speak first (first_speaker: {first}) but nobody spoke "
        f"for {timeout:g} s; if the {first} bot only answers, let the {other} open the call "
        f"with `vae run --first-speaker {other}` (RunOptions.first_speaker, or "
        f"first_speaker: {other} in the scenario); --first-speaker-timeout sets the wait"
    )
    return EndRequest(StopReason.FIRST_SPEAKER_SILENT, detail)
