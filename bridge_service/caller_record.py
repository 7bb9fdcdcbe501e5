"""What the bridge records about a session's caller: the voice, behaviours and voicemail asked for.

Why the bridge records it (and not the user bot): the caller is part of the
scenario, which the bridge froze with the run, and it must be on record even
when the user bot is someone else's (which may ignore it) or fails before it
speaks. The resolution is :func:`vae.speech.caller.caller_from_config`, the
one the reference user bot speaks from; the bot's own log lines then say what
it actually did (each barge-in, pause, filler, silence). A scenario that names
no caller key records nothing: the user bot's own voice spoke.
"""

from __future__ import annotations

from typing import Any

from vae.speech.caller import CALLER_KEYS, CallerConfigError, caller_from_config


def caller_record(side: dict[str, Any], modality: str) -> dict[str, Any] | None:
    """The session's ``caller_json``: resolved settings plus what applies in this modality."""
    if not any(side.get(k) is not None for k in CALLER_KEYS):
        return None
    try:
        caller = caller_from_config(side)
    except CallerConfigError as exc:  # validated at StartRun; kept honest if not
        return {"error": str(exc)}
    record = caller.to_dict()
    record["voice"]["espeak_voice"] = caller.voice.espeak_name
    record["voice"]["summary"] = caller.voice.describe()
    record["behaviour"]["summary"] = caller.behaviour.describe()
    if modality == "text":
        record["voice"]["applies"] = False
        record["note"] = "text session: no voice is synthesised and no barge-in can happen"
    return record
