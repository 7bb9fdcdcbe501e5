"""The report's line about a session's caller: voice, language, behaviours, voicemail.

Why its own module: the caller is recorded per session by the bridge
(``sessions.caller_json``, :mod:`vae.bridge_service.session.caller_record`); the report
shows it beside each session so a failure on a Spanish, hesitant or
barging-in caller reads as such. Every value is escaped (scenario text is
as hostile as bot text). Sessions whose scenario named no caller show
nothing: the user bot's own voice spoke.
"""

from __future__ import annotations

from html import escape
from typing import Any


def caller_summary(caller: Any) -> str:
    """Plain text: ``voice espeak es+f2 (es) 175 wpm pitch 60; behaviour: ...``."""
    if not isinstance(caller, dict):
        return ""
    if "error" in caller:
        return f"caller settings unusable: {caller['error']}"
    voice: dict[str, Any] = caller["voice"] if isinstance(caller.get("voice"), dict) else {}
    parts = [f"voice {voice.get('summary', '?')}"]
    if voice.get("applies") is False:
        parts[0] += " (not applicable: a text session)"
    if caller.get("preset"):
        parts.append(f"preset {caller['preset']}")
    behaviour: dict[str, Any] = (
        caller["behaviour"] if isinstance(caller.get("behaviour"), dict) else {}
    )
    parts.append(f"behaviour: {behaviour.get('summary', 'none')}")
    mail = caller.get("voicemail")
    if caller.get("answers_as") == "voicemail" and isinstance(mail, dict):
        expect = str(mail.get("expect", "")).replace("_", " ")
        parts.append(f"answers as voicemail: expects the agent to {expect} within "
                     f"{mail.get('within_s')} s")  # fmt: skip
    return "; ".join(parts)


def caller_line(session: dict[str, Any]) -> str:
    """The session block's caller line (empty when no caller was recorded)."""
    text = caller_summary(session.get("caller"))
    return f'<div class="small caller"><b>caller</b> {escape(text)}</div>' if text else ""
