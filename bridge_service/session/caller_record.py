"""What the bridge records about a session's caller: the voice, behaviours and voicemail asked for.

Why the bridge records it (and not the user bot): the caller is part of the
scenario, which the bridge froze with the run, and it must be on record even
when the user bot is someone else's (which may ignore it) or fails before it
speaks. The resolution is
:func:`vae.recordings.scenarios.caller_settings.caller_from_config`; the same
record goes to the bots in ``side_config_json["resolved_caller"]``
(:func:`side_config`), so what is recorded is what they were told to speak; the
bot's own log lines then say what it actually did (each barge-in, pause,
filler, silence). A scenario that names no caller key records nothing: the user
bot's own voice spoke.
"""

from __future__ import annotations

from typing import Any

from vae.recordings.scenarios.caller_settings import (
    CALLER_KEYS,
    CallerConfigError,
    caller_from_config,
    resolved,
)


def caller_record(side: dict[str, Any], modality: str) -> dict[str, Any] | None:
    """The session's ``caller_json``: resolved settings plus what applies in this modality."""
    if not any(side.get(k) is not None for k in CALLER_KEYS):
        return None
    try:
        caller = caller_from_config(side)
    except CallerConfigError as exc:  # validated at StartRun; kept honest if not
        return {"error": str(exc)}
    record = resolved(caller)
    if modality == "text":
        record["voice"]["applies"] = False
        record["note"] = "text session: no voice is synthesised and no barge-in can happen"
    return record


#: The key of ``SessionStart.side_config_json`` that carries the resolved caller.
RESOLVED_KEY = "resolved_caller"


def side_config(extras: dict[str, Any], modality: str) -> dict[str, Any]:
    """A side's ``side_config_json``: its extras, plus the resolved caller when it names one."""
    record = caller_record(extras, modality)
    return extras if record is None else {**extras, RESOLVED_KEY: record}
