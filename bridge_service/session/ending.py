"""How a session's ending is judged: stop reasons and the end policy.

``tool-only`` counts only the agent's end tool as a clean exit.
``valid-terminal-state`` also accepts the user's hang-up (or the end of a
replayed caller's recording, ``replay_finished``), or an inactivity
timeout after the user's last turn (the user spoke last and nobody answered:
a natural end of a call). Every other reason (max duration, a bot leaving or
failing, a cancel, shutdown) is never clean.
"""

from __future__ import annotations

from dataclasses import dataclass

from vae.bridge_service.config import EndPolicy, StopReason
from vae.recordings.models import Side

#: EndConversation kind sent by the replayed user side (``vae.bridge_service.replay``).
REPLAY_FINISHED_KIND = "replay_finished"
#: EndConversation kind END_KIND_BOT_ERROR: the bot cannot go on.
BOT_ERROR_KIND = "bot_error"


@dataclass(frozen=True)
class EndRequest:
    reason: StopReason
    detail: str = ""
    #: Let the last words reach the peer before SessionEnding.
    graceful: bool = False


#: EndConversation kinds only connectors send: the call's media died (``connectors.sip``).
CONNECTOR_KINDS = {str(StopReason.SIP_RTP_TIMEOUT): StopReason.SIP_RTP_TIMEOUT}


def end_request_for(side: Side, kind: str, reason_text: str) -> EndRequest:
    """The end a bot's EndConversation asks for (decided by who sent it)."""
    if kind in CONNECTOR_KINDS:
        return EndRequest(CONNECTOR_KINDS[kind], reason_text)
    if kind == BOT_ERROR_KIND:
        return EndRequest(StopReason.BOT_ERROR, f"the {side} bot failed: {reason_text}")
    if side is Side.AGENT:
        return EndRequest(StopReason.END_TOOL, reason_text or "agent called its end tool", True)
    if kind == REPLAY_FINISHED_KIND:
        return EndRequest(StopReason.REPLAY_FINISHED, reason_text or "replay finished", True)
    return EndRequest(StopReason.USER_HANG_UP, reason_text or "user hung up", True)


def is_clean_exit(reason: StopReason, policy: EndPolicy, last_turn: Side | None) -> bool:
    if reason is StopReason.END_TOOL:
        return True
    if policy is EndPolicy.VALID_TERMINAL_STATE:
        if reason in (StopReason.USER_HANG_UP, StopReason.REPLAY_FINISHED):
            return True
        if reason is StopReason.INACTIVITY_TIMEOUT and last_turn is Side.USER:
            return True
    return False
