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
import hashlib
import json
import sys
import time
import urllib.error
import urllib.request
from typing import Any

import numpy as np
import tracing
from pipecat.frames.frames import (
    BotStoppedSpeakingFrame,
    Frame,
    FunctionCallInProgressFrame,
    FunctionCallResultFrame,
    InputAudioRawFrame,
    LLMFullResponseEndFrame,
    LLMFullResponseStartFrame,
    LLMMessagesAppendFrame,
    LLMTextFrame,
    MetricsFrame,
    TranscriptionFrame,
    TTSAudioRawFrame,
    TTSStartedFrame,
    TTSStoppedFrame,
    TTSTextFrame,
    UserStartedSpeakingFrame,
    UserStoppedSpeakingFrame,
)
from pipecat.metrics.metrics import (
    LLMTokenUsage,
    LLMUsageMetricsData,
    TTFBMetricsData,
    TTSUsageMetricsData,
)
from pipecat.pipeline.pipeline import Pipeline
from pipecat.pipeline.runner import PipelineRunner
from pipecat.pipeline.task import PipelineParams, PipelineTask
from pipecat.processors.frame_processor import FrameDirection, FrameProcessor
from pipecat.processors.frameworks.rtvi import RTVIObserverParams, RTVIProcessor
from pipecat.processors.frameworks.rtvi.frames import RTVIServerMessageFrame
from pipecat.processors.frameworks.rtvi.observer import RTVIFunctionCallReportLevel
from pipecat.serializers.protobuf import ProtobufFrameSerializer
from pipecat.transports.websocket.server import (
    SingleClientWebsocketServerParams,
    SingleClientWebsocketServerTransport,
)
from pipecat.utils.tracing.service_decorators import traced_llm

IN_RATE = 16000
OUT_RATE = 24000  # like a TTS service: the frames say so, and vae honours it


class Agent:
    """The bot's scenario state: prompt, DB, recorded actions, context."""

    def __init__(self) -> None:
        self.prompt = ""
        self.tools: dict[str, Any] = {}
        self.db: dict[str, Any] = {}
        self.actions: list[dict[str, Any]] = []
        self.messages: list[dict[str, Any]] = []
        #: Bumped per scenario, so the pipeline can serve one session after another.
        self.generation = 0
        #: The session's tool backend (``set_tool_backend``); "" until told.
        self.tools_url = ""

    def handle(self, kind: str, data: Any) -> Any:
        body = data if isinstance(data, dict) else {}
        if kind == "update_system_prompt":
            self.prompt = str(body.get("prompt", ""))
            tools = body.get("tools", "{}")
            self.tools = json.loads(tools) if isinstance(tools, str) else dict(tools or {})
            self.db, self.actions, self.tools_url = {}, [], ""
            self.generation += 1
            self.messages = [{"role": "system", "content": self.prompt}]
            return {"ok": True, "tools": sorted(self.tools)}
        if kind == "set_tool_backend":
            self.tools_url = str(body.get("http_url", ""))
            return {"ok": True}
        if kind == "apply_initialization":
            self.db.update(body.get("shared_state_init") or {})
            return {"ok": True}
        if kind == "get_scenario_summary":
            canonical = json.dumps(self.db, sort_keys=True, separators=(",", ":"))
            summary: dict[str, Any] = {
                "actions": self.actions,
                "db_hash": hashlib.sha256(canonical.encode()).hexdigest(),
            }
            if body.get("include_db"):
                summary["db"] = self.db
            return summary
        if kind == "get_context_history":
            return self.messages
        raise ValueError(f"unknown client message {kind!r}")


def call_backend(base_url: str, tool: str, args: dict[str, Any]) -> tuple[Any, str]:
    """POST one call to the tool backend: (result, error) — what any agent's HTTP tool does."""
    request = urllib.request.Request(
        f"{base_url}/tools/{tool}",
        data=json.dumps(args).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.loads(response.read() or b"null"), ""
    except urllib.error.HTTPError as exc:
        return None, f"HTTP {exc.code}: {exc.read().decode(errors='replace')}"
    except OSError as exc:
        return None, f"the tool backend is unreachable: {exc}"


class ToneResponder(FrameProcessor):
    """Energy VAD on what it hears; answers each utterance with a tone."""

    def __init__(
        self,
        agent: Agent,
        answers: int,
        tool: str,
        heard: list[str],
        tool_args: dict[str, Any] | None = None,
        use_backend: bool = False,
        think_s: float = 0.0,
    ) -> None:
        super().__init__()
        #: Seconds its "LLM" takes to its first token (``--think-s``).
        self.think_s = think_s
        #: What pipecat's tracing reads on a service (examples/pipecat_bot/tracing.py).
        self.model_name = tracing.LLM_MODEL
        self._tracing_enabled = False
        self._tracing_context: Any = None
        self.utterance_ns = 0
        self.agent = agent
        self.answers = answers
        self.tool = tool
        #: The write tool's arguments (None: ``{"confirmed": true, "answers": N}``).
        self.tool_args = tool_args
        self.use_backend = use_backend
        #: What its stand-in recogniser "hears" of each utterance, in order.
        self.heard = heard
        self.answered = 0
        self.speech_ms = 0.0
        self.quiet_ms = 0.0
        self.busy = False
        self.finished = False
        self.generation = 0

    async def setup(self, setup: Any) -> None:
        await super().setup(setup)
        self._tracing_enabled = bool(getattr(setup, "enable_tracing", False))
        self._tracing_context = getattr(setup, "tracing_context", None)

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        await super().process_frame(frame, direction)
        if isinstance(frame, InputAudioRawFrame):
            await self._listen(frame)
            return  # the output transport has no use for the caller's audio
        if isinstance(frame, LLMMessagesAppendFrame):
            await self._read(frame)
            return  # this processor is the bot's "LLM": nothing downstream needs it
        if isinstance(frame, BotStoppedSpeakingFrame):
            self.busy = False
            if self.finished:
                await self._end()
        await self.push_frame(frame, direction)

    def _new_scenario(self) -> None:
        if self.generation != self.agent.generation:  # a new scenario: start afresh
            self.generation = self.agent.generation
            self.answered, self.speech_ms, self.quiet_ms = 0, 0.0, 0.0
            self.busy = self.finished = False

    async def _read(self, frame: LLMMessagesAppendFrame) -> None:
        """A text turn (RTVI send-text): answer it in text, as an LLM would."""
        self._new_scenario()
        if self.finished:
            return
        heard = " ".join(str(m.get("content", "")) for m in frame.messages if isinstance(m, dict))
        self.agent.messages.append({"role": "user", "content": heard})
        self.answered += 1
        last = self.answered >= self.answers
        text = "Your booking is done, goodbye." if last else "Sure, tell me more."
        await self._think(None)
        await self._report(last, text)
        await self.push_frame(LLMFullResponseStartFrame())
        await self.push_frame(LLMTextFrame(text=text))
        await self.push_frame(LLMFullResponseEndFrame())
        self.agent.messages.append({"role": "assistant", "content": text})
        if last:
            await self._end()

    async def _listen(self, frame: InputAudioRawFrame) -> None:
        self._new_scenario()
        if self.busy or self.finished:
            return
        samples = np.frombuffer(frame.audio, dtype="<i2").astype(np.float64) / 32768.0
        ms = 1000.0 * len(samples) / max(1, frame.sample_rate * frame.num_channels)
        loud = len(samples) > 0 and 10 * np.log10(np.mean(samples**2) + 1e-12) > -40
        if loud:
            if self.speech_ms == 0:
                self.utterance_ns = time.time_ns() - int(ms * 1e6)
                if self._tracing_enabled:  # pipecat's turn tracking starts a turn on it
                    await self.push_frame(UserStartedSpeakingFrame())
            self.speech_ms += ms
            self.quiet_ms = 0.0
        elif self.speech_ms >= 100:
            self.quiet_ms += ms
            if self.quiet_ms >= 400:
                self.speech_ms = self.quiet_ms = 0.0
                await self._answer()

    async def _answer(self) -> None:
        self.busy = True
        self.answered += 1
        said = self.heard[self.answered - 1] if self.answered <= len(self.heard) else ""
        if self._tracing_enabled:
            await self.push_frame(UserStoppedSpeakingFrame())
            tracing.stt_span(self, self.utterance_ns, said)
        if said:
            stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime())
            await self.push_frame(TranscriptionFrame(text=said, user_id="caller", timestamp=stamp))
        self.agent.messages.append({"role": "user", "content": said or "(speech)"})
        last = self.answered >= self.answers
        text = "Your booking is done, goodbye." if last else "Sure, tell me more."
        await self._think(None)
        await self._report(last, text)
        tts = tracing.TtsSpan(self, text)
        await self.push_frame(TTSStartedFrame())
        await self.push_frame(TTSTextFrame(text=text, aggregated_by="sentence"))
        t = np.arange(int(OUT_RATE * 0.8)) / OUT_RATE
        tone = (np.sin(2 * np.pi * 440 * t) * 0.3 * 32767).astype("<i2")
        step = OUT_RATE // 50  # 20 ms frames; the output transport paces them in real time
        for start in range(0, len(tone), step):
            chunk = tone[start : start + step].tobytes()
            await self.push_frame(
                TTSAudioRawFrame(audio=chunk, sample_rate=OUT_RATE, num_channels=1)
            )
            if start == 0:
                tts.first_audio()
        await self.push_frame(TTSStoppedFrame())
        tts.end()
        self.agent.messages.append({"role": "assistant", "content": text})
        self.finished = last

    @traced_llm
    async def _think(self, context: Any) -> None:
        """The stand-in LLM: ``--think-s`` to its first token. With tracing, pipecat's own
        ``@traced_llm`` makes its span, and the usage below lands on it (gen_ai.usage.*)."""
        if self.think_s > 0:
            await asyncio.sleep(self.think_s)
        if self._tracing_enabled:
            from opentelemetry import trace

            trace.get_current_span().set_attribute("metrics.ttfb", max(self.think_s, 0.05))
            await self.start_llm_usage_metrics(self._usage())

    def _usage(self) -> LLMTokenUsage:
        return LLMTokenUsage(
            prompt_tokens=100 + self.answered, completion_tokens=7, total_tokens=107
        )

    async def _report(self, last: bool, text: str) -> None:
        """Metrics as LLM and TTS services report them (the same usage the spans carry);
        on the last answer, the write action."""
        await self.push_frame(
            MetricsFrame(
                data=[
                    TTFBMetricsData(processor="ToneLLM#0", value=0.05),
                    LLMUsageMetricsData(processor="ToneLLM#0", model=tracing.LLM_MODEL,
                                        value=self._usage()),
                    TTSUsageMetricsData(processor="ToneTTS#0", model=tracing.TTS_MODEL,
                                        value=len(text)),
                ]
            )
        )  # fmt: skip
        if last:
            await self._write_action()

    async def _write_action(self) -> None:
        args = self.tool_args or {"confirmed": True, "answers": self.answered}
        call_id = f"call-{int(time.time() * 1000)}"
        await self.push_frame(FunctionCallInProgressFrame(self.tool, call_id, args))
        result: Any = {"ok": True}
        if self.use_backend and self.agent.tools_url:
            # The tool is an API call: the backend's world changes, not this bot's DB.
            result, error = await asyncio.to_thread(
                call_backend, self.agent.tools_url, self.tool, args
            )
            if error:
                result = {"error": error}
        else:
            bookings = self.agent.db.setdefault("bookings", [])
            # A scenario's DB may keep bookings as a mapping: then the write is kept beside it.
            is_list = isinstance(bookings, list)
            target = bookings if is_list else self.agent.db.setdefault("writes", [])
            target.append(args)
        action = {"type": self.tool, "args": args, "result": result}
        self.agent.actions.append(action)
        await self.push_frame(
            RTVIServerMessageFrame(data={"type": "action-applied", "action": action})
        )
        await self.push_frame(FunctionCallResultFrame(self.tool, call_id, args, result, None))
        self.agent.messages.append(
            {"role": "assistant", "tool_calls": [{"name": self.tool, "arguments": args}]}
        )

    async def _end(self) -> None:
        self.finished = False
        await self.push_frame(RTVIServerMessageFrame(data={"text": "<exit>goodbye</exit>"}))


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
