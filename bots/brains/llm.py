"""LLM-driven user and agent bots through any OpenAI-compatible endpoint.

The bot learns what the peer said from the peer's transcript events, which
the bridge forwards only when the run shares transcripts. When the peer shares
none (an audio-only agent over a phone connector) and the bot was given a
transcription engine (``vae bot ... --asr ENGINE``, :mod:`vae.speech.stt`), it
transcribes each of the peer's turns from the audio it received, acts on that
text and reports it as HEARD. Without an engine it is told honestly that the
peer spoke and for how long. Tools come from ``tools_json`` (every argument a string, as the
established framework declares them) plus an end tool — ``end_conversation``
for the agent, ``hang_up`` for the user; effects follow the side's
``tool_effects`` (see :mod:`vae.tools.jsondb`). Each completion reports its token
usage and latency; the chat history is the context sent with FinalState.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

import openai

from vae.bots.brains.caller import CallerRuntime, ReplyPlan, VoiceFailed
from vae.bots.brains.conversation import Conversation
from vae.bots.sound.listening import PeerListener
from vae.common.v1 import common_pb2
from vae.speech.stt import Transcriber, TranscriptionError

END_TOOLS = {"agent": "end_conversation", "user": "hang_up"}
MAX_TOOL_ROUNDS = 5
#: Received audio kept around a peer turn sent for transcription.
TURN_PAD_S = 0.2


@dataclass(frozen=True)
class LlmSettings:
    base_url: str
    model: str
    api_key: str = "unused"
    temperature: float = 0.0
    max_tokens: int = 256
    #: Line time to wait for the peer's transcript after its turn ended.
    transcript_wait_s: float = 1.0


def tool_specs(tools: dict[str, dict[str, str]], role: str) -> list[dict[str, Any]]:
    """OpenAI function tools from ``{"tool": {"arg": "description"}}`` plus the end tool."""
    specs = []
    for name, args in sorted(tools.items()):
        specs.append(
            {
                "type": "function",
                "function": {
                    "name": name,
                    "description": f"Tool {name}",
                    "parameters": {
                        "type": "object",
                        "properties": {
                            a: {"type": "string", "description": d} for a, d in args.items()
                        },
                        "required": sorted(args),
                    },
                },
            }
        )
    end = END_TOOLS[role]
    specs.append(
        {
            "type": "function",
            "function": {
                "name": end,
                "description": "End the call once the conversation is complete.",
                "parameters": {"type": "object", "properties": {}},
            },
        }
    )
    return specs


class LlmBrain:
    """One session's LLM loop: wait for the peer's turn, complete, act, speak."""

    def __init__(
        self,
        settings: LlmSettings,
        client: openai.AsyncOpenAI | None = None,
        transcriber: Transcriber | None = None,
    ) -> None:
        self.settings = settings
        self.client = client or openai.AsyncOpenAI(
            base_url=settings.base_url, api_key=settings.api_key, max_retries=2
        )
        self.transcriber = transcriber
        #: Peer onsets already transcribed.
        self._onsets = 0
        #: The scenario's caller (vae.bots.brains.caller) and the plan of the reply being made.
        self._runtime: CallerRuntime | None = None
        self._plan: ReplyPlan | None = None

    async def __call__(self, conv: Conversation) -> None:
        conv.record_history = False
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": conv.info.system_prompt or "You are on a phone call."}
        ]
        conv.history = messages
        tools = tool_specs(conv.info.tools, conv.info.role)
        effects = conv.info.side_config.get("tool_effects", {})
        speaks_first = conv.info.opens_call(
            bool(conv.info.side_config.get("speaks_first", conv.info.role == "agent"))
        )
        # A text session's peer arrives as text: there is nothing to transcribe.
        if self.transcriber is not None and isinstance(conv.listener, PeerListener):
            conv.listener.keep_audio()
        usable, caller = await self._caller(conv, messages)
        if not usable:
            return
        first = True
        seen = 0
        while True:
            if not (first and speaks_first):
                plan = caller.next_reply() if caller is not None else None
                if plan is not None and plan.hang_up:
                    await conv.log(f"caller behaviour: hangs up instead of reply {plan.number}")
                    await conv.end("the caller hung up early (behaviour.hang_up_after_turn)")
                    return
                await conv.wait_peer_turn()
                seen = await self._hear(conv, messages, seen)
                if plan is not None and (plan.pause_s or plan.silence_s):
                    await conv.log(f"caller behaviour: pause {plan.pause_s + plan.silence_s:.2f} s "
                                   f"(reply {plan.number})")  # fmt: skip
                    await conv.wait_seconds(plan.pause_s + plan.silence_s)
                self._plan = plan
            first = False
            if await self._respond(conv, messages, tools, effects):
                return

    async def _caller(
        self, conv: Conversation, messages: list[dict[str, Any]]
    ) -> tuple[bool, CallerRuntime | None]:
        """The scenario's caller (voice, language, behaviours); not usable: it cannot speak.

        The language is also an instruction to the model. Barge-ins do not apply to
        an LLM caller: it needs the agent's words before it can reply.
        """
        try:
            caller = await CallerRuntime.start(conv)
        except Exception as exc:  # an unusable voice: the bot's error, and its end
            await conv.log(f"bot error: voice unusable: {exc}", common_pb2.LOG_LEVEL_ERROR)
            await conv.fail(f"voice unusable: {exc}")
            return False, None
        if caller is None:
            return True, None
        language = caller.caller.language
        if not language.lower().startswith("en"):
            messages[0]["content"] += (
                f"\n\nSpeak only the language with BCP 47 tag {language!r} on this call."
            )
        self._runtime = caller
        return True, caller

    async def _hear(self, conv: Conversation, messages: list[dict[str, Any]], seen: int) -> int:
        if conv.info.share_transcripts and len(conv.peer.texts) <= seen:
            # The peer reports its transcript when its speech ends; allow it to arrive.
            await conv.wait_seconds(self.settings.transcript_wait_s)
        new = conv.peer.texts[seen:]
        if new:
            messages.append({"role": "user", "content": " ".join(new)})
        elif self.transcriber is not None and isinstance(conv.listener, PeerListener):
            messages.append(
                {"role": "user", "content": await self._transcribe(conv, conv.listener)}
            )
        else:
            heard = conv.listener
            seconds = max(0, heard.last_end_offset - heard.last_start_offset) / heard.sample_rate
            messages.append(
                {"role": "user", "content": f"[the other party spoke for {seconds:.1f} s; "
                 "no transcript is available]"}
            )  # fmt: skip
        return len(conv.peer.texts)

    async def _transcribe(self, conv: Conversation, ears: PeerListener) -> str:
        """The peer's latest turn as text (reported as HEARD), cut from the received audio."""
        assert self.transcriber is not None
        onsets = ears.onsets[self._onsets :]
        self._onsets = len(ears.onsets)
        start = onsets[0] if onsets else ears.last_start_offset
        end = ears.last_end_offset
        seconds = max(0, end - start) / ears.sample_rate
        pad = round(TURN_PAD_S * ears.sample_rate)
        samples = ears.audio(max(0, start - pad), end + pad)
        started = time.perf_counter()
        try:
            text = await self.transcriber.transcribe(samples, ears.sample_rate)
        except TranscriptionError as exc:
            await conv.log(
                f"could not transcribe the peer's turn: {exc}", common_pb2.LOG_LEVEL_WARNING
            )
            return f"[the other party spoke for {seconds:.1f} s; the turn could not be transcribed]"
        finally:
            ears.forget_before(end)
        await conv.metric("stt_latency", time.perf_counter() - started, "s", "stt")
        if not text:
            return f"[the other party spoke for {seconds:.1f} s; nothing was recognised]"
        await conv.heard(text, start, end)
        return text

    async def _respond(
        self,
        conv: Conversation,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        effects: dict[str, list[dict[str, Any]]],
    ) -> bool:
        """One turn (with tool rounds); True when the bot ended the call."""
        end_tool = END_TOOLS[conv.info.role]
        ending = False
        for _ in range(MAX_TOOL_ROUNDS):
            started = time.perf_counter()
            reply = await self.client.chat.completions.create(
                model=self.settings.model,
                messages=messages,  # type: ignore[arg-type]
                tools=tools,  # type: ignore[arg-type]
                temperature=self.settings.temperature,
                max_tokens=self.settings.max_tokens,
            )
            await conv.metric("llm_latency", time.perf_counter() - started, "s", "llm")
            if reply.usage is not None:
                await conv.token_usage(
                    reply.model or self.settings.model,
                    reply.usage.prompt_tokens,
                    reply.usage.completion_tokens,
                )
            message = reply.choices[0].message
            calls = message.tool_calls or []
            messages.append(message.model_dump(exclude_none=True))
            for call in calls:
                fn = getattr(call, "function", None)
                if fn is None:
                    continue
                if fn.name == end_tool:
                    ending = True
                    result: Any = {"ok": True}
                else:
                    args = _arguments(fn.arguments)
                    outcome = await conv.tool_call(fn.name, args, effects)
                    result = outcome.result if not outcome.error else {"error": outcome.error}
                messages.append(
                    {"role": "tool", "tool_call_id": call.id, "content": json.dumps(result)}
                )
            if message.content:
                text = message.content
                if self._runtime is not None:
                    text = await self._runtime.before_say(conv, self._plan, text)
                try:
                    await conv.say(text)
                except VoiceFailed as exc:
                    await conv.log(f"bot error: {exc}", common_pb2.LOG_LEVEL_ERROR)
                    await conv.fail(str(exc))
                    return True
            if ending:
                await conv.end(f"{end_tool} called")
                return True
            if not calls or message.content:
                return False
        return False


def _arguments(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text or "{}")
    except json.JSONDecodeError:
        return {"_raw": text}
    return value if isinstance(value, dict) else {"_value": value}
