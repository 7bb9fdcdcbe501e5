"""The floor under the bridge's cost: a bare grpc.aio echo carrying the same messages.

``python benchmarks/lib/echo.py`` serves ``BridgeService.Converse`` as an echo
(every audio chunk straight back) and prints its address; ``bench_echo``
drives 2N such streams of 40 ms chunks in real time and returns the echo
process's CPU per message, so ``benchmarks/bridge.py --echo`` can put the
bridge's CPU per message beside what grpc.aio alone costs on this machine.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path
from typing import Any

import grpc
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from vae.bridge.v1 import bridge_pb2, bridge_pb2_grpc
from vae.common.v1 import common_pb2

CHUNK = 640  # 40 ms at 16 kHz


class Echo(bridge_pb2_grpc.BridgeServiceServicer):
    async def Converse(self, request_iterator: Any, context: Any) -> Any:  # type: ignore[override]
        async for msg in request_iterator:
            if msg.WhichOneof("message") == "audio":
                yield bridge_pb2.BridgeMessage(audio=msg.audio)


async def echo_server() -> None:
    server = grpc.aio.server()
    bridge_pb2_grpc.add_BridgeServiceServicer_to_server(Echo(), server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    print(f"echo 127.0.0.1:{port}", flush=True)
    await server.wait_for_termination()


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def bench_echo(n: int, seconds: float) -> dict[str, float]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, __file__, stdout=asyncio.subprocess.PIPE
    )
    assert proc.stdout is not None
    address = (await proc.stdout.readline()).decode().split()[1]
    echoed = 0
    cpu0 = cpu_seconds(proc.pid)

    async def stream(stub: Any) -> None:
        nonlocal echoed
        queue: asyncio.Queue[Any] = asyncio.Queue()

        async def requests() -> Any:
            while (msg := await queue.get()) is not None:
                yield msg

        async def speak() -> None:
            t0 = time.monotonic()
            for i in range(int(seconds * 25)):
                await asyncio.sleep(max(0.0, t0 + i * 0.04 - time.monotonic()))
                pcm = np.full(CHUNK, i, dtype="<i2").tobytes()
                await queue.put(bridge_pb2.BotMessage(audio=common_pb2.AudioChunk(pcm=pcm)))
            await queue.put(None)

        task = asyncio.create_task(speak())
        async for _ in stub.Converse(requests()):
            echoed += 1
        await task

    try:
        async with grpc.aio.insecure_channel(address) as channel:
            stub = bridge_pb2_grpc.BridgeServiceStub(channel)
            await asyncio.gather(*(stream(stub) for _ in range(2 * n)))
        cpu = cpu_seconds(proc.pid) - cpu0
    finally:
        proc.terminate()
        await proc.wait()
    # Each echoed chunk is one message in and one out.
    return {"echo_cpu_us_per_message": 1e6 * cpu / max(1, 2 * echoed)}


if __name__ == "__main__":
    asyncio.run(echo_server())
