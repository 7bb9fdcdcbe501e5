"""The example bot's "agent": a pipecat frame processor with no STT, LLM or TTS models.

:class:`ToneResponder` listens with a plain energy detector, and after each
utterance answers with a tone (its "TTS"), reporting what it says, TTFB and
token-usage metrics the way a pipecat LLM/TTS pipeline would; in a text
session it answers each ``LLMMessagesAppendFrame`` (an RTVI ``send-text``) as
an LLM service would. ``--transcribe-as`` stands in for a speech recogniser
(pipecat's own ``TranscriptionFrame`` per utterance). After its last answer it
calls its write tool (pipecat's function-call frames, announced with
``action-applied``) on the scenario's DB or the tool backend
(:mod:`agent_state`), then sends ``<exit>``. ``bot.py`` puts it between a
transport's input and output.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import numpy as np
import tracing
from agent_state import Agent
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
from pipecat.processors.frame_processor import FrameDirection, FrameProcessor
from pipecat.processors.frameworks.rtvi.frames import RTVIServerMessageFrame
from pipecat.utils.tracing.service_decorators import traced_llm

IN_RATE = 16000
OUT_RATE = 24000  # like a TTS service: the frames say so, and vae honours it


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
        if self.use_backend and self.agent.tools_url:
            result = await asyncio.to_thread(self.agent.call_backend, self.tool, args)
        else:
            result = self.agent.write(args)
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
