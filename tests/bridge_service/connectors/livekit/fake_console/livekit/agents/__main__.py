"""A stand-in for ``python -m livekit.agents console AGENT --connect-addr HOST:PORT``.

It runs with vae's interpreter (``PYTHONPATH`` pointing at ``fake_console``)
and speaks the real console wire with livekit's generated classes
(``livekit-protocol``, the ``livekit`` extra), so the connector's failure
paths and hostile input are tested in a second rather than a LiveKit start-up,
and ``benchmarks/connectors.py`` times the connector alone. One copy for both:
the wire (connect, length-prefixed messages, answering requests) is the same.
``FAKE_CONSOLE_MODE`` says what it does:

- ``speak``: greets (a 1 s tone), answers the caller's first utterance with a
  tone, then reports ``book_table`` and ``end_call`` as executed tools;
- ``silent``: connects and answers requests, never speaks;
- ``crash``: greets, then exits with status 3 once the caller has spoken;
- ``import_error``: raises before connecting (a broken agent file);
- ``hang``: never connects;
- ``oversized``, ``unknown``, ``garbage``: greets, then, once the caller's
  audio arrives, sends a 2 MiB length, a message of a kind vae does not know,
  or bytes that are no protobuf;
- ``tools``: as ``speak``, but books the table through the session's tool
  backend first (``POST $VAE_TOOLS_URL/tools/book_table``), as an agent vae
  starts learns to;
- ``bench``: once the caller's audio arrives, speaks the burst pattern of
  ``benchmarks/lib/bursts.py`` (on ``PYTHONPATH`` too) in real time for
  ``BENCH_SECONDS``, noting ``emit``/``heard`` lines in ``$BENCH_LOG``.
"""

from __future__ import annotations

import os
import socket
import struct
import sys
import threading
import time
from collections.abc import Callable

import numpy as np
from livekit.protocol.agent_pb import agent_session as pb

MODE = os.environ.get("FAKE_CONSOLE_MODE", "speak")
RATE, STEP = 48000, 480
Send = Callable[[pb.AgentSessionMessage], None]


def main() -> None:
    print(f"fake console agent: mode {MODE}", file=sys.stderr, flush=True)
    if MODE == "import_error":
        raise RuntimeError("fake agent: cannot import my model")
    if MODE == "hang":
        time.sleep(3600)
    host, port = sys.argv[sys.argv.index("--connect-addr") + 1].rsplit(":", 1)
    sock = socket.create_connection((host, int(port)))
    lock = threading.Lock()

    def send(message: pb.AgentSessionMessage) -> None:
        data = message.SerializeToString()
        with lock:
            sock.sendall(struct.pack(">I", len(data)) + data)

    if MODE == "bench":
        bench(sock, send)
    heard, started = threading.Event(), threading.Event()
    ears = Ears(heard, started)
    threading.Thread(target=listen, args=(sock, send, "fake", ears.frame), daemon=True).start()
    if MODE == "silent":
        print("fake agent: listening only, I never speak", file=sys.stderr, flush=True)
        time.sleep(3600)
    speak(send, 1.0)
    if MODE in ("oversized", "unknown", "garbage"):
        started.wait()  # mid-call: the caller's audio is arriving
    if MODE == "oversized":
        with lock:
            sock.sendall(struct.pack(">I", 2 << 20) + b"\0" * 1024)
    elif MODE == "unknown":
        with lock:
            sock.sendall(struct.pack(">I", 3) + b"\xf8\x06\x01")  # field 111, varint 1
    elif MODE == "garbage":
        with lock:
            sock.sendall(struct.pack(">I", 8) + b"\xff" * 8)
    heard.wait()
    if MODE == "crash":
        print("fake agent: boom, giving up mid-call", file=sys.stderr, flush=True)
        os._exit(3)
    if MODE == "tools":
        book_through_backend()
    speak(send, 0.8)
    event = pb.AgentSessionEvent.FunctionToolsExecuted(
        function_calls=[
            pb.FunctionCall(call_id="c1", name="book_table", arguments='{"party_size": 2}'),
            pb.FunctionCall(call_id="c2", name="end_call", arguments="{}"),
        ],
        function_call_outputs=[pb.FunctionCallOutput(call_id="c1", name="book_table", output="ok")],
    )
    send(pb.AgentSessionMessage(event=pb.AgentSessionEvent(function_tools_executed=event)))
    time.sleep(3600)


def book_through_backend() -> None:
    """POST the booking to the backend named by ``VAE_TOOLS_URL`` (standard library only)."""
    import json
    import urllib.request

    url = os.environ["VAE_TOOLS_URL"] + "/tools/book_table"
    body = json.dumps({"party_size": 2, "time": "19:00"}).encode()
    request = urllib.request.Request(url, body, {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as answer:
        print(f"fake agent: booked through {url}: {answer.status}", file=sys.stderr, flush=True)


def audio_frame(piece: np.ndarray) -> pb.AgentSessionMessage:
    frame = pb.AgentSessionMessage.ConsoleIO.AudioFrame(
        data=piece.tobytes(), sample_rate=RATE, num_channels=1, samples_per_channel=len(piece)
    )
    return pb.AgentSessionMessage(audio_output=frame)


def speak(send: Send, seconds: float) -> None:
    t = np.arange(int(RATE * seconds)) / RATE
    tone = (np.sin(2 * np.pi * 440 * t) * 8000).astype("<i2")
    for start in range(0, len(tone), STEP):
        send(audio_frame(tone[start : start + STEP]))
    flush = pb.AgentSessionMessage.ConsoleIO.AudioPlaybackFlush()
    send(pb.AgentSessionMessage(audio_playback_flush=flush))


def bench(sock: socket.socket, send: Send) -> None:
    """The benchmark's agent: the burst pattern in real time, what it hears noted."""
    from pathlib import Path

    from bursts import Detector, burst_starts, note, pattern

    log = Path(os.environ["BENCH_LOG"])
    seconds = float(os.environ.get("BENCH_SECONDS", "10"))
    detector, started = Detector(log), threading.Event()

    def frame(data: bytes) -> None:
        started.set()
        detector.frame(data, RATE)

    threading.Thread(target=listen, args=(sock, send, "bench", frame), daemon=True).start()
    started.wait()
    audio, starts = pattern(RATE, seconds), set(burst_starts(RATE, seconds))
    t0 = time.monotonic()
    for i, start in enumerate(range(0, len(audio), STEP)):
        time.sleep(max(0.0, t0 + i * STEP / RATE - time.monotonic()))
        if start in starts:
            note(log, "emit")
        send(audio_frame(audio[start : start + STEP]))
    time.sleep(3600)


class Ears:
    """``started`` at the first audio in, ``heard`` after the caller's first utterance."""

    def __init__(self, heard: threading.Event, started: threading.Event) -> None:
        self.heard, self.started = heard, started
        self.loud = self.quiet = 0.0

    def frame(self, data: bytes) -> None:
        self.started.set()
        samples = np.frombuffer(data, "<i2")
        seconds = len(samples) / RATE
        if len(samples) and np.abs(samples).max() > 1000:
            self.loud, self.quiet = self.loud + seconds, 0.0
        elif self.loud > 0.3:
            self.quiet += seconds
            if self.quiet > 0.5:
                self.heard.set()


def listen(sock: socket.socket, send: Send, sdk: str, audio_in: Callable[[bytes], None]) -> None:
    """Answer requests (as ``sdk``); hand every ``audio_input`` frame to ``audio_in``."""
    buffer = sock.makefile("rb")
    while header := buffer.read(4):
        data = buffer.read(struct.unpack(">I", header)[0])
        message = pb.AgentSessionMessage()
        message.ParseFromString(data)
        kind = message.WhichOneof("message")
        if kind == "request":
            response = pb.SessionResponse(request_id=message.request.request_id)
            if message.request.HasField("get_framework_info"):
                response.get_framework_info.sdk = sdk
                response.get_framework_info.sdk_version = "0.0"
            elif message.request.HasField("get_chat_history"):
                response.get_chat_history.SetInParent()
            else:
                response.error = "not supported by the fake"
            send(pb.AgentSessionMessage(response=response))
        elif kind == "audio_input":
            audio_in(message.audio_input.data)


if __name__ == "__main__":
    main()
