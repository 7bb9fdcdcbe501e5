"""Offline stand-ins for the OpenAI-compatible services the example LiveKit agent uses.

``agent.py`` takes its STT, LLM and TTS from livekit-plugins-openai, pointed at
whatever base URLs it is given. To run it with no network and no model
weights, this serves all three on loopback, over real HTTP, speaking the real
APIs the plugins call:

- ``POST /v1/audio/transcriptions`` (the STT): a WAV upload in, ``{"text"}``
  out. It returns what the caller said: given the caller's lines
  (``--heard``), it answers with the line whose spoken length (as eSpeak NG
  says it) is nearest to the voiced length of the upload. Silence is "".
- ``POST /v1/chat/completions`` with ``stream: true`` (the LLM): a naive
  host. A caller who mentions a table gets ``book_table`` called with the
  party size and time it named; after a booking it confirms and calls
  ``end_call``; anything else gets a short question back. It streams server-
  sent events, tool calls included, with token usage at the end.
- ``POST /v1/audio/speech`` (the TTS): eSpeak NG (the voice vae's reference
  bots use), raw PCM16 at 24 kHz, ``audio/pcm``.

Run it with vae's interpreter; it prints ``READY <base url>`` when it serves::

    python examples/livekit_agent/stand_ins.py --port 8790 \\
        --scenarios examples/livekit_agent/scenarios

then start the agent with ``OPENAI_BASE_URL=<base url>`` (see README.md).
"""

from __future__ import annotations

import argparse
import json
import re
import threading
import time
import wave
from pathlib import Path
from typing import Any

import numpy as np
import soxr
import yaml

from vae.bots.sound.speech import default_synthesiser
from vae.bots.stand_in.loopback import LoopbackServer, QuietHandler, wav_upload

TTS_RATE = 24000
_NUMBERS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
            "eight": 8, "nine": 9, "ten": 10}  # fmt: skip


def voiced_seconds(samples: np.ndarray, rate: int, floor: int = 300) -> float:
    """Seconds from the first to the last sample louder than ``floor``."""
    loud = np.flatnonzero(np.abs(samples.astype(np.int32)) > floor)
    return float((loud[-1] - loud[0]) / rate) if len(loud) else 0.0


def speech_pcm(text: str) -> np.ndarray:
    """``text`` said by eSpeak NG, int16 mono at 24 kHz."""
    synth = default_synthesiser()
    pcm = synth.synthesise(text)
    if synth.sample_rate != TTS_RATE:
        pcm = soxr.resample(pcm, synth.sample_rate, TTS_RATE).astype(np.int16)
    return np.asarray(pcm, dtype=np.int16)


class Heard:
    """What the STT answers: the caller's line nearest in voiced length to the upload."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = {line: voiced_seconds(speech_pcm(line), TTS_RATE) for line in lines}

    def __call__(self, samples: np.ndarray, rate: int) -> str:
        seconds = voiced_seconds(samples, rate)
        if seconds < 0.3 or not self.lines:
            return ""
        return min(self.lines, key=lambda line: abs(self.lines[line] - seconds))


def host_reply(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The naive host's next message: ``{"content": str, "tool_calls": [...]}``."""
    last = messages[-1] if messages else {}
    if last.get("role") == "tool":
        done = next(
            (m for m in reversed(messages) if m.get("role") == "assistant" and m.get("tool_calls")),
            {},
        )
        names = [c.get("function", {}).get("name") for c in done.get("tool_calls", [])]
        if "book_table" in names:
            return {
                "content": "Your table is booked. Thank you, goodbye.",
                "tool_calls": [_call("end_call", {})],
            }
        return {"content": "", "tool_calls": []}
    said = str(last.get("content") or "").lower() if last.get("role") == "user" else ""
    if "table" in said:
        words = re.findall(r"[a-z]+|\d+", said)
        size = next((_NUMBERS.get(w, int(w) if w.isdigit() else 0) for w in words
                     if w in _NUMBERS or w.isdigit()), 2)  # fmt: skip
        when = next((w for w in ("seven", "eight", "six", "nine") if w in words), "seven")
        args = {"party_size": size, "time": f"{_NUMBERS[when] + 12}:00"}
        return {"content": "", "tool_calls": [_call("book_table", args)]}
    return {"content": "How many people, and at what time?", "tool_calls": []}


def _call(name: str, args: dict[str, Any]) -> dict[str, Any]:
    call_id = f"call_{name}_{time.monotonic_ns()}"
    return {"id": call_id, "type": "function",
            "function": {"name": name, "arguments": json.dumps(args)}}  # fmt: skip


class _Handler(QuietHandler):
    server: StandIns
    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        path = self.path.rstrip("/")
        try:
            if path.endswith("/audio/transcriptions"):
                samples, rate, _ = wav_upload(self.headers.get("Content-Type", ""), body)
                text = self.server.heard(samples, rate)
                self.server.note("stt", text)
                self.send_body(200, json.dumps({"text": text}).encode(), "application/json")
            elif path.endswith("/audio/speech"):
                text = str(json.loads(body).get("input", ""))
                self.server.note("tts", text)
                self.send_body(200, speech_pcm(text).tobytes(), "audio/pcm")
            elif path.endswith("/chat/completions"):
                self._chat(json.loads(body))
            else:
                self.send_body(404, b'{"error": {"message": "no route"}}', "application/json")
        except (ValueError, KeyError, wave.Error) as exc:
            error = json.dumps({"error": {"message": str(exc)}}).encode()
            self.send_body(400, error, "application/json")

    def _chat(self, request: dict[str, Any]) -> None:
        reply = host_reply(list(request.get("messages", [])))
        self.server.note("llm", reply)
        base = {"id": f"chatcmpl-{time.monotonic_ns()}", "object": "chat.completion.chunk",
                "created": int(time.time()), "model": request.get("model", "stand-in")}  # fmt: skip
        deltas: list[dict[str, Any]] = [{"role": "assistant", "content": ""}]
        deltas += [{"content": w} for w in re.findall(r"\S+\s*", reply["content"])]
        for i, call in enumerate(reply["tool_calls"]):
            deltas.append({"tool_calls": [{"index": i, **call}]})
        finish = "tool_calls" if reply["tool_calls"] else "stop"
        chunks = [{**base, "choices": [{"index": 0, "delta": d, "finish_reason": None}]}
                  for d in deltas]  # fmt: skip
        chunks.append({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
        prompt = len(json.dumps(request.get("messages", [])).split())
        completion = len(json.dumps(reply).split())
        usage = {"prompt_tokens": prompt, "completion_tokens": completion,
                 "total_tokens": prompt + completion}  # fmt: skip
        chunks.append({**base, "choices": [], "usage": usage})
        data = b"".join(f"data: {json.dumps(c)}\n\n".encode() for c in chunks)
        self.send_body(200, data + b"data: [DONE]\n\n", "text/event-stream")


class StandIns(LoopbackServer):
    """``with StandIns(["line", ...]) as s: s.base_url`` serves STT, LLM and TTS."""

    def __init__(self, heard: list[str], port: int = 0) -> None:
        super().__init__(_Handler, port=port, name="stand-ins")
        self.heard = Heard(heard)
        #: (service, what it answered), in order.
        self.log: list[tuple[str, Any]] = []
        self._lock = threading.Lock()

    def note(self, service: str, what: Any) -> None:
        with self._lock:
            self.log.append((service, what))


def caller_lines(path: Path) -> list[str]:
    """Every ``say`` of the callers' scripts in a scenario file or folder."""
    files = sorted(path.glob("*.yaml")) if path.is_dir() else [path]
    lines = []
    for file in files:
        for doc in yaml.safe_load_all(file.read_text()):
            script = (doc or {}).get("user", {}).get("script", [])
            steps = [step for step in script if isinstance(step, dict)]
            lines += [str(step["say"]) for step in steps if "say" in step]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8790)
    parser.add_argument(
        "--scenarios",
        type=Path,
        help="a scenario file or folder: its callers' scripted lines are what the STT hears",
    )
    parser.add_argument(
        "--heard",
        action="append",
        default=[],
        metavar="LINE",
        help="a line the caller says (repeat); the STT answers with these",
    )
    args = parser.parse_args()
    lines = list(args.heard) + (caller_lines(args.scenarios) if args.scenarios else [])
    with StandIns(lines, args.port) as server:
        print(f"READY {server.base_url}", flush=True)
        threading.Event().wait()


if __name__ == "__main__":
    main()
