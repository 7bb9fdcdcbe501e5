"""A LiveKit agent that greets, then exits with status 3 once the caller has spoken."""

import os
import sys

from livekit.agents import Agent, AgentServer, AgentSession, JobContext
from livekit.plugins import openai, silero


class Quitter(Agent):
    def __init__(self) -> None:
        super().__init__(instructions="Greet, then give up.")

    async def on_enter(self) -> None:
        self.session.say("Hello, this is Luigi's.")

    async def on_user_turn_completed(self, turn_ctx: object, new_message: object) -> None:
        print("exits_mid_call agent: out of memory, exiting", file=sys.stderr, flush=True)
        os._exit(3)


server = AgentServer()


@server.rtc_session()
async def entrypoint(ctx: JobContext) -> None:
    session = AgentSession(
        vad=silero.VAD.load(),
        stt=openai.STT(model="whisper-1"),
        tts=openai.TTS(model="tts-1", response_format="pcm"),
    )
    await session.start(agent=Quitter(), room=ctx.room)
