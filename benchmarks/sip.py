"""SIP benchmark: the delay SIP/RTP adds per direction vs gRPC, CPU per session-second, capacity.

    python benchmarks/sip.py                    # N = 10, 25, 50, 100 sessions, 8 s each
    python benchmarks/sip.py --quick            # N = 2 for 3 s: a smoke run
    python benchmarks/sip.py --sizes 20 40 --seconds 10 --json

The bridge runs in its own process (``vae bridge serve``), so its CPU is
measured alone. For each N it runs N sessions twice, in the same run of this
script: once with both sides synthetic gRPC bots (the baseline), once with
the agent side a SIP far end (a ``vae.sip`` user agent in this process that
answers the bridge's calls and speaks G.711 RTP). Each side sends silence
with a 100 ms tone burst every second, on its own real-time clock; the other
side timestamps each burst's onset. Per N and transport:

- delay user->agent and agent->user, p50 and p99 (ms), from the first sample
  of a burst sent to its onset received (the bridge's jitter buffer is in
  both; SIP adds packetisation, G.711 and the RTP jitter buffer, 60 ms);
- missed: bursts sent and never detected (a session that cannot keep up);
- bridge CPU in ms per session-second, and the SIP/gRPC ratio.

"held" is the largest N over SIP with no burst missed and a p99 delay within
250 ms each way (this machine; the load generator shares its cores, and its
own CPU is reported). Figures are printed, never asserted; ``--json`` prints
one JSON document on stdout, the rest goes to stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import socket
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import grpc
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from vae.bridge.v1 import bridge_pb2, bridge_pb2_grpc  # noqa: E402
from vae.common.v1 import common_pb2  # noqa: E402

RATE = 16000
BURST_S, EVERY_S = 0.1, 1.0


def say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def burst(rate: int, n: int, start: int) -> np.ndarray:
    """Samples [start, start+n) of the line: a 1 kHz burst for 100 ms every second."""
    idx = np.arange(start, start + n)
    on = (idx % int(rate * EVERY_S)) < int(rate * BURST_S)
    return (np.sin(2 * np.pi * 1000 * idx / rate) * 10000 * on).astype("<i2")


class Ears:
    """Onset times of bursts in what a side receives, and the send times of its own."""

    def __init__(self) -> None:
        self.loud = False
        self.heard: list[float] = []
        self.sent: list[float] = []

    def hear(self, pcm: bytes, now: float) -> None:
        x = np.frombuffer(pcm, "<i2").astype(np.float64)
        loud = bool(len(x)) and float(np.sqrt(np.mean(x**2))) > 2000
        if loud and not self.loud:
            self.heard.append(now)
        self.loud = loud


def delays(sender: Ears, receiver: Ears) -> tuple[list[float], int]:
    out, missed = [], 0
    for sent in sender.sent[:-1]:  # the last burst may be cut by the session's end
        later = [h for h in receiver.heard if sent <= h < sent + EVERY_S * 0.9]
        if later:
            out.append(later[0] - sent)
        else:
            missed += 1
    return out, missed


async def paced(send: Any, rate: int, ears: Ears, stop: asyncio.Event, chunk_s: float) -> None:
    """Send the burst pattern in ``chunk_s`` chunks on the loop's clock until ``stop``."""
    loop = asyncio.get_running_loop()
    n, t0, k = int(rate * chunk_s), loop.time(), 0
    while not stop.is_set():
        due = t0 + k * chunk_s
        if loop.time() < due:
            await asyncio.sleep(due - loop.time())
        if (k * n) % int(rate * EVERY_S) == 0:
            ears.sent.append(time.monotonic())
        await send(burst(rate, n, k * n).tobytes(), k)
        k += 1


async def grpc_bot(stub: Any, role: int, run_id: str, ears: Ears, done: asyncio.Event) -> None:
    fmt = common_pb2.AudioFormat(encoding=common_pb2.AUDIO_ENCODING_PCM16LE,
                                 sample_rate_hz=RATE, channels=1)  # fmt: skip
    out: asyncio.Queue[bridge_pb2.BotMessage | None] = asyncio.Queue()
    out.put_nowait(bridge_pb2.BotMessage(join=bridge_pb2.Join(
        role=role, bot=common_pb2.BotInfo(name="bench"), send_format=fmt, receive_format=fmt,
        run_filter=run_id)))  # fmt: skip

    async def requests() -> Any:
        while (m := await out.get()) is not None:
            yield m

    async def send(pcm: bytes, k: int) -> None:
        n = len(pcm) // 2
        chunk = common_pb2.AudioChunk(sequence=k, sample_offset=k * n, pcm=pcm,
                                      sent_unix_nanos=time.time_ns())  # fmt: skip
        out.put_nowait(bridge_pb2.BotMessage(audio=chunk))

    call = stub.Converse(requests())
    stop = asyncio.Event()
    async with asyncio.TaskGroup() as tg:
        async for msg in call:
            which = msg.WhichOneof("message")
            if which == "session_start":
                tg.create_task(paced(send, RATE, ears, stop, 0.02))
            elif which == "audio":
                ears.hear(msg.audio.pcm, time.monotonic())
            elif which == "session_ending":
                stop.set()
                out.put_nowait(bridge_pb2.BotMessage(final_state=bridge_pb2.FinalState(done=True)))
            elif which == "session_ended":
                break
        stop.set()
        out.put_nowait(None)
    done.set()


async def sip_far_end(agent_ears: list[Ears], stop: asyncio.Event, ready: asyncio.Future[str]
                      ) -> None:  # fmt: skip
    """Answer every call; each speaks the burst pattern at 8 kHz and listens for the caller's."""
    from vae.sip.agent import UserAgent
    from vae.sip.call import Hangup
    from vae.sip.incoming import IncomingCall

    calls: asyncio.Queue[IncomingCall] = asyncio.Queue()

    async def one(incoming: IncomingCall) -> None:
        call = await incoming.answer()
        ears = Ears()
        agent_ears.append(ears)
        hung = asyncio.Event()

        async def send(pcm: bytes, k: int) -> None:
            call.media.send_pcm(pcm)
            ears.hear(call.media.pop(len(pcm) // 2), time.monotonic())
            while not call.events.empty():
                if isinstance(call.events.get_nowait(), Hangup):
                    hung.set()

        await paced(send, 8000, ears, hung, 0.02)
        call.close()

    async with UserAgent("127.0.0.1", user="agent", on_invite=calls.put_nowait) as ua:
        ready.set_result(f"sip:agent@127.0.0.1:{ua.port}")
        async with asyncio.TaskGroup() as tg:
            while not stop.is_set():
                with contextlib.suppress(TimeoutError):
                    tg.create_task(one(await asyncio.wait_for(calls.get(), 0.2)))


async def measure(address: str, pid: int, n: int, seconds: float, sip_uri: str,
                  agent_ears: list[Ears]) -> dict[str, Any]:  # fmt: skip
    agent_ears.clear()
    scenario = {
        "name": "bench",
        "max_duration": seconds,
        "first_speaker": "user",
        "user": {"persona": {"name": "u"}},
        "agent": {"persona": {"role": "a"}},
    }
    options = bridge_pb2.RunOptions(concurrency=n, inactivity_timeout_s=60, max_auto_retries=0,
                                    first_speaker_timeout_s=60, repeat=n)  # fmt: skip
    if sip_uri:
        options.agent_connector.CopyFrom(bridge_pb2.ConnectorConfig(kind="sip", url=sip_uri,
                                                                    capacity=n))  # fmt: skip
    async with grpc.aio.insecure_channel(address) as channel:
        stub = bridge_pb2_grpc.BridgeServiceStub(channel)
        req = bridge_pb2.StartRunRequest(
            sources=[bridge_pb2.ScenarioSource(inline=json.dumps([scenario]))], options=options
        )
        run_id = (await stub.StartRun(req)).run.run_id
        cpu0, t0 = cpu_seconds(pid), time.perf_counter()
        users = [Ears() for _ in range(n)]
        agents = [] if sip_uri else [Ears() for _ in range(n)]
        done = [asyncio.Event() for _ in range(n * (1 if sip_uri else 2))]
        async with asyncio.TaskGroup() as tg:
            for i in range(n):
                tg.create_task(grpc_bot(stub, common_pb2.ROLE_USER, run_id, users[i], done[i]))
                if not sip_uri:
                    tg.create_task(grpc_bot(stub, common_pb2.ROLE_AGENT, run_id, agents[i],
                                            done[n + i]))  # fmt: skip
        cpu, wall = cpu_seconds(pid) - cpu0, time.perf_counter() - t0
    agents = agents or list(agent_ears)
    # Pair each user with its agent by the session order is unknown: pool the delays.
    up, down, missed = [], [], 0
    for u in users:
        best = min(agents, key=lambda a: len(delays(u, a)[0]) * -1) if agents else None
        if best is None:
            continue
        d, m = delays(u, best)
        up += d
        missed += m
        d, m = delays(best, u)
        down += d
        missed += m
    pct = lambda xs, q: round(float(np.percentile(xs, q)) * 1000, 1) if xs else None  # noqa: E731
    return {"n": n, "transport": "sip" if sip_uri else "grpc",
            "up_p50_ms": pct(up, 50), "up_p99_ms": pct(up, 99),
            "down_p50_ms": pct(down, 50), "down_p99_ms": pct(down, 99), "missed": missed,
            "cpu_ms_per_session_s": round(cpu * 1000 / (n * seconds), 2),
            "wall_s": round(wall, 1)}  # fmt: skip


async def main(args: argparse.Namespace) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        address = f"127.0.0.1:{port}"
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        bridge = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "vae.cli.main", "bridge", "serve", "--db", f"{tmp}/b.db",
            "--address", address, stdout=asyncio.subprocess.PIPE, env=env)  # fmt: skip
        assert bridge.stdout is not None
        await asyncio.wait_for(bridge.stdout.readline(), 60)
        stop, ready = asyncio.Event(), asyncio.get_running_loop().create_future()
        agent_ears: list[Ears] = []
        rows = []
        gen0 = time.process_time()
        try:
            async with asyncio.TaskGroup() as tg:
                tg.create_task(sip_far_end(agent_ears, stop, ready))
                uri = await ready
                for n in args.sizes:
                    for transport in ("grpc", "sip"):
                        via = uri if transport == "sip" else ""
                        row = await measure(address, bridge.pid, n, args.seconds, via, agent_ears)
                        rows.append(row)
                        say(json.dumps(row))
                stop.set()
        finally:
            bridge.terminate()
            await bridge.wait()
    gen_cpu = time.process_time() - gen0
    sip_rows = {r["n"]: r for r in rows if r["transport"] == "sip"}
    grpc_rows = {r["n"]: r for r in rows if r["transport"] == "grpc"}
    held = max((n for n, r in sip_rows.items() if r["missed"] == 0
                and (r["up_p99_ms"] or 1e9) <= 250 and (r["down_p99_ms"] or 1e9) <= 250),
               default=0)  # fmt: skip
    summary = []
    for n, r in sip_rows.items():
        g = grpc_rows[n]
        summary.append({
            "n": n,
            "added_up_p50_ms": round((r["up_p50_ms"] or 0) - (g["up_p50_ms"] or 0), 1),
            "added_down_p50_ms": round((r["down_p50_ms"] or 0) - (g["down_p50_ms"] or 0), 1),
            "cpu_ratio_sip_vs_grpc": round(r["cpu_ms_per_session_s"]
                                           / max(g["cpu_ms_per_session_s"], 1e-9), 2),
        })  # fmt: skip
    return {
        "rows": rows,
        "summary": summary,
        "held_over_sip": held,
        "generator_cpu_s": round(gen_cpu, 1),
    }


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="N = 2 for 3 s: a smoke run")
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 25, 50, 100])
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--json", action="store_true", help="one JSON document on stdout")
    parsed = parser.parse_args()
    if parsed.quick:
        parsed.sizes, parsed.seconds = [2], 3.0
    result = asyncio.run(main(parsed))
    if parsed.json:
        print(json.dumps(result, indent=2))
    else:
        for s in result["summary"]:
            say(f"N={s['n']}: SIP adds {s['added_up_p50_ms']} ms user->agent, "
                f"{s['added_down_p50_ms']} ms agent->user (p50); bridge CPU x"
                f"{s['cpu_ratio_sip_vs_grpc']} of gRPC")  # fmt: skip
        say(f"sessions held over SIP: {result['held_over_sip']} (of {parsed.sizes})")
