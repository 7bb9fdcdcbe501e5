"""The reference agent with a capacity: slower replies once it holds more calls than it can.

An agent behind a rate-limited LLM answers at its usual speed until more
calls are in progress than its quota serves, then every reply queues. This
brain plays the scripted agent (:func:`vae.bots.brains.scripted.play_script`)
that way, so a load test (``vae load``) has an agent whose knee is known in
advance — ``vae bot agent --capacity N`` — and, with ``slow_down_s``, one that
degrades steadily over hours (what a soak should catch).

Its *base latency* is what a caller waits for a reply when the agent is not
overloaded: the quiet it waits to be sure the caller finished (the
listener's end of turn, 0.5 s) plus its reply delay (``base_latency_s``, or
the script's ``response_delay_s``). With ``k`` calls in progress beyond its
capacity, each reply waits three base latencies more per extra call, so a
caller then waits at least four times the base latency: far beyond what
scheduler noise could add or take, so the knee never depends on it. Every
wait is on the line (:meth:`Conversation.wait_seconds`), so on the virtual
clock it is session time.

The count is of this process's calls: each session's brain counts itself in
progress from its start until it returns (the script ended the call) or is
cancelled (the bridge ended it).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from vae.bots.brains.conversation import Conversation
from vae.bots.brains.scripted import Pace
from vae.bots.sound.listening import PeerListener

#: Base latencies added per call beyond capacity (a caller then waits >= 4x the base).
OVERLOAD_FACTOR = 3.0

Brain = Callable[[Conversation], Awaitable[None]]
PacedBrain = Callable[[Conversation, Pace | None], Awaitable[None]]


@dataclass
class Capacity:
    """Calls in progress in this process, and the reply delay they give."""

    #: Calls held at the base latency (None: no limit).
    capacity: int | None = None
    #: Reply delay when not overloaded, seconds (None: the script's own).
    base_latency_s: float | None = None
    #: Added to the reply delay for every call this process started before (a leak).
    slow_down_s: float = 0.0
    in_progress: int = 0
    started: int = 0

    def reply_delay(self, script_delay_s: float, end_of_turn_s: float, earlier: int) -> float:
        """The delay before a reply, now; ``earlier``: calls started before this one."""
        base = self.base_latency_s if self.base_latency_s is not None else script_delay_s
        base += self.slow_down_s * earlier
        if self.capacity is None or self.in_progress <= self.capacity:
            return base
        extra_calls = self.in_progress - self.capacity
        return base + OVERLOAD_FACTOR * (end_of_turn_s + base) * extra_calls

    def brain(self, play: PacedBrain) -> Brain:
        """``play`` (the scripted agent) paced by this capacity."""

        async def brain(conv: Conversation) -> None:
            earlier = self.started
            self.started += 1
            self.in_progress += 1
            listener = conv.listener
            end_of_turn = (
                listener.settings.end_silence_ms / 1000 if isinstance(listener, PeerListener) else 0
            )

            def pace(script_delay_s: float) -> float:
                return self.reply_delay(script_delay_s, end_of_turn, earlier)

            try:
                await play(conv, pace)
            finally:
                self.in_progress -= 1

        return brain
