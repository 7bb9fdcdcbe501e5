"""A LiveKit Agents voice agent that books tables: the example vae reaches unchanged.

A real ``AgentSession`` with an ``Agent`` (instructions, a greeting, two
``@function_tool``\\ s: ``book_table`` and ``end_call``), Silero VAD
(livekit-plugins-silero ships its model) and STT, LLM and TTS from
livekit-plugins-openai, pointed at OpenAI-compatible endpoints:
``OPENAI_BASE_URL`` (or ``AGENT_STT_URL``/``AGENT_LLM_URL``/``AGENT_TTS_URL``
for each) and ``OPENAI_API_KEY``. ``stand_ins.py`` beside it serves all three
on loopback, so the agent runs offline.

It knows nothing about vae. vae runs it in LiveKit's console mode, one process
per session (``vae run ... --agent-connector livekit:examples/livekit_agent/agent.py``),
the way a developer runs ``python -m livekit.agents console agent.py``.

Its bookings are its state. When ``VAE_SESSION_DIR`` is set (vae sets it for
each session) the agent starts from ``start.json``'s ``initial_state`` there
and writes its state to ``final_state.json`` after each booking, so vae can
compare it with the scenario's expected database; without it the bookings
stay in memory.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from livekit.agents import Agent, AgentServer, AgentSession, JobContext, RunContext, function_tool
from livekit.plugins import openai, silero

INSTRUCTIONS = (
    "You are the host of Luigi's, a small restaurant. Help callers book a table: ask for "
    "the party size and the time, book it with book_table, confirm it, then end the call "
    "with end_call. Never book a table the caller did not ask for."
)


class Bookings:
    """The agent's state; written where vae can read it when ``VAE_SESSION_DIR`` is set."""

    def __init__(self) -> None:
        folder = os.environ.get("VAE_SESSION_DIR")
        self.folder = Path(folder) if folder else None
        self.state: dict[str, Any] | None = None

    def load(self) -> dict[str, Any]:
        if self.state is None:
            start = self.folder / "start.json" if self.folder else None
            initial = (
                json.loads(start.read_text()).get("initial_state", {})
                if start and start.exists()
                else {}
            )
            self.state = {"bookings": [], **initial}
        return self.state

    def add(self, booking: dict[str, Any]) -> int:
        state = self.load()
        state.setdefault("bookings", []).append(booking)
        if self.folder is not None:
            (self.folder / "final_state.json").write_text(json.dumps(state))
        return len(state["bookings"])


class Host(Agent):
    def __init__(self) -> None:
        super().__init__(instructions=INSTRUCTIONS)
        self.bookings = Bookings()

    async def on_enter(self) -> None:
        self.session.say("Thank you for calling Luigi's. How can I help you?")

    @function_tool
    async def book_table(self, context: RunContext, party_size: int, time: str) -> str:
        """Book a table.

        Args:
            party_size: how many people
            time: the time of the booking, HH:MM
        """
        number = self.bookings.add({"party_size": party_size, "time": time})
        return f"booked: table {number} for {party_size} at {time}"

    @function_tool
    async def end_call(self, context: RunContext) -> None:
        """End the call once the caller has what they need."""
        await context.wait_for_playout()


def _url(name: str) -> str | None:
    return os.environ.get(name) or os.environ.get("OPENAI_BASE_URL") or None


server = AgentServer()


@server.rtc_session()
async def entrypoint(ctx: JobContext) -> None:
    session = AgentSession(
        vad=silero.VAD.load(),
        stt=openai.STT(model="whisper-1", base_url=_url("AGENT_STT_URL")),
        llm=openai.LLM(model="gpt-4o-mini", base_url=_url("AGENT_LLM_URL")),
        tts=openai.TTS(model="tts-1", response_format="pcm", base_url=_url("AGENT_TTS_URL")),
    )
    await session.start(agent=Host(), room=ctx.room)
