"""The RTVI messages the pipecat connector sends, and the requests awaiting answers.

Requests carry ids; the bot's ``server-response``/``error-response`` echo them,
so answers are matched by id (the established runner took the first response
that came, which could belong to another request).
"""

from __future__ import annotations

import itertools
import json
from typing import Any

from vae.bridge_service.connectors.base import BotInfo, JsonPiece, SessionStartInfo
from vae.bridge_service.connectors.pipecat.frames import FrameDecodeError, MessageFrame, decode
from vae.bridge_service.connectors.pipecat.options import PipecatOptions
from vae.bridge_service.connectors.pipecat.rtvi import as_dict
from vae.bridge_service.connectors.tool_backend import pipecat_message
from vae.bridge_service.connectors.trace_context import pipecat_message as trace_message

LABEL = "rtvi-ai"


def rtvi(kind: str, msg_id: str, data: Any) -> dict[str, Any]:
    return {"label": LABEL, "type": kind, "id": msg_id, "data": data}


class Requests:
    """Outstanding requests by id; those marked final gate the final state."""

    def __init__(self) -> None:
        self._ids = itertools.count(1)
        self._open: dict[str, tuple[str, bool]] = {}

    def new(self, purpose: str, *, final: bool = False) -> str:
        msg_id = f"vae-{purpose}-{next(self._ids)}"
        self._open[msg_id] = (purpose, final)
        return msg_id

    def pop(self, msg: dict[str, Any]) -> str | None:
        """The purpose of the request ``msg`` answers, if it answers one of ours."""
        entry = self._open.pop(str(msg.get("id", "")), None)
        return None if entry is None else entry[0]

    def pending_final(self) -> bool:
        return any(final for _, final in self._open.values())


def start_messages(
    start: SessionStartInfo, options: PipecatOptions, requests: Requests
) -> list[dict[str, Any]]:
    """Prompt and tools, initialization, kick-off: what the bot gets at SessionStart."""
    out: list[dict[str, Any]] = []
    trace = trace_message(start)
    if trace is not None:  # first, before any audio (connectors/trace_context.py)
        out.append(rtvi("client-message", requests.new("trace_context"), trace))
    tools = json.dumps(start.tools)
    args: dict[str, Any] = {
        "prompt": start.system_prompt,
        "tools": tools,
        "add_suffix": options.add_suffix,
        "tool_domain": start.domain,
    }
    body: dict[str, Any]
    if options.prompt_message == "client-message":
        body = {"t": options.prompt_type, "d": args}
        out.append(rtvi("client-message", requests.new("prompt"), body))
    elif options.prompt_message == "action":
        arguments = [{"name": k, "value": v} for k, v in args.items()]
        body = {"service": "context", "action": options.prompt_type, "arguments": arguments}
        out.append(rtvi("action", requests.new("prompt"), body))
    tools_at = pipecat_message(start)
    if tools_at is not None:  # the session's tool backend (connectors/tool_backend.py)
        out.append(rtvi("client-message", requests.new("tool_backend"), tools_at))
    if options.send_initialization and (start.initial_state or start.initialization_actions):
        d = {
            "domain": start.domain,
            "shared_state_init": start.initial_state,
            "actions": start.initialization_actions,
        }
        body = {"t": "apply_initialization", "d": d}
        out.append(rtvi("client-message", requests.new("initialization"), body))
    if options.kickoff_text:
        # In a text session the bot answers in text too (its TTS skipped).
        body = {
            "content": options.kickoff_text,
            "options": {"run_immediately": True, "audio_response": start.modality != "text"},
        }
        out.append(rtvi("send-text", requests.new("kickoff"), body))
    return out


def bot_info(ready: dict[str, Any], url: str) -> BotInfo:
    """Who the bot says it is in ``bot-ready`` (recorded with every session)."""
    body = as_dict(ready.get("data"))
    about = as_dict(body.get("about"))
    version = str(body.get("version", ""))
    return BotInfo(
        str(about.get("library") or "pipecat-bot"),
        str(about.get("library_version") or version),
        {"connector": "pipecat", "url": url, "rtvi_version": version},
    )


def rtvi_of(data: bytes | str) -> dict[str, Any] | None:
    """The RTVI message a received frame carries, if it is one."""
    if isinstance(data, str):
        return None
    try:
        frame = decode(data)
        msg = json.loads(frame.data) if isinstance(frame, MessageFrame) else None
    except (FrameDecodeError, json.JSONDecodeError):
        return None
    return msg if isinstance(msg, dict) else None


def json_piece(value: Any) -> JsonPiece | None:
    if value is None:
        return None
    return JsonPiece(0, json.dumps(value, default=str).encode(), True)
