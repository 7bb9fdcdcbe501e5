"""What a brain is told about its session, and what it gets back: plain records.

:class:`SessionInfo` is ``SessionStart`` as plain data (the client turns the
message into it), :class:`PeerTranscripts` the peer's words as the bridge
forwards them, :class:`SpeechResult` what one ``say`` came to. They change
with the contract's session fields, not with how a brain acts on them
(:class:`~vae.bots.brains.conversation.Conversation`), and need no protobuf.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass
class SessionInfo:
    """SessionStart as plain data."""

    session_id: str
    run_id: str
    scenario_name: str
    role: str
    domain: str
    system_prompt: str
    tools: dict[str, dict[str, str]]
    initial_state: dict[str, Any]
    initialization_actions: list[dict[str, Any]]
    side_config: dict[str, Any]
    max_duration_ms: int
    share_transcripts: bool
    receive_rate: int
    #: SessionStart.first_speaker: "agent", "user", or "" when the bridge leaves it open.
    first_speaker: str = ""
    #: SessionStart.modality ("audio"/"text") and clock ("real"/"virtual").
    modality: str = "audio"
    clock: str = "real"
    #: Length of the frames (one per step on the virtual clock) this bot receives, ms.
    frame_ms: int = 16
    #: SessionStart.seed: this session's randomness (a caller's behaviours draw from it).
    seed: int = 0
    #: SessionStart.tool_backend (``http_url``, ``openapi_url``, ``mcp_url``); empty: none.
    tool_backend: dict[str, str] = field(default_factory=dict)

    @property
    def text(self) -> bool:
        return self.modality == "text"

    @property
    def virtual(self) -> bool:
        return self.clock == "virtual"

    def opens_call(self, default: bool) -> bool:
        """Whether this bot speaks first: the bridge's word, else ``default``."""
        return self.first_speaker == self.role if self.first_speaker else default


@dataclass
class SpeechResult:
    """What one ``say`` came to: the words spoken, whether all of them, their offsets."""

    text: str
    completed: bool
    start_offset: int
    end_offset: int


@dataclass
class PeerTranscripts:
    """What the peer said, as forwarded by the bridge when sharing is on.

    ``on_text`` (set by a brain that reports what it heard) runs for each line
    as it is received, before the next message is read: on the virtual clock
    its report is then part of the step that brought the line.
    """

    texts: list[str] = field(default_factory=list)
    changed: asyncio.Condition = field(default_factory=asyncio.Condition)
    on_text: Callable[[str], Awaitable[None]] | None = None

    async def add(self, text: str) -> None:
        async with self.changed:
            self.texts.append(text)
            self.changed.notify_all()
        if self.on_text is not None:
            await self.on_text(text)
