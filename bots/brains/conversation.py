"""What a bot's "brain" sees of one session: speak, listen, call tools, report.

Brains (scripted or LLM-driven) are written against :class:`Conversation`;
the stream plumbing lives in :mod:`vae.bots.client`. Every action reports the
matching contract event (Transcript, SpeechStarted/Stopped, ToolCall, Metric,
TokenUsage, EndConversation) so the recording explains what the bot did.

The same brain plays a text session (``SessionStart.modality`` text): ``say``
sends a whole ``TextTurn`` instead of synthesised audio (the bridge records it
as the spoken transcript), the peer's turns are heard as whole turns
(:class:`~vae.bots.sound.listening.PeerTexts`), and seconds of "line time" are seconds
of the session's clock. Every wait goes through one :class:`~vae.bots.brains.gate.Gate`,
which is what lets a bot follow the virtual clock. What the brain is told
about its session, and gets back, is plain data
(:mod:`vae.bots.brains.session_info`).
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from vae.bots.brains.backend_tools import backend_call
from vae.bots.brains.gate import Gate
from vae.bots.brains.session_info import PeerTranscripts, SessionInfo, SpeechResult
from vae.bots.sound.listening import PeerListener, PeerTexts
from vae.bots.sound.speech import Synthesiser
from vae.bots.sound.voice import Utterance, Voice
from vae.common.v1 import common_pb2
from vae.tools.jsondb import JsonDb, ToolOutcome

log = logging.getLogger("vae.bots")


Emit = Callable[[common_pb2.BotEvent], Awaitable[None]]
SendText = Callable[[str], Awaitable[None]]


#: Speaking rate the bridge times a text turn at on the virtual clock when the bot gives
#: no ``duration_ms`` (docs/contract.md, "Text turns").
TEXT_WORDS_PER_MINUTE = 180


def speaking_ms(text: str) -> int:
    """How long the bridge takes ``text`` to be "spoken" on the virtual clock (>= 1 ms)."""
    return max(1, round(max(1, len(text.split())) * 60_000 / TEXT_WORDS_PER_MINUTE))


class Conversation:
    def __init__(
        self,
        info: SessionInfo,
        synth: Synthesiser,
        voice: Voice,
        listener: PeerListener | PeerTexts,
        emit: Emit,
        *,
        gate: Gate | None = None,
        send_text: SendText | None = None,
    ) -> None:
        self.info = info
        self.synth = synth
        self.voice = voice
        self.listener = listener
        #: Where every wait on the line goes (see vae.bots.brains.gate).
        self.gate = gate or Gate()
        self._send_text = send_text
        #: Text sessions: the session's time in ms (vae.bots.client keeps it: ticks of the
        #: virtual clock, or the wall clock) and how a time wait gets woken.
        self.clock_ms: Callable[[], int] = lambda: 0
        self.wake_at: Callable[[int], None] = lambda at_ms: None
        #: Text on the virtual clock: the session time our last turn ends being "spoken".
        self._spoken_at_ms = 0
        self.db = JsonDb(info.initial_state)
        self.peer = PeerTranscripts()
        #: The context history sent with FinalState. Brains with their own
        #: LLM context replace it and turn ``record_history`` off.
        self.history: list[dict[str, Any]] = []
        self.record_history = True
        #: Set by a brain that reports what it heard itself (:meth:`heard`): the
        #: peer's forwarded words then reach the history only through it.
        self.reports_heard = False
        if info.system_prompt:
            self.history.append({"role": "system", "content": info.system_prompt})
        self._emit = emit
        self._calls = 0
        #: Peer onset count when our latest utterance started: the next reply
        #: waits for a peer turn that began after it.
        self.turn_mark = 0

    # ------------------------------------------------------------ reporting
    async def emit(self, **event: Any) -> None:
        await self._emit(common_pb2.BotEvent(bot_unix_nanos=time.time_ns(), **event))

    async def metric(self, name: str, value: float, unit: str = "s", component: str = "") -> None:
        await self.emit(
            metric=common_pb2.Metric(name=name, value=value, unit=unit, component=component)
        )

    async def token_usage(self, model: str, prompt: int, completion: int) -> None:
        usage = common_pb2.TokenUsage(
            model=model, prompt_tokens=prompt, completion_tokens=completion
        )
        await self.emit(token_usage=usage)

    async def log(self, message: str, level: int = common_pb2.LOG_LEVEL_INFO) -> None:
        await self.emit(log=common_pb2.Log(level=level, message=message))  # type: ignore[arg-type]

    async def heard(self, text: str, start_offset: int = -1, end_offset: int = -1) -> None:
        """Report what we heard the peer say (HEARD): what we act on from here.

        Offsets are on the received line's sample clock, when known.
        """
        event = common_pb2.Transcript(
            kind=common_pb2.TRANSCRIPT_KIND_HEARD,
            text=text,
            is_final=True,
            start_unix_nanos=0,
            end_unix_nanos=time.time_ns(),
            start_sample_offset=start_offset,
            end_sample_offset=end_offset,
        )
        await self.emit(transcript=event)
        if self.record_history:
            self.history.append({"role": "user", "content": text})

    async def end(self, reason: str) -> None:
        """Ask the bridge to end the call: the agent's end tool or the user hanging up."""
        kind = common_pb2.END_KIND_AGENT_END_TOOL
        if self.info.role == "user":
            kind = common_pb2.END_KIND_USER_HANG_UP
        await self.emit(end_conversation=common_pb2.EndConversation(kind=kind, reason=reason))

    async def fail(self, reason: str) -> None:
        """Ask the bridge to end the call as this bot's failure (stop reason ``bot_error``)."""
        kind = common_pb2.END_KIND_BOT_ERROR
        await self.emit(end_conversation=common_pb2.EndConversation(kind=kind, reason=reason))

    # ------------------------------------------------------------ listening
    async def wait_peer_turn(self) -> None:
        """Wait until the peer finished a turn it began after our last utterance began.

        Turns that began earlier (speech we talked over, or that we already
        answered) do not count, so a barge-in never answers itself.
        """
        mark, listener = self.turn_mark, self.listener
        await self.gate.until(lambda: listener.completed_turn > mark)

    async def wait_peer_speech(self) -> None:
        """Wait until the peer starts speaking (again) after our last utterance began."""
        starts, listener = self.listener.starts, self.listener
        await self.gate.until(lambda: listener.starts > starts)

    async def wait_seconds(self, seconds: float) -> None:
        """Let ``seconds`` of the session pass: the bridge's clock drives it.

        Audio: samples of the received line (the bridge delivers them on its
        clock, real or virtual); text: the session's clock itself.
        """
        if seconds <= 0:
            return
        if self.info.text:
            target = self.clock_ms() + round(seconds * 1000)
            self.wake_at(target)
            await self.gate.until(lambda: self.clock_ms() >= target, at_ms=target)
            return
        listener = self.listener
        heard = listener.samples_heard + int(seconds * listener.sample_rate)
        await self.gate.until(lambda: listener.samples_heard >= heard)

    # ------------------------------------------------------------ speaking
    async def say(self, text: str, *, yield_after_s: float | None = 0.3) -> SpeechResult:
        """Speak ``text``; when the peer talks over us for ``yield_after_s``, stop.

        ``yield_after_s=None`` never yields (the bot talks over the peer). In a
        text session the whole turn is sent at once (nobody talks over text).
        """
        if self.info.text:
            return await self._say_text(text)
        started = time.perf_counter()
        pcm = await asyncio.to_thread(self.synth.synthesise, text)
        await self.metric("tts_synthesis", time.perf_counter() - started, "s", "tts")
        previous_mark = self.turn_mark
        starts_before = self.listener.starts
        utt = self.voice.start(pcm)
        self.turn_mark = self.listener.starts
        await self.gate.until(utt.started.is_set)
        if self.listener.completed_turn > previous_mark and self.listener.last_end_offset >= 0:
            # Our own view of the response gap: the peer's last voiced sample to
            # our first, on the received line's clock.
            gap = self.listener.samples_heard - self.listener.last_end_offset
            await self.metric("response_gap", gap / self.listener.sample_rate, "s", "bot")
        if yield_after_s is not None:
            await self._watch_for_barge_in(utt, starts_before, yield_after_s)
        await self.gate.until(utt.done.is_set)
        words = text.split()
        spoken = " ".join(words[: max(1, round(len(words) * utt.fraction))])
        said = text if not utt.truncated else spoken
        await self.emit(
            transcript=common_pb2.Transcript(
                kind=common_pb2.TRANSCRIPT_KIND_SPOKEN,
                text=said,
                is_final=True,
                start_unix_nanos=utt.start_ns,
                end_unix_nanos=time.time_ns(),
                start_sample_offset=utt.start_offset,
                end_sample_offset=utt.end_offset,
            )
        )
        if utt.truncated:
            await self.log(f"yielded to the peer after {utt.fraction:.0%} of the utterance")
        if self.record_history:
            self.history.append({"role": "assistant", "content": said})
        return SpeechResult(said, not utt.truncated, utt.start_offset, utt.end_offset)

    async def _watch_for_barge_in(self, utt: Utterance, starts: int, after_s: float) -> None:
        listener = self.listener
        await self.gate.until(lambda: utt.done.is_set() or listener.starts > starts)
        if not utt.done.is_set():
            await self.wait_seconds(after_s)
            if listener.speaking and not utt.done.is_set():
                self.voice.stop()

    async def _say_text(self, text: str) -> SpeechResult:
        """A text session: the whole turn at once (the bridge records it as spoken)."""
        if self._send_text is None:
            raise RuntimeError("this conversation cannot send text turns")
        self.turn_mark = self.listener.starts
        await self._send_text(text)
        if self.info.virtual:
            # As an utterance in audio, the turn is over once it has been "spoken": the
            # bridge starts it when our previous one ended (at the earliest now) and hands
            # it to the peer at its end. Returning earlier would let a script end the call
            # before its last words were delivered.
            start = max(self.clock_ms(), self._spoken_at_ms)
            self._spoken_at_ms = end = start + speaking_ms(text)
            await self.gate.until(lambda: self.clock_ms() >= end, at_ms=end)
        if self.record_history:
            self.history.append({"role": "assistant", "content": text})
        return SpeechResult(text, True, -1, -1)

    # ------------------------------------------------------------ tools
    async def tool_call(
        self, name: str, args: dict[str, Any], effects: dict[str, list[dict[str, Any]]]
    ) -> ToolOutcome:
        """Run a tool on this side's JSON DB (or its tool backend) and report the call live."""
        self._calls += 1
        started = time.time_ns()
        remote = await backend_call(self.info.tool_backend, name, args, effects)
        outcome = remote if remote is not None else self.db.call(name, args, effects)
        side = common_pb2.ROLE_USER if self.info.role == "user" else common_pb2.ROLE_AGENT
        call = common_pb2.ToolCall(
            call_id=f"{self.info.role}-{self._calls}",
            name=name,
            arguments_json=json.dumps(args, sort_keys=True),
            result_json="" if outcome.error else json.dumps(outcome.result, sort_keys=True),
            error=outcome.error,
            side=side,
            is_write=outcome.is_write,
            started_unix_nanos=started,
            finished_unix_nanos=time.time_ns(),
        )
        await self.emit(tool_call=call)
        if self.record_history:
            entry = {"name": name, "arguments": args, "result": outcome.result}
            self.history.append({"role": "tool", **entry, "error": outcome.error})
        return outcome
