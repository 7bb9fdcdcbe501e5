"""The caller side as a voicemail box: greeting, beep, then it listens and keeps a record.

Why a brain of its own: with ``user.answers_as: voicemail`` the agent is the
one calling (an outbound call that reached voicemail, or call screening) and
the "caller" side never converses. It answers at once with its greeting and a
beep (one utterance, so the agent hears one turn end), then records what the
agent does in its own DB, which the scenario's DB_STATE_ASSERTIONs judge
(``voicemail.expect`` stands for them, recordings/scenarios/caller.py):

- ``voicemail.message_s``: seconds the agent spoke after the beep (frames the
  listener heard as speech; text sessions: the agent's words at 150 per minute);
- ``voicemail.cut_off``: the box stopped recording ``within_s`` after the beep
  and hung up, because the agent had not ended the call.

The DB is updated as each frame is heard (a watch in the gate's predicate),
so it is current whenever the session ends. All waits go through the gate.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import numpy as np

from vae.bots.brains.caller import CallerRuntime
from vae.bots.brains.conversation import Conversation
from vae.bots.sound.listening import PeerListener, PeerTexts
from vae.common.v1 import common_pb2

#: Silence between the greeting and the beep, seconds.
GAP_S = 0.35
#: Words per second credited to a text turn (150 wpm).
TEXT_WORDS_PER_S = 2.5


def beep(hz: float, ms: int, rate: int, amplitude: float = 0.3) -> np.ndarray:
    """A sine beep with 10 ms raised-cosine edges (no clicks), int16."""
    n = int(rate * ms / 1000)
    t = np.arange(n) / rate
    tone = np.sin(2 * np.pi * hz * t)
    edge = min(n // 2, int(rate * 0.01))
    if edge:
        ramp = 0.5 - 0.5 * np.cos(np.pi * np.arange(edge) / edge)
        tone[:edge] *= ramp
        tone[n - edge :] *= ramp[::-1]
    return np.asarray(tone * amplitude * 32767, dtype=np.int16)


async def play_voicemail(conv: Conversation, caller: CallerRuntime) -> None:
    vm = caller.caller.voicemail
    expect, within_s = str(vm.get("expect", "leave_message")), float(vm.get("within_s", 30.0))
    greeting = str(vm.get("greeting") or "Please leave a message after the tone.")
    record: dict[str, Any] = {"expect": expect, "message_s": 0.0, "cut_off": False,
                              "agent_turns": 0}  # fmt: skip
    conv.db.state["voicemail"] = record
    await conv.log(f"voicemail: answering (expects the agent to {expect.replace('_', ' ')})")
    if conv.info.text:
        await conv.say(f"{greeting} *beep*")
        await _listen_text(conv, within_s, record)
    else:
        hz, ms = float(vm.get("beep_hz", 1000.0)), int(vm.get("beep_ms", 500))
        await _greet(conv, greeting, hz, ms)
        await _listen_audio(conv, within_s, record)
    if record["cut_off"]:
        await conv.log(f"voicemail: message window of {within_s:g} s closed; hanging up")
        await conv.end(f"voicemail: the message window ({within_s:g} s) closed")


async def _greet(conv: Conversation, greeting: str, hz: float, ms: int) -> None:
    """Greeting + gap + beep as one utterance; reported as the greeting's words and ``*beep*``."""
    rate = conv.voice.sample_rate
    words = await asyncio.to_thread(conv.synth.synthesise, greeting)
    pcm = np.concatenate([words, np.zeros(int(rate * GAP_S), np.int16), beep(hz, ms, rate)])
    utt = conv.voice.start(pcm)
    await conv.gate.until(utt.started.is_set)
    await conv.gate.until(utt.done.is_set)
    await conv.emit(
        transcript=common_pb2.Transcript(
            kind=common_pb2.TRANSCRIPT_KIND_SPOKEN,
            text=f"{greeting} *beep*",
            is_final=True,
            start_unix_nanos=utt.start_ns,
            end_unix_nanos=time.time_ns(),
            start_sample_offset=utt.start_offset,
            end_sample_offset=utt.end_offset,
        )
    )
    await conv.log(f"voicemail: beep ({hz:g} Hz, {ms} ms) ended at sample {utt.end_offset}")


async def _listen_audio(conv: Conversation, within_s: float, record: dict[str, Any]) -> None:
    listener = conv.listener
    assert isinstance(listener, PeerListener)
    rate = listener.sample_rate
    start = listener.samples_heard
    deadline = start + int(within_s * rate)
    seen = {"at": start, "starts": listener.starts}

    def watch() -> bool:
        # Called on every change of the line: credit the frames heard as speech since.
        now = listener.samples_heard
        if listener.speaking:
            record["message_s"] = round(record["message_s"] + (now - seen["at"]) / rate, 3)
        seen["at"] = now
        record["agent_turns"] = listener.starts - seen["starts"]
        if now >= deadline:
            record["cut_off"] = True
        return now >= deadline

    await conv.gate.until(watch)


async def _listen_text(conv: Conversation, within_s: float, record: dict[str, Any]) -> None:
    listener = conv.listener
    assert isinstance(listener, PeerTexts)
    deadline = conv.clock_ms() + round(within_s * 1000)
    counted = {"turns": len(listener.texts)}
    conv.wake_at(deadline)

    def watch() -> bool:
        while counted["turns"] < len(listener.texts):
            words = len(listener.texts[counted["turns"]].split())
            record["message_s"] = round(record["message_s"] + words / TEXT_WORDS_PER_S, 3)
            record["agent_turns"] += 1
            counted["turns"] += 1
        if conv.clock_ms() >= deadline:
            record["cut_off"] = True
        return conv.clock_ms() >= deadline

    await conv.gate.until(watch, at_ms=deadline)
