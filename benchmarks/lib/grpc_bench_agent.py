"""The gRPC agent of benchmarks/connectors.py: speaks the burst pattern, notes what it hears.

``python benchmarks/lib/grpc_bench_agent.py ADDRESS RUN_ID LOG SECONDS [ROLE]`` joins
the bridge as the agent (or ``user``) of run RUN_ID (vae's own contract, ``Converse``),
speaks :mod:`bursts` in real-time 20 ms chunks from SessionStart, and writes
``emit``/``heard`` lines to LOG. A process of its own, so its CPU is not
counted as the bridge's.
"""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path
from typing import Any

import grpc

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bursts import Detector, burst_starts, note, pattern

from vae.bridge.v1 import bridge_pb2, bridge_pb2_grpc
from vae.common.v1 import common_pb2

RATE, STEP = 16000, 320
ROLES = {"agent": common_pb2.ROLE_AGENT, "user": common_pb2.ROLE_USER}


async def main(address: str, run_id: str, log: Path, seconds: float, role: str) -> None:
    fmt = common_pb2.AudioFormat(encoding=common_pb2.AUDIO_ENCODING_PCM16LE,
                                 sample_rate_hz=RATE, channels=1)  # fmt: skip
    out: asyncio.Queue[Any] = asyncio.Queue()
    detector = Detector(log)

    async def requests() -> Any:
        join = bridge_pb2.Join(role=ROLES[role], bot=common_pb2.BotInfo(name="bench"),
                               send_format=fmt, receive_format=fmt, run_filter=run_id)  # fmt: skip
        yield bridge_pb2.BotMessage(join=join)
        while (msg := await out.get()) is not None:
            yield msg

    async def speak() -> None:
        audio, starts = pattern(RATE, seconds), set(burst_starts(RATE, seconds))
        t0 = time.monotonic()
        for i, start in enumerate(range(0, len(audio), STEP)):
            await asyncio.sleep(max(0.0, t0 + i * STEP / RATE - time.monotonic()))
            sent = time.time_ns()
            if start in starts:
                note(log, "emit", sent)
            chunk = common_pb2.AudioChunk(sequence=i, sample_offset=start, sent_unix_nanos=sent,
                                          pcm=audio[start : start + STEP].tobytes())  # fmt: skip
            await out.put(bridge_pb2.BotMessage(audio=chunk))

    async with grpc.aio.insecure_channel(address) as channel:
        stub = bridge_pb2_grpc.BridgeServiceStub(channel)
        speaker: asyncio.Task[None] | None = None
        async for msg in stub.Converse(requests()):
            which = msg.WhichOneof("message")
            if which == "audio":
                detector.frame(msg.audio.pcm, RATE)
            elif which == "session_start":
                speaker = asyncio.create_task(speak())
            elif which == "session_ending":
                final = bridge_pb2.FinalState(done=True)
                await out.put(bridge_pb2.BotMessage(final_state=final))
        await out.put(None)
        if speaker is not None:
            speaker.cancel()


if __name__ == "__main__":
    role = sys.argv[5] if len(sys.argv) > 5 else "agent"
    asyncio.run(main(sys.argv[1], sys.argv[2], Path(sys.argv[3]), float(sys.argv[4]), role))
