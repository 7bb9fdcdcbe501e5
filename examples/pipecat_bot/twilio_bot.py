"""A pipecat phone agent behind Twilio Media Streams, with no network and no model weights.

A real pipecat pipeline (``pipecat-ai`` from PyPI) the way phone agents are
deployed: a FastAPI WebSocket endpoint, pipecat's ``FastAPIWebsocketTransport``
with pipecat's own ``TwilioFrameSerializer`` (automatic hang-up through
Twilio's REST API switched off, so nothing leaves the machine), and one
processor that plays the agent:

- it greets when the call starts (``--greet``; phone agents speak first),
- listens with an energy detector and answers each utterance with a tone,
  followed by a Twilio ``mark`` naming the answer,
- stops talking when the caller talks over it for 150 ms (a barge-in: it
  broadcasts pipecat's interruption, which the serializer sends as ``clear``),
- after ``--answers`` answers ends the call (closes the socket: hangs up).

It serves any number of calls at once (one pipeline per WebSocket) on
``/ws`` and reports each call at ``GET /calls/{call_sid}``: the custom
parameters of ``start``, the marks Twilio (here: vae) echoed, its answers —
usable as vae's ``final_state_url``. Each answer logs ``REPLY_LATENCY_S x``
on stderr: the bot's own view of its reply latency (end of the caller's
speech to its first answer frame).

Run it from the pipecat venv (``scripts/setup_pipecat_env.sh``)::

    .pipecat-venv/bin/python examples/pipecat_bot/twilio_bot.py --port 8766

It prints ``READY <port>`` on stdout once it accepts connections.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from typing import Any

import numpy as np
import uvicorn
from fastapi import FastAPI, WebSocket
from pipecat.frames.frames import (
    BotStoppedSpeakingFrame,
    EndTaskFrame,
    Frame,
    InputAudioRawFrame,
    OutputTransportMessageFrame,
    TTSAudioRawFrame,
    TTSStartedFrame,
    TTSStoppedFrame,
)
from pipecat.pipeline.pipeline import Pipeline
from pipecat.pipeline.runner import PipelineRunner
from pipecat.pipeline.task import PipelineParams, PipelineTask
from pipecat.processors.frame_processor import FrameDirection, FrameProcessor
from pipecat.serializers.twilio import TwilioFrameSerializer
from pipecat.transports.websocket.fastapi import (
    FastAPIWebsocketParams,
    FastAPIWebsocketTransport,
)

RATE = 8000
CALLS: dict[str, dict[str, Any]] = {}


class ObservingSerializer(TwilioFrameSerializer):
    """pipecat's serializer, noting the ``mark`` echoes it otherwise ignores."""

    def __init__(self, call: dict[str, Any], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.call = call

    async def deserialize(self, data: str | bytes) -> Frame | None:
        message = json.loads(data)
        if message.get("event") == "mark":
            self.call["marks_answered"].append(message["mark"]["name"])
        return await super().deserialize(data)


class PhoneAgent(FrameProcessor):
    def __init__(self, call: dict[str, Any], stream_sid: str, args: argparse.Namespace) -> None:
        super().__init__()
        self.call = call
        self.stream_sid = stream_sid
        self.args = args
        self.speaking = False
        self.loud_ms = 0.0
        self.quiet_ms = 0.0
        self.heard_ms = 0.0
        self.last_loud = 0.0
        self.done = False
        self.greeted = not args.greet

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        await super().process_frame(frame, direction)
        if isinstance(frame, InputAudioRawFrame):
            await self._listen(frame)
            return
        if isinstance(frame, BotStoppedSpeakingFrame):
            self.speaking = False
            if self.done:
                await self.push_frame(EndTaskFrame(), FrameDirection.UPSTREAM)
        await self.push_frame(frame, direction)

    async def _listen(self, frame: InputAudioRawFrame) -> None:
        if not self.greeted:
            self.greeted = True
            await self._say(self.args.answer_s, "greeting")
            return
        samples = np.frombuffer(frame.audio, dtype="<i2").astype(np.float64) / 32768.0
        ms = 1000.0 * len(samples) / frame.sample_rate
        loud = len(samples) > 0 and 10 * np.log10(np.mean(samples**2) + 1e-12) > -40
        if self.speaking:
            self.loud_ms = self.loud_ms + ms if loud else 0.0
            if self.loud_ms >= 150:  # the caller talks over us: stop (barge-in)
                self.call["barge_ins"] += 1
                self.speaking = False
                self.loud_ms = 0.0
                self.heard_ms = 150.0
                await self.broadcast_interruption()
            return
        if loud:
            self.heard_ms += ms
            self.quiet_ms = 0.0
            self.last_loud = time.monotonic()
        elif self.heard_ms >= 100 and not self.done:
            self.quiet_ms += ms
            if self.quiet_ms >= 400:
                self.heard_ms = self.quiet_ms = 0.0
                latency = time.monotonic() - self.last_loud
                print(f"REPLY_LATENCY_S {latency:.3f}", file=sys.stderr, flush=True)
                self.call["answers"] += 1
                self.done = self.call["answers"] >= self.args.answers
                await self._say(self.args.answer_s, f"answer-{self.call['answers']}")

    async def _say(self, seconds: float, mark: str) -> None:
        self.speaking = True
        await self.push_frame(TTSStartedFrame())
        t = np.arange(int(RATE * seconds)) / RATE
        tone = (np.sin(2 * np.pi * 440 * t) * 0.3 * 32767).astype("<i2")
        step = RATE // 50
        for start in range(0, len(tone), step):
            chunk = tone[start : start + step].tobytes()
            await self.push_frame(TTSAudioRawFrame(audio=chunk, sample_rate=RATE, num_channels=1))
        await self.push_frame(TTSStoppedFrame())
        message = {"event": "mark", "streamSid": self.stream_sid, "mark": {"name": mark}}
        await self.push_frame(OutputTransportMessageFrame(message=message))


def make_app(args: argparse.Namespace) -> FastAPI:
    app = FastAPI()

    @app.get("/calls/{call_sid}")
    async def call_state(call_sid: str) -> dict[str, Any]:
        return CALLS.get(call_sid, {})

    @app.websocket("/ws")
    async def media_stream(websocket: WebSocket) -> None:
        await websocket.accept()
        start: dict[str, Any] = {}
        while not start:  # Twilio sends `connected`, then `start`
            message = json.loads(await websocket.receive_text())
            if message.get("event") == "start":
                start = message["start"]
        call: dict[str, Any] = {
            "custom_parameters": start.get("customParameters", {}),
            "media_format": start.get("mediaFormat", {}),
            "marks_answered": [],
            "answers": 0,
            "barge_ins": 0,
        }
        CALLS[start["callSid"]] = call
        serializer = ObservingSerializer(
            call,
            stream_sid=start["streamSid"],
            call_sid=start["callSid"],
            params=TwilioFrameSerializer.InputParams(auto_hang_up=False),
        )
        transport = FastAPIWebsocketTransport(
            websocket,
            FastAPIWebsocketParams(
                audio_in_enabled=True,
                audio_out_enabled=True,
                add_wav_header=False,
                serializer=serializer,
            ),
        )
        agent = PhoneAgent(call, start["streamSid"], args)
        task = PipelineTask(
            Pipeline([transport.input(), agent, transport.output()]),
            params=PipelineParams(audio_in_sample_rate=RATE, audio_out_sample_rate=RATE),
            idle_timeout_secs=None,
        )
        await PipelineRunner(handle_sigint=False).run(task)

    return app


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8766)
    parser.add_argument("--answers", type=int, default=2, help="answers before hanging up")
    parser.add_argument("--answer-s", type=float, default=1.0, help="length of each answer")
    parser.add_argument("--greet", action=argparse.BooleanOptionalAction, default=True)
    args = parser.parse_args()
    server = uvicorn.Server(
        uvicorn.Config(make_app(args), host=args.host, port=args.port, log_level="warning")
    )
    serving = asyncio.create_task(server.serve())
    while not server.started:
        if serving.done():
            await serving
            return
        await asyncio.sleep(0.05)
    print(f"READY {args.port}", flush=True)
    await serving


if __name__ == "__main__":
    asyncio.run(main())
