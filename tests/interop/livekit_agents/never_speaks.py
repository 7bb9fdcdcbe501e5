"""A LiveKit agent that listens and never says a word (it has no LLM and no TTS)."""

import sys

from livekit.agents import Agent, AgentServer, AgentSession, JobContext
from livekit.plugins import silero


class Listener(Agent):
    def __init__(self) -> None:
        super().__init__(instructions="Listen.")

    async def on_enter(self) -> None:
        print("never_speaks agent: I only listen", file=sys.stderr, flush=True)


server = AgentServer()


@server.rtc_session()
async def entrypoint(ctx: JobContext) -> None:
    session = AgentSession(vad=silero.VAD.load())
    await session.start(agent=Listener(), room=ctx.room)
