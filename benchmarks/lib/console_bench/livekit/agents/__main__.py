"""A console peer for benchmarks/connectors.py: ``python -m livekit.agents console ...``.

Run by the livekit connector with ``PYTHONPATH`` pointing at
``benchmarks/lib/console_bench``: it speaks the real console wire (livekit's
generated classes) and the burst pattern of ``bursts.py`` in real time, as
48 kHz ``audio_output`` frames, and notes
``emit``/``heard`` lines in ``$BENCH_LOG``. The figure it gives is the
connector's own: a real LiveKit agent adds its pipeline's time on top.
"""

from __future__ import annotations

import os
import socket
import struct
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from bursts import Detector, burst_starts, note, pattern
from livekit.protocol.agent_pb import agent_session as pb

RATE, STEP = 48000, 480


def main() -> None:
    log = Path(os.environ["BENCH_LOG"])
    seconds = float(os.environ.get("BENCH_SECONDS", "10"))
    host, port = sys.argv[sys.argv.index("--connect-addr") + 1].rsplit(":", 1)
    sock = socket.create_connection((host, int(port)))
    lock = threading.Lock()

    def send(message: pb.AgentSessionMessage) -> None:
        data = message.SerializeToString()
        with lock:
            sock.sendall(struct.pack(">I", len(data)) + data)

    started = threading.Event()
    threading.Thread(target=listen, args=(sock, send, log, started), daemon=True).start()
    started.wait()
    audio, starts = pattern(RATE, seconds), set(burst_starts(RATE, seconds))
    t0 = time.monotonic()
    for i, start in enumerate(range(0, len(audio), STEP)):
        time.sleep(max(0.0, t0 + i * STEP / RATE - time.monotonic()))
        piece = audio[start : start + STEP]
        if start in starts:
            note(log, "emit")
        frame = pb.AgentSessionMessage.ConsoleIO.AudioFrame(
            data=piece.tobytes(), sample_rate=RATE, num_channels=1, samples_per_channel=len(piece)
        )
        send(pb.AgentSessionMessage(audio_output=frame))
    time.sleep(3600)


def listen(sock: socket.socket, send: object, log: Path, started: threading.Event) -> None:
    detector = Detector(log)
    stream = sock.makefile("rb")
    while header := stream.read(4):
        message = pb.AgentSessionMessage()
        message.ParseFromString(stream.read(struct.unpack(">I", header)[0]))
        kind = message.WhichOneof("message")
        if kind == "request":
            response = pb.SessionResponse(request_id=message.request.request_id)
            response.get_framework_info.sdk = "bench"
            send(pb.AgentSessionMessage(response=response))  # type: ignore[operator]
        elif kind == "audio_input":
            started.set()
            detector.frame(message.audio_input.data, RATE)


if __name__ == "__main__":
    main()
