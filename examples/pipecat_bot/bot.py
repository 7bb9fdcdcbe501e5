"""A minimal pipecat bot that needs no network and no model weights.

A real pipecat pipeline (``pipecat-ai`` from PyPI): a WebSocket server
transport with pipecat's ``ProtobufFrameSerializer`` and RTVI, and one
processor in between that plays an agent. It listens for speech with a plain
energy detector, and after each utterance answers with a tone (its "TTS"),
reporting what it says, TTFB and token-usage metrics the way a pipecat LLM/TTS
pipeline would. After ``--answers`` answers it calls its write tool (a
function call, announced with ``action-applied`` like the established
framework's write tools) and then its end tool, sending ``<exit>``.

In a text session (``vae run --modality text``) vae's connector sends each
of the peer's turns as an RTVI ``send-text``: pipecat's RTVIProcessor turns
it into an ``LLMMessagesAppendFrame``, which this processor answers as an LLM
service would — ``LLMFullResponseStartFrame``, ``LLMTextFrame``,
``LLMFullResponseEndFrame`` — so pipecat's RTVIObserver reports it to the
client as ``bot-llm-started``/``bot-llm-text``/``bot-llm-stopped``. No tone
is played in text.
It has no speech recogniser either; ``--transcribe-as TEXT`` (once per
utterance, in order) stands in for one: it pushes pipecat's own
``TranscriptionFrame`` for each utterance it hears, which pipecat's RTVI
observer reports as ``user-transcription`` — what a pipecat STT service
does — so vae records what the agent heard (HEARD_CORRECTLY).

It also implements the established framework's client messages
(``update_system_prompt``, ``apply_initialization``, ``get_scenario_summary``,
``get_context_history``), so vae's pipecat connector can configure it and
fetch its final state.

This file is the pipeline and its transport; the processor that plays the
agent is ``tone_responder.py`` and its scenario state and tools
``agent_state.py`` (``webrtc_bot.py`` serves the same pipeline over WebRTC).

With ``--tool-backend`` its write tool is a real HTTP call, as an agent's
tools are: vae's connector tells it where the session's tool backend is (the
``set_tool_backend`` client message, ``{http_url, openapi_url, mcp_url}``)
and the bot POSTs ``--tool-args`` (a JSON object) to ``{http_url}/tools/NAME``;
the backend's answer is the call's result. That is all a real agent changes
to be tested against a backend vae owns: the base URL of its tools.

Run it from the pipecat venv (``scripts/setup_pipecat_env.sh``)::

    .pipecat-venv/bin/python examples/pipecat_bot/bot.py --port 8765

It prints ``READY <port>`` on stdout once it accepts connections, and serves
one connection at a time until it is stopped (SIGINT/SIGTERM).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Any

import tracing
from agent_state import Agent
from pipecat.pipeline.pipeline import Pipeline
from pipecat.pipeline.runner import PipelineRunner
from pipecat.pipeline.task import PipelineParams, PipelineTask
from pipecat.processors.frameworks.rtvi import RTVIObserverParams, RTVIProcessor
from pipecat.processors.frameworks.rtvi.observer import RTVIFunctionCallReportLevel
from pipecat.serializers.protobuf import ProtobufFrameSerializer
from pipecat.transports.websocket.server import (
    SingleClientWebsocketServerParams,
    SingleClientWebsocketServerTransport,
)
from tone_responder import IN_RATE, OUT_RATE, ToneResponder


def _json_object(text: str) -> dict[str, Any]:
    value = json.loads(text)
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError("must be a JSON object")
    return value


def arguments(description: str, port: int) -> argparse.ArgumentParser:
    """The options every example transport takes (``webrtc_bot.py`` reuses them)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=port)
    parser.add_argument("--answers", type=int, default=1, help="answers before ending the call")
    parser.add_argument("--tool", default="book_table", help="the write tool it calls")
    parser.add_argument(
        "--transcribe-as",
        action="append",
        default=[],
        metavar="TEXT",
        help="what it reports hearing of each utterance, in order (a stand-in recogniser)",
    )
    parser.add_argument(
        "--tool-args",
        type=_json_object,
        default=None,
        metavar="JSON",
        help='the write tool\'s arguments, a JSON object (default {"confirmed": true, ...})',
    )
    parser.add_argument(
        "--tool-backend",
        action="store_true",
        help="call the write tool on the session's tool backend over HTTP (vae run --tool-backend)",
    )
    parser.add_argument(
        "--think-s",
        type=float,
        default=0.0,
        help="seconds its stand-in LLM takes to the first token (default 0)",
    )
    tracing.add_arguments(parser)
    return parser


def pipeline_task(transport: Any, agent: Agent, args: argparse.Namespace) -> PipelineTask:
    """The bot's pipeline on ``transport``, with RTVI and the client messages it answers."""
    rtvi = RTVIProcessor()
    pipeline = Pipeline(
        [
            transport.input(),
            ToneResponder(
                agent,
                args.answers,
                args.tool,
                args.transcribe_as,
                tool_args=args.tool_args,
                use_backend=args.tool_backend,
                think_s=args.think_s,
            ),
            transport.output(),
        ]
    )
    task = PipelineTask(
        pipeline,
        params=PipelineParams(
            enable_metrics=True,
            enable_usage_metrics=True,
            audio_in_sample_rate=IN_RATE,
            audio_out_sample_rate=OUT_RATE,
        ),
        rtvi_processor=rtvi,
        rtvi_observer_params=RTVIObserverParams(
            function_call_report_level={"*": RTVIFunctionCallReportLevel.FULL}
        ),
        idle_timeout_secs=None,
        enable_tracing=bool(getattr(args, "trace", False)),
    )

    @rtvi.event_handler("on_client_message")
    async def on_client_message(processor: RTVIProcessor, message: Any) -> None:
        if message.type == "vae-trace-context":  # vae's context for this session's spans
            trace_ignored = bool(getattr(args, "ignore_trace_context", False))
            await processor.send_server_response(
                message, tracing.adopt(task, message.data, trace_ignored)
            )
            return
        if message.type == "get_context_history":  # the session is ending: export its spans
            tracing.end(task)
        try:
            result = agent.handle(message.type, message.data)
        except (ValueError, TypeError, json.JSONDecodeError) as exc:
            await processor.send_error_response(message, str(exc))
            return
        await processor.send_server_response(message, result)

    return task


async def main() -> None:
    args = arguments(__doc__.splitlines()[0], 8765).parse_args()
    tracing.start(args)
    transport = SingleClientWebsocketServerTransport(
        params=SingleClientWebsocketServerParams(
            serializer=ProtobufFrameSerializer(),
            audio_in_enabled=True,
            audio_out_enabled=True,
            audio_in_sample_rate=IN_RATE,
            audio_out_sample_rate=OUT_RATE,
            add_wav_header=False,
        ),
        host=args.host,
        port=args.port,
    )
    task = pipeline_task(transport, Agent(), args)

    @transport.event_handler("on_websocket_ready")
    async def on_ready(_transport: Any) -> None:
        print(f"READY {args.port}", flush=True)

    await PipelineRunner(handle_sigint=True).run(task)


if __name__ == "__main__":
    asyncio.run(main())
    sys.exit(0)
