"""The Converse state machine, enforced per stream (see ``bridge.proto``).

A stream moves through four states, driven by what the *bridge* sends (the
transition happens when the bridge queues the message, before the bot can
see it, so a well-behaved bot never races a transition):

========== ======================= =========================================
state      entered when the bridge   a bot may send
========== ======================= =========================================
waiting    answers ``Joined``        nothing (half-closing the stream leaves)
in_session queues ``SessionStart``   ``audio``, ``event``, ``text``,
                                     ``clock_ack`` (which fit the session's
                                     modality and clock: session_io checks)
ending     queues ``SessionEnding``  ``final_state``; ``audio``/``text``/
                                     ``event``/``clock_ack`` still in flight
                                     (recorded, not delivered)
ended      queues ``SessionEnded``   nothing; late messages are ignored
========== ======================= =========================================

``Join`` is valid only as the first message (checked by the handler). Any
other message in any state is refused with a :class:`BotProtocolError`
naming the state and the message, which ends the stream with
``INVALID_ARGUMENT`` (and, in a session, the session with ``bot_error``).

Audio within a session must also move forward: ``sequence`` strictly
increasing (a forward jump is a recorded gap, a repeat or a step back is an
error) and ``sample_offset`` never before the end of the previous chunk.
Events are limited to ``max_events_per_s`` per bot in any sliding second
(the times of the last ``max_events_per_s`` events are kept, so no edge of a
fixed window lets a burst of twice the limit through) and
each FinalState chunk to ``max_final_state_chunk_bytes``; more is
:class:`BotLimitError` (``RESOURCE_EXHAUSTED``). Bytes that do not
decode as a ``BotMessage`` (including invalid UTF-8 in a string field)
arrive as :class:`Undecodable` and are refused in every state.
"""

from __future__ import annotations

import enum
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from vae.bridge_service.connectors.base import (
    BotLimitError,
    BotProtocolError,
    BridgeOutput,
    SessionEndedOut,
    SessionEndingOut,
    SessionStartInfo,
)


class StreamState(enum.StrEnum):
    WAITING = "waiting"
    IN_SESSION = "in_session"
    ENDING = "ending"
    ENDED = "ended"


@dataclass(frozen=True)
class Undecodable:
    """Bytes received on Converse that are not a valid ``BotMessage``."""

    size: int
    error: str


_ALLOWED = {
    StreamState.WAITING: frozenset[str](),
    # Whether text and clock_ack fit the session (its modality, its clock) is
    # the session's check (session_io), which knows them.
    StreamState.IN_SESSION: frozenset({"audio", "event", "text", "clock_ack"}),
    StreamState.ENDING: frozenset({"audio", "event", "final_state", "text", "clock_ack"}),
}


class ProtocolState:
    """One stream's protocol state and audio ordering; checks each BotMessage."""

    def __init__(
        self,
        max_events_per_s: int,
        max_chunk_bytes: int = 1 << 20,
        clock: Callable[[], int] = time.monotonic_ns,
    ) -> None:
        self._clock = clock
        self.state = StreamState.WAITING
        self._max_events = max_events_per_s
        self._max_chunk = max_chunk_bytes
        self._last_seq: int | None = None
        self._offset_end = 0
        # monotonic times of the last max_events events: the oldest must be a second old
        self._recent: deque[int] = deque(maxlen=max(1, max_events_per_s))

    def on_output(self, message: BridgeOutput) -> None:
        """Advance on what the bridge queues for this bot."""
        if isinstance(message, SessionStartInfo) and self.state is StreamState.WAITING:
            self.state = StreamState.IN_SESSION
        elif isinstance(message, SessionEndingOut) and self.state in (
            StreamState.WAITING,
            StreamState.IN_SESSION,
        ):
            self.state = StreamState.ENDING
        elif isinstance(message, SessionEndedOut):
            self.state = StreamState.ENDED

    def finish(self) -> None:
        """The stream is over for the bot (a Redirect): later messages are ignored."""
        self.state = StreamState.ENDED

    def check(self, msg: Any) -> bool:
        """Validate one received message; False: ignore it (the stream has ended).

        Raise :class:`BotProtocolError` (or :class:`BotLimitError`) otherwise.
        """
        if isinstance(msg, Undecodable):
            raise BotProtocolError(
                "message",
                f"{msg.size} bytes could not be decoded as a BotMessage ({msg.error})",
            )
        if self.state is StreamState.ENDED:
            return False
        which = msg.WhichOneof("message")
        if which not in _ALLOWED[self.state]:
            allowed = ", ".join(sorted(_ALLOWED[self.state])) or "nothing"
            if which == "join":
                problem = (
                    "Join must be the first message, and only the first "
                    f"(got one in state {self.state})"
                )
            else:
                problem = (
                    f"{which or 'an empty BotMessage'} is not valid in state {self.state} "
                    f"(allowed now: {allowed})"
                )
            raise BotProtocolError(which or "message", problem)
        if which == "audio":
            self._check_audio(msg.audio)
        elif which in ("event", "text"):
            self._count_event()
        elif which == "clock_ack":
            if msg.clock_ack.HasField("audio"):
                self._check_audio(msg.clock_ack.audio)
        else:
            f = msg.final_state
            for name in ("state", "context"):
                size = len(getattr(f, name).data)
                if size > self._max_chunk:
                    raise BotLimitError(
                        "max_final_state_chunk_bytes",
                        f"final_state.{name} chunk of {size} bytes exceeds the "
                        f"{self._max_chunk}-byte limit (max_final_state_chunk_bytes)",
                    )
        return True

    def _check_audio(self, chunk: Any) -> None:
        if self._last_seq is not None and chunk.sequence <= self._last_seq:
            raise BotProtocolError(
                "audio.sequence",
                f"{chunk.sequence} after {self._last_seq}: sequence numbers must increase",
            )
        if chunk.sample_offset < self._offset_end:
            raise BotProtocolError(
                "audio.sample_offset",
                f"{chunk.sample_offset} is before the end of the previous chunk "
                f"({self._offset_end}): offsets must not go backwards",
            )
        self._last_seq = chunk.sequence
        self._offset_end = chunk.sample_offset + len(chunk.pcm) // 2

    def _count_event(self) -> None:
        now = self._clock()
        recent = self._recent
        full = self._max_events <= 0 or len(recent) == recent.maxlen
        if full and (not recent or now - recent[0] < 1_000_000_000):
            raise BotLimitError(
                "max_events_per_s",
                f"more than {self._max_events} events within one second (limit max_events_per_s)",
            )
        recent.append(now)
