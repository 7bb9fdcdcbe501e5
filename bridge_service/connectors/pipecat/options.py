"""Options of the pipecat connector (``ConnectorConfig.options``), validated.

Every key is optional; an unknown key or a wrong type fails the run before it
starts: StartRun answers ``INVALID_ARGUMENT`` naming the key
(:class:`ConnectorOptionsError`, raised by ``pipecat.check_config``).

=====================  =======================================================
key                    meaning (default)
=====================  =======================================================
``send_rate``          rate vae records the bot's audio at; frames at other
                       rates are resampled (16000)
``receive_rate``       rate the bot hears its peer at (16000)
``prompt_message``     how the scenario's prompt and tools are sent:
                       ``client-message`` (RTVI ``{t, d}``, the default),
                       ``action`` (RTVI action with arguments) or ``none``
``prompt_type``        the ``t``/action name (``update_system_prompt``)
``add_suffix``         sent with the prompt (false)
``send_initialization``  send ``apply_initialization`` with the initial state
                       and initialization actions when the scenario has any (true)
``kickoff_text``       RTVI ``send-text`` sent after the prompt, e.g. "Hello"
                       so an agent speaks first ("": none)
``fetch_summary``      ask ``get_scenario_summary`` at the end: its ``db`` (or
                       the whole summary) is the final state, its actions are
                       recorded as write tool calls (true)
``fetch_context``      ask ``get_context_history`` at the end (true)
``end_markers``        server-message texts that end the call (["<exit>"])
``end_tools``          function calls that end the call
``write_tools``        function calls recorded as write actions ([])
``ready_timeout_s``    wait for ``bot-ready`` (10)
``connect_retries``    dial attempts, with backoff, before the pool's own
                       retries (1: only the pool retries, so
                       ``connect_timeout_s`` bounds a refusing endpoint)
``max_chunk_ms``       split longer bot audio frames into chunks of this (40)
``max_buffer_bytes``   outgoing WebSocket buffer above which peer audio is
                       dropped (and the drop recorded) (1000000)
=====================  =======================================================
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from vae.bridge_service.connectors.base import ConnectorOptionsError
from vae.bridge_service.connectors.options import parse_dataclass
from vae.bridge_service.connectors.pipecat.rtvi import RtviOptions

PROMPT_SHAPES = ("client-message", "action", "none")


@dataclass(frozen=True)
class PipecatOptions:
    send_rate: int = 16000
    receive_rate: int = 16000
    prompt_message: str = "client-message"
    prompt_type: str = "update_system_prompt"
    add_suffix: bool = False
    send_initialization: bool = True
    kickoff_text: str = ""
    fetch_summary: bool = True
    fetch_context: bool = True
    end_markers: tuple[str, ...] = RtviOptions.end_markers
    end_tools: tuple[str, ...] = tuple(sorted(RtviOptions.end_tools))
    write_tools: tuple[str, ...] = ()
    ready_timeout_s: float = 10.0
    connect_retries: int = 1
    max_chunk_ms: int = 40
    max_buffer_bytes: int = 1_000_000

    @property
    def rtvi(self) -> RtviOptions:
        return RtviOptions(
            end_markers=self.end_markers,
            end_tools=frozenset(self.end_tools),
            write_tools=frozenset(self.write_tools),
        )


def parse_options(raw: dict[str, Any]) -> PipecatOptions:
    options = parse_dataclass(PipecatOptions, raw, "pipecat connector")
    if options.prompt_message not in PROMPT_SHAPES:
        raise ConnectorOptionsError(
            f"pipecat connector: prompt_message must be one of {', '.join(PROMPT_SHAPES)}"
        )
    for key in ("send_rate", "receive_rate"):
        if not 8000 <= getattr(options, key) <= 48000:
            raise ConnectorOptionsError(f"pipecat connector: {key} must be 8000..48000 Hz")
    if options.max_chunk_ms < 10:
        raise ConnectorOptionsError("pipecat connector: max_chunk_ms must be at least 10")
    return options
