"""The pipecat bot of benchmarks/connectors.py: the burst pattern over websocket or WebRTC.

Run from the pipecat venv::

    .pipecat-venv/bin/python benchmarks/lib/pipecat_bench_bot.py {ws|webrtc} PORT LOG SECONDS

A real pipecat pipeline (RTVI on, as the connectors expect) whose one
processor, once the caller's audio arrives, pushes the pattern of
``bursts.py`` as 20 ms ``OutputAudioRawFrame``\\ s in real time (noting when
each burst's first frame leaves it) and notes each burst it hears. ``ws``
serves pipecat's websocket server transport (protobuf frames), ``webrtc``
SmallWebRTC behind ``POST /api/offer``. Prints ``READY PORT``.
"""

# No `from __future__ import annotations`: FastAPI reads the offer handler's annotations.
import asyncio
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bursts import Detector, burst_starts, note, pattern
from pipecat.frames.frames import Frame, InputAudioRawFrame, OutputAudioRawFrame
from pipecat.pipeline.pipeline import Pipeline
from pipecat.pipeline.runner import PipelineRunner
from pipecat.pipeline.task import PipelineParams, PipelineTask
from pipecat.processors.frame_processor import FrameDirection, FrameProcessor
from pipecat.processors.frameworks.rtvi import RTVIProcessor

RATE, STEP = 16000, 320


class BurstBot(FrameProcessor):
    def __init__(self, log: Path, seconds: float) -> None:
        super().__init__()
        self.log, self.seconds = log, seconds
        self.detector = Detector(log)
        self.speaker: asyncio.Task[None] | None = None

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        await super().process_frame(frame, direction)
        if isinstance(frame, InputAudioRawFrame):
            self.detector.frame(frame.audio, frame.sample_rate, frame.num_channels)
            if self.speaker is None:
                self.speaker = asyncio.create_task(self.speak())
            return
        await self.push_frame(frame, direction)

    async def speak(self) -> None:
        audio, starts = pattern(RATE, self.seconds), set(burst_starts(RATE, self.seconds))
        t0 = time.monotonic()
        for i, start in enumerate(range(0, len(audio), STEP)):
            await asyncio.sleep(max(0.0, t0 + i * STEP / RATE - time.monotonic()))
            if start in starts:
                note(self.log, "emit")
            pcm = audio[start : start + STEP].tobytes()
            await self.push_frame(OutputAudioRawFrame(audio=pcm, sample_rate=RATE, num_channels=1))


def task_for(transport: Any, log: Path, seconds: float) -> PipelineTask:
    pipeline = Pipeline([transport.input(), BurstBot(log, seconds), transport.output()])
    params = PipelineParams(audio_in_sample_rate=RATE, audio_out_sample_rate=RATE)
    return PipelineTask(pipeline, params=params, rtvi_processor=RTVIProcessor(),
                        idle_timeout_secs=None)  # fmt: skip


async def serve_ws(port: int, log: Path, seconds: float) -> None:
    from pipecat.serializers.protobuf import ProtobufFrameSerializer
    from pipecat.transports.websocket.server import (
        SingleClientWebsocketServerParams,
        SingleClientWebsocketServerTransport,
    )

    transport = SingleClientWebsocketServerTransport(
        params=SingleClientWebsocketServerParams(
            serializer=ProtobufFrameSerializer(), audio_in_enabled=True, audio_out_enabled=True,
            audio_in_sample_rate=RATE, audio_out_sample_rate=RATE, add_wav_header=False,
        ),
        host="127.0.0.1", port=port,
    )  # fmt: skip

    @transport.event_handler("on_websocket_ready")
    async def ready(_transport: Any) -> None:
        print(f"READY {port}", flush=True)

    await PipelineRunner(handle_sigint=True).run(task_for(transport, log, seconds))


async def serve_webrtc(port: int, log: Path, seconds: float) -> None:
    import contextlib
    from collections.abc import AsyncIterator

    import uvicorn
    from fastapi import BackgroundTasks, FastAPI
    from pipecat.transports.base_transport import TransportParams
    from pipecat.transports.smallwebrtc.request_handler import (
        SmallWebRTCRequest,
        SmallWebRTCRequestHandler,
    )
    from pipecat.transports.smallwebrtc.transport import SmallWebRTCTransport

    handler = SmallWebRTCRequestHandler()

    @contextlib.asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        print(f"READY {port}", flush=True)  # the socket is bound by now
        yield

    app = FastAPI(lifespan=lifespan)

    async def run(connection: Any) -> None:
        params = TransportParams(audio_in_enabled=True, audio_out_enabled=True,
                                 audio_in_sample_rate=RATE, audio_out_sample_rate=RATE)  # fmt: skip
        transport = SmallWebRTCTransport(webrtc_connection=connection, params=params)
        await PipelineRunner(handle_sigint=False).run(task_for(transport, log, seconds))

    @app.post("/api/offer")
    async def offer(request: SmallWebRTCRequest, background: BackgroundTasks) -> Any:
        async def start(connection: Any) -> None:
            background.add_task(run, connection)

        return await handler.handle_web_request(request, start)

    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    await server.serve()


if __name__ == "__main__":
    kind, port, log, seconds = sys.argv[1], int(sys.argv[2]), Path(sys.argv[3]), float(sys.argv[4])
    serve = serve_ws if kind == "ws" else serve_webrtc
    asyncio.run(serve(port, log, seconds))
