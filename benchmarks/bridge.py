"""Bridge load benchmark: N concurrent real-time sessions through a bridge in its own process.

    python benchmarks/bridge.py            # N = 10, 25, 50, 100, 150, 200 (stops once it breaks)
    python benchmarks/bridge.py --quick    # N = 10 for 3 s: a smoke run
    python benchmarks/bridge.py --sizes 100 --seconds 20

Each session pairs two synthetic bots (this process) that both send 40 ms chunks
of 16 kHz PCM in real time (the chunk's id encoded in its samples) and read the
peer's audio on the bridge's 16 ms open-mic clock. Per N it prints:

- frames lost: chunks whose samples never fully reached the peer;
- frames late: stretches of silence inserted inside a sender's continuous
  speech (the jitter buffer ran dry: a frame arrived later than it absorbs);
- added latency p50/p99: peer receive time of a chunk's first sample minus its
  send time, minus the configured jitter buffer; and as a ratio to one frame;
- the baseline: the same load through a bare gRPC echo server (no bridge) in
  the same run, its round trip (two hops, as through the bridge) p50/p99;
- bridge CPU: the bridge process's CPU time (from /proc) per session, and the
  share of one core for the whole load.

Budget (DESIGN.md §10): 100 sessions on one core, no frame lost, p99 added
latency within one frame. Figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from vae.bridge.v1 import bridge_pb2, bridge_pb2_grpc  # noqa: E402
from vae.common.v1 import common_pb2  # noqa: E402

RATE, CHUNK_MS, FRAME_MS, JITTER_MS = 16000, 40, 16, 80
CHUNK = RATE * CHUNK_MS // 1000
MARK = 1000  # sample value of chunk i is MARK + i


def fmt() -> common_pb2.AudioFormat:
    return common_pb2.AudioFormat(
        encoding=common_pb2.AUDIO_ENCODING_PCM16LE, sample_rate_hz=RATE, channels=1
    )


@dataclass
class Bot:
    role: int
    seconds: float
    sent_ns: list[int] = field(default_factory=list)
    frames: list[tuple[int, bytes]] = field(default_factory=list)
    session_id: str = ""
    out: asyncio.Queue[Any] = field(default_factory=asyncio.Queue)

    async def requests(self, run_id: str) -> Any:
        yield bridge_pb2.BotMessage(
            join=bridge_pb2.Join(
                role=self.role,
                bot=common_pb2.BotInfo(name="bench", version="1"),  # type: ignore[arg-type]
                send_format=fmt(),
                receive_format=fmt(),
                run_filter=run_id,
            )
        )
        while (msg := await self.out.get()) is not None:
            yield msg

    async def speak(self) -> None:
        n = int(self.seconds * 1000 / CHUNK_MS)
        t0 = time.monotonic()
        for i in range(n):
            await asyncio.sleep(max(0.0, t0 + i * CHUNK_MS / 1000 - time.monotonic()))
            pcm = np.full(CHUNK, MARK + i, dtype="<i2").tobytes()
            self.sent_ns.append(time.time_ns())
            await self.out.put(
                bridge_pb2.BotMessage(
                    audio=common_pb2.AudioChunk(
                        sequence=i,
                        sample_offset=i * CHUNK,
                        pcm=pcm,
                        sent_unix_nanos=self.sent_ns[-1],
                    )
                )
            )
        if self.role == common_pb2.ROLE_AGENT:
            await self.out.put(
                bridge_pb2.BotMessage(
                    event=common_pb2.BotEvent(
                        end_conversation=common_pb2.EndConversation(
                            kind=common_pb2.END_KIND_AGENT_END_TOOL
                        )
                    )
                )
            )

    async def run(self, stub: Any, run_id: str) -> None:
        speaker: asyncio.Task[None] | None = None
        async for msg in stub.Converse(self.requests(run_id)):
            which = msg.WhichOneof("message")
            if which == "audio":
                self.frames.append((time.time_ns(), msg.audio.pcm))
            elif which == "session_start":
                self.session_id = msg.session_start.session.session_id
                speaker = asyncio.create_task(self.speak())
            elif which == "session_ending":
                await self.out.put(
                    bridge_pb2.BotMessage(final_state=bridge_pb2.FinalState(done=True))
                )
        await self.out.put(None)
        if speaker is not None:
            speaker.cancel()


def analyse(receiver: Bot, sender: Bot) -> dict[str, Any]:
    """Lost and late chunks, and per-chunk latency, of one direction."""
    if not receiver.frames:
        return {"lost": len(sender.sent_ns), "late": 0, "latency_ms": []}
    samples = np.frombuffer(b"".join(p for _, p in receiver.frames), dtype="<i2").astype(np.int64)
    frame_len = len(receiver.frames[0][1]) // 2
    recv_ns = np.repeat(np.array([t for t, _ in receiver.frames]), frame_len)[: len(samples)]
    ids = samples - MARK
    sent = len(sender.sent_ns)
    valid = (ids >= 0) & (ids < sent)
    counts = np.bincount(ids[valid], minlength=sent)[:sent]
    # The last chunk may still be in flight at the end of the call: not a loss.
    lost = int(np.sum(counts[:-1] < CHUNK))
    idx = np.flatnonzero(valid)
    late = 0
    if len(idx):
        span = samples[idx[0] : idx[-1] + 1]
        late = int(np.sum(np.diff((span == 0).astype(np.int8)) == 1))
    first = {}
    for i in idx[np.r_[True, np.diff(ids[idx]) != 0]]:
        first.setdefault(int(ids[i]), int(recv_ns[i]))
    latency = [(first[c] - sender.sent_ns[c]) / 1e6 - JITTER_MS for c in first]
    return {"lost": lost, "late": late, "latency_ms": latency}


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def start_bridge(db: Path) -> tuple[asyncio.subprocess.Process, str]:
    profile = os.environ.get("VAE_BENCH_PROFILE")  # a path: run the bridge under cProfile
    wrap = ["-m", "cProfile", "-o", profile, "-m"] if profile else ["-m"]
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        *wrap,
        "cli.main",
        "bridge",
        "serve",
        "--address",
        "127.0.0.1:0",
        "--db",
        str(db),
        "--log-level",
        "warning",
        "--wait-timeout",
        "600",
        cwd=ROOT,
        stdout=asyncio.subprocess.PIPE,
    )
    assert proc.stdout is not None
    line = await asyncio.wait_for(proc.stdout.readline(), 30)
    return proc, line.decode().rsplit(" ", 1)[1].strip()


async def bench_bridge(n: int, seconds: float) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        proc, address = await start_bridge(Path(tmp) / "bench.db")
        try:
            async with grpc.aio.insecure_channel(address) as channel:
                stub = bridge_pb2_grpc.BridgeServiceStub(channel)
                docs = [{"name": f"b{i}", "max_duration": seconds + 30} for i in range(n)]
                run = (await stub.StartRun(bridge_pb2.StartRunRequest(
                    sources=[bridge_pb2.ScenarioSource(inline=json.dumps(docs))],
                    options=bridge_pb2.RunOptions(concurrency=n, max_auto_retries=0,
                                                  inactivity_timeout_s=600)))).run  # fmt: skip
                bots = [
                    Bot(role, seconds)
                    for _ in range(n)
                    for role in (common_pb2.ROLE_USER, common_pb2.ROLE_AGENT)
                ]
                cpu0, t0 = cpu_seconds(proc.pid), time.monotonic()
                await asyncio.gather(*(b.run(stub, run.run_id) for b in bots))
                cpu, wall = cpu_seconds(proc.pid) - cpu0, time.monotonic() - t0
        finally:
            proc.terminate()
            await proc.wait()
    sessions: dict[str, list[Bot]] = {}
    for b in bots:
        sessions.setdefault(b.session_id, []).append(b)
    lost = late = 0
    latency: list[float] = []
    for pair in sessions.values():
        if len(pair) != 2:
            continue
        for receiver, sender in ((pair[0], pair[1]), (pair[1], pair[0])):
            got = analyse(receiver, sender)
            lost, late = lost + got["lost"], late + got["late"]
            latency += got["latency_ms"]
    lat = np.array(latency) if latency else np.array([np.nan])
    return {
        "n": n,
        "lost": lost,
        "late": late,
        "p50": float(np.percentile(lat, 50)),
        "p99": float(np.percentile(lat, 99)),
        "cpu_core": cpu / wall,
        "cpu_ms_per_session_s": 1000 * cpu / wall / n,
        # Messages through the bridge: chunks in, frames out.
        "messages": sum(len(b.sent_ns) + len(b.frames) for b in bots),
        "cpu_s": cpu,
    }


# ---------------------------------------------------------------- the baseline
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


async def bench_echo(n: int, seconds: float) -> dict[str, float]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, __file__, "--echo-server", stdout=asyncio.subprocess.PIPE
    )
    assert proc.stdout is not None
    address = (await proc.stdout.readline()).decode().split()[1]
    rtts: list[float] = []
    cpu0 = cpu_seconds(proc.pid)

    async def stream(stub: Any) -> None:
        sent: dict[int, int] = {}
        queue: asyncio.Queue[Any] = asyncio.Queue()

        async def requests() -> Any:
            while (msg := await queue.get()) is not None:
                yield msg

        async def speak() -> None:
            t0 = time.monotonic()
            for i in range(int(seconds * 1000 / CHUNK_MS)):
                await asyncio.sleep(max(0.0, t0 + i * CHUNK_MS / 1000 - time.monotonic()))
                sent[i] = time.time_ns()
                await queue.put(
                    bridge_pb2.BotMessage(
                        audio=common_pb2.AudioChunk(
                            sequence=i, pcm=np.full(CHUNK, MARK + i, dtype="<i2").tobytes()
                        )
                    )
                )
            await queue.put(None)

        task = asyncio.create_task(speak())
        async for msg in stub.Converse(requests()):
            rtts.append((time.time_ns() - sent[msg.audio.sequence]) / 1e6)
        await task

    try:
        async with grpc.aio.insecure_channel(address) as channel:
            stub = bridge_pb2_grpc.BridgeServiceStub(channel)
            await asyncio.gather(*(stream(stub) for _ in range(2 * n)))
        cpu = cpu_seconds(proc.pid) - cpu0
    finally:
        proc.terminate()
        await proc.wait()
    return {
        "p50": float(np.percentile(rtts, 50)),
        "p99": float(np.percentile(rtts, 99)),
        # Each echoed chunk is one message in and one out.
        "cpu_us_per_message": 1e6 * cpu / max(1, 2 * len(rtts)),
    }


async def main(args: argparse.Namespace) -> None:
    sizes = [10] if args.quick else args.sizes
    seconds = 3.0 if args.quick else args.seconds
    print(
        f"bridge benchmark: {seconds:g} s sessions, {CHUNK_MS} ms chunks in, {FRAME_MS} ms "
        f"frames out, jitter buffer {JITTER_MS} ms, {os.cpu_count()} cores"
    )
    print(
        "p50/p99: added latency (send -> peer receive, minus the jitter buffer), ms;"
        " echo: bare gRPC round trip, same load; cpu: bridge process"
    )
    print(
        f"{'N':>5} {'lost':>6} {'late':>6} {'p50':>8} {'p99':>8} {'p99/frame':>9} "
        f"{'echo p99':>9} {'cpu core':>8} {'cpu/sess':>12} {'us/msg':>7} {'vs echo':>7}"
    )
    for n in sizes:
        echo = await bench_echo(n, min(seconds, 3.0))
        r = await bench_bridge(n, seconds)
        per_msg = 1e6 * r["cpu_s"] / max(1, r["messages"])
        print(
            f"{n:>5} {r['lost']:>6} {r['late']:>6} {r['p50']:>8.2f} {r['p99']:>8.2f} "
            f"{r['p99'] / FRAME_MS:>9.2f} {echo['p99']:>9.2f} {r['cpu_core']:>8.2f} "
            f"{r['cpu_ms_per_session_s']:>7.2f} ms/s {per_msg:>7.1f} "
            f"{per_msg / echo['cpu_us_per_message']:>6.1f}x",
            flush=True,
        )
        if r["lost"] or r["p99"] > 10 * FRAME_MS:
            print(f"stopping: broken at N={n} (frames lost or p99 beyond 10 frames)")
            break


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="N=10 for 3 s (smoke run)")
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 25, 50, 100, 150, 200])
    parser.add_argument("--seconds", type=float, default=10.0, help="session length")
    parser.add_argument("--echo-server", action="store_true", help=argparse.SUPPRESS)
    ns = parser.parse_args()
    asyncio.run(echo_server() if ns.echo_server else main(ns))
