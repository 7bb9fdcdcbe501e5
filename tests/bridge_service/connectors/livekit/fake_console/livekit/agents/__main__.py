"""A stand-in for ``python -m livekit.agents console AGENT --connect-addr HOST:PORT``.

It runs with vae's interpreter (``PYTHONPATH`` pointing at ``fake_console``)
and speaks the real console wire with livekit's generated classes
(``livekit-protocol``, the ``livekit`` extra), so the connector's failure
paths and hostile input are tested in a second rather than a LiveKit start-up.
``FAKE_CONSOLE_MODE`` says what it does:

- ``speak``: greets (a 1 s tone), answers the caller's first utterance with a
  tone, then reports ``book_table`` and ``end_call`` as executed tools;
- ``silent``: connects and answers requests, never speaks;
- ``crash``: greets, then exits with status 3 once the caller has spoken;
- ``import_error``: raises before connecting (a broken agent file);
- ``hang``: never connects;
- ``oversized``, ``unknown``, ``garbage``: greets, then, once the caller's
  audio arrives, sends a 2 MiB length, a message of a kind vae does not know,
  or bytes that are no protobuf.
"""

from __future__ import annotations

import os
import socket
import struct
import sys
import threading
import time

import numpy as np
from livekit.protocol.agent_pb import agent_session as pb

MODE = os.environ.get("FAKE_CONSOLE_MODE", "speak")
RATE = 48000


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

    heard, started = threading.Event(), threading.Event()
    threading.Thread(target=listen, args=(sock, send, heard, started), daemon=True).start()
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


def speak(send: object, seconds: float) -> None:
    t = np.arange(int(RATE * seconds)) / RATE
    tone = (np.sin(2 * np.pi * 440 * t) * 8000).astype("<i2")
    for start in range(0, len(tone), 480):
        piece = tone[start : start + 480]
        frame = pb.AgentSessionMessage.ConsoleIO.AudioFrame(
            data=piece.tobytes(), sample_rate=RATE, num_channels=1,
            samples_per_channel=len(piece),
        )  # fmt: skip
        send(pb.AgentSessionMessage(audio_output=frame))  # type: ignore[operator]
    flush = pb.AgentSessionMessage.ConsoleIO.AudioPlaybackFlush()
    send(pb.AgentSessionMessage(audio_playback_flush=flush))  # type: ignore[operator]


def listen(
    sock: socket.socket, send: object, heard: threading.Event, started: threading.Event
) -> None:
    """Answer requests; ``started`` at the first audio in, ``heard`` after an utterance."""
    buffer = sock.makefile("rb")
    loud = quiet = 0.0
    while header := buffer.read(4):
        data = buffer.read(struct.unpack(">I", header)[0])
        message = pb.AgentSessionMessage()
        message.ParseFromString(data)
        kind = message.WhichOneof("message")
        if kind == "request":
            response = pb.SessionResponse(request_id=message.request.request_id)
            if message.request.HasField("get_framework_info"):
                response.get_framework_info.sdk = "fake"
                response.get_framework_info.sdk_version = "0.0"
            elif message.request.HasField("get_chat_history"):
                response.get_chat_history.SetInParent()
            else:
                response.error = "not supported by the fake"
            send(pb.AgentSessionMessage(response=response))  # type: ignore[operator]
        elif kind == "audio_input":
            started.set()
            samples = np.frombuffer(message.audio_input.data, "<i2")
            seconds = len(samples) / RATE
            if len(samples) and np.abs(samples).max() > 1000:
                loud, quiet = loud + seconds, 0.0
            elif loud > 0.3:
                quiet += seconds
                if quiet > 0.5:
                    heard.set()


if __name__ == "__main__":
    main()
