"""What a text or virtual-clock run needs from its bots, checked before it starts.

The fast tiers (``RunOptions.modality`` text, ``RunOptions.clock`` virtual)
only work with bots that can follow them, and vae never falls back silently
to audio or the real clock. StartRun refuses (``INVALID_ARGUMENT``, the
option and the reason named) what can already be known to fail:

- a connector whose kind cannot carry text or follow the virtual clock
  (twilio: neither; pipecat: text through RTVI ``send-text``, but not the
  virtual clock), from the kind's declared capabilities;
- a replay in text (the replayed caller is recorded audio);
- gRPC bots of a role that are waiting for this run at StartRun, when none of
  them declared the support at Join (``supports_text``,
  ``supports_virtual_clock``).

Bots that join later are checked at pairing instead
(:mod:`vae.bridge_service.runs.pairing`): a session takes only a bot that declared
what the run needs, and an attempt that found only bots that did not ends
``bot_unsupported`` naming them.

``RunOptions.clock`` auto (the default in text) asks nothing of the clock
up front: each session, once its two sides are paired or dialled, runs on the
virtual clock when both declared they can follow it, else on the real clock
(:func:`session_clock`), and records the clock it took.
"""

from __future__ import annotations

from dataclasses import replace

from vae.bridge_service.config import AUDIO, TEXT, RunSettings
from vae.bridge_service.connectors.base import SideEndpoint, capabilities, connector_capabilities
from vae.bridge_service.runs.pairing import PairingPool
from vae.bridge_service.session.plan import SessionPlan
from vae.bridge_service.timebase import AUTO, REAL, VIRTUAL
from vae.recordings.models import Side


def _option(lacks: list[str]) -> str:
    return "options.modality" if "supports_text" in lacks else "options.clock"


def check_tiers(settings: RunSettings, pool: PairingPool, run_id: str, *, replay: bool) -> None:
    """Raise ValueError naming the option and why this run's bots cannot follow it."""
    modality, clock = settings.modality, settings.clock
    if modality == AUDIO and clock == REAL:
        return
    wanted = f"modality {modality}" + ("" if clock == AUTO else f" on the {clock} clock")
    if replay and modality == TEXT:
        raise ValueError(
            "options.modality: a replay plays the recorded caller's audio sample for sample; "
            "it cannot run in text (replay with --modality audio)"
        )
    connectors = {Side.USER: settings.user_connector, Side.AGENT: settings.agent_connector}
    for side, config in connectors.items():
        if config is None:
            continue
        caps, why = connector_capabilities(config.kind)
        lacks = caps.lacks(modality, clock)
        if lacks:
            raise ValueError(
                f"{_option(lacks)}: the {side} side's {config.kind} connector cannot serve "
                f"{wanted}: {why}"
            )
    for side in (Side.USER, Side.AGENT):
        if connectors[side] is not None or (replay and side is Side.USER):
            continue
        why = pool.unable(side, run_id, modality, clock)
        if why:
            text = modality == TEXT and "supports_text" in why
            option = "options.modality" if text else "options.clock"
            raise ValueError(
                f"{option}: {why}, so none of them can take {wanted}; start {side} bots that "
                "declare it (vae bot does), or run with --modality audio --clock real"
            )


def session_clock(clock: str, endpoints: dict[Side, SideEndpoint]) -> str:
    """The clock a session on run clock ``clock`` runs on, given its two sides.

    Auto: virtual when every side declared it can follow the virtual clock (a
    gRPC bot's ``Join.supports_virtual_clock``, a connector's or a replay's
    capabilities), else real. A chosen clock stands as it is.
    """
    if clock != AUTO:
        return clock
    able = all(capabilities(endpoint).virtual_clock for endpoint in endpoints.values())
    return VIRTUAL if endpoints and able else REAL


def plan_on_clock(plan: SessionPlan, endpoints: dict[Side, SideEndpoint]) -> SessionPlan:
    """``plan`` with its run's clock resolved for these sides (the same plan when chosen)."""
    clock = session_clock(plan.settings.clock, endpoints)
    if clock == plan.settings.clock:
        return plan
    return replace(plan, settings=replace(plan.settings, clock=clock))
