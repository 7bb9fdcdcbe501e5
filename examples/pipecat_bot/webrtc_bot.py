"""The example pipecat bot served over pipecat's SmallWebRTC transport.

The same pipeline as ``bot.py`` (``ToneResponder``, RTVI, the NeMo
framework's client messages), deployed the way pipecat's own runner and
examples deploy bots: a FastAPI app whose ``POST /api/offer`` takes a WebRTC
SDP offer, hands it to pipecat's ``SmallWebRTCRequestHandler`` and answers
with the bot's SDP; each connection gets its own ``SmallWebRTCTransport`` and
pipeline, so it serves many callers at once. Audio flows as WebRTC tracks
(Opus), RTVI messages on the data channel. No network, no model weights.

Run it from the pipecat venv (``scripts/setup_pipecat_env.sh``)::

    .pipecat-venv/bin/python examples/pipecat_bot/webrtc_bot.py --port 7860

It prints ``READY <port>`` once it serves. ICE only offers addresses other
than 127.0.0.1, so on one machine run it (and vae) where another loopback
address exists: see docs/interop.md, "pipecat over WebRTC".
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import tracing
import uvicorn
from agent_state import Agent
from bot import arguments, pipeline_task
from fastapi import BackgroundTasks, FastAPI
from pipecat.pipeline.runner import PipelineRunner
from pipecat.transports.base_transport import TransportParams
from pipecat.transports.smallwebrtc.connection import SmallWebRTCConnection
from pipecat.transports.smallwebrtc.request_handler import (
    SmallWebRTCPatchRequest,
    SmallWebRTCRequest,
    SmallWebRTCRequestHandler,
)
from pipecat.transports.smallwebrtc.transport import SmallWebRTCTransport
from tone_responder import IN_RATE, OUT_RATE


def app_for(args: Any) -> FastAPI:
    handler = SmallWebRTCRequestHandler()

    @contextlib.asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        print(f"READY {args.port}", flush=True)
        yield
        await handler.close()

    app = FastAPI(lifespan=lifespan)

    async def serve(connection: SmallWebRTCConnection) -> None:
        transport = SmallWebRTCTransport(
            webrtc_connection=connection,
            params=TransportParams(
                audio_in_enabled=True,
                audio_out_enabled=True,
                audio_in_sample_rate=IN_RATE,
                audio_out_sample_rate=OUT_RATE,
            ),
        )
        task = pipeline_task(transport, Agent(), args)

        @transport.event_handler("on_client_disconnected")
        async def on_gone(_transport: Any, _client: Any) -> None:
            await task.cancel()

        await PipelineRunner(handle_sigint=False).run(task)

    @app.post("/api/offer")
    async def offer(request: SmallWebRTCRequest, background: BackgroundTasks) -> Any:
        async def start(connection: SmallWebRTCConnection) -> None:
            background.add_task(serve, connection)

        return await handler.handle_web_request(request, start)

    @app.patch("/api/offer")
    async def candidates(request: SmallWebRTCPatchRequest) -> dict[str, str]:
        await handler.handle_patch_request(request)
        return {"status": "success"}

    return app


def main() -> None:
    args = arguments(__doc__.splitlines()[0], 7860).parse_args()
    tracing.start(args)
    config = uvicorn.Config(app_for(args), host=args.host, port=args.port, log_level="warning")
    asyncio.run(uvicorn.Server(config).serve())


if __name__ == "__main__":
    main()
