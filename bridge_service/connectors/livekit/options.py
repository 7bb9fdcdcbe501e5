"""Options of the LiveKit console connector (``ConnectorConfig.options``), validated.

Every key is optional; an unknown key or a wrong type fails the run before it
starts (StartRun answers ``INVALID_ARGUMENT`` naming the key, through
``livekit.check_config``).

=====================  =======================================================
key                    meaning (default)
=====================  =======================================================
``python``             the agent's interpreter, usually its own venv's
                       (``python3`` on PATH; a relative path is the bridge's)
``args``               extra arguments after the console command ([])
``env``                extra environment for the agent, a JSON object ({})
``start_timeout_s``    the agent must connect within this after it starts (60)
``speak_timeout_s``    the agent must send audio (a text turn in a text
                       session) within this of SessionStart, else the
                       session ends ``agent_silent`` (30)
``stop_timeout_s``     SIGTERM to SIGKILL when the session ends (5)
``send_rate``          rate vae records the agent's audio at (16000)
``write_tools``        function tools recorded as write actions; empty: every
                       tool except the end tools ([])
``end_tools``          function tools that end the call
``max_message_bytes``  largest console message accepted (1048576, livekit's
                       own limit)
``max_queue_s``        agent audio queued ahead of real time, beyond which
                       more is dropped and recorded (120)
``fetch_history``      ask ``get_chat_history`` at the end: the final
                       context (true)
``log_lines``          lines of stderr (and of error log lines) kept for a
                       stop reason's detail (40)
=====================  =======================================================
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, replace
from typing import Any

from vae.bridge_service.connectors.base import ConnectorOptionsError
from vae.bridge_service.connectors.options import parse_dataclass

#: The rate of every audio frame on the console wire (livekit.agents.cli.tcp_console).
WIRE_RATE = 48000
END_TOOLS = ("end_call", "end_conversation", "hang_up", "EndCallTool")


@dataclass(frozen=True)
class LivekitOptions:
    python: str = "python3"
    args: tuple[str, ...] = ()
    start_timeout_s: float = 60.0
    speak_timeout_s: float = 30.0
    stop_timeout_s: float = 5.0
    send_rate: int = 16000
    write_tools: tuple[str, ...] = ()
    end_tools: tuple[str, ...] = END_TOOLS
    max_message_bytes: int = 1 << 20
    max_queue_s: float = 120.0
    fetch_history: bool = True
    log_lines: int = 40

    def is_write(self, tool: str) -> bool:
        if self.write_tools:
            return tool in self.write_tools
        return tool not in self.end_tools


def parse_options(raw: dict[str, Any]) -> tuple[LivekitOptions, dict[str, str]]:
    """The options and the extra environment; :class:`ConnectorOptionsError` for wrong ones."""
    raw = dict(raw)
    env = raw.pop("env", {})
    if not isinstance(env, dict) or not all(isinstance(v, str) for v in env.values()):
        raise ConnectorOptionsError("livekit connector: env must be a JSON object of strings")
    options = parse_dataclass(LivekitOptions, raw, "livekit connector")
    if not 8000 <= options.send_rate <= 48000:
        raise ConnectorOptionsError("livekit connector: send_rate must be 8000..48000 Hz")
    for key in ("start_timeout_s", "speak_timeout_s", "stop_timeout_s", "max_queue_s"):
        if getattr(options, key) <= 0:
            raise ConnectorOptionsError(f"livekit connector: {key} must be positive")
    if not 1024 <= options.max_message_bytes <= 64 << 20:
        raise ConnectorOptionsError("livekit connector: max_message_bytes must be 1 KiB..64 MiB")
    found = shutil.which(options.python)
    if found is None:
        raise ConnectorOptionsError(
            f"livekit connector: python {options.python!r} is not an executable "
            "(give the agent's interpreter, e.g. .livekit-venv/bin/python)"
        )
    # The agent runs in its own folder: a relative interpreter is resolved here, once.
    options = replace(options, python=os.path.abspath(found))
    return options, {str(k): v for k, v in env.items()}
