"""Connector benchmark: the delay and CPU each way of reaching an agent adds, in one run.

    python benchmarks/connectors.py              # 20 s per connector
    python benchmarks/connectors.py --quick      # 3 s per connector: a smoke run
    python benchmarks/connectors.py --seconds 60 --json

One session per connector through a bridge in this process, one after the
other: the agent is reached over vae's gRPC contract (the baseline), a pipecat
websocket, pipecat's SmallWebRTC (aiortc, Opus) and LiveKit's console wire.
Both bots — the caller (a gRPC bot) and the agent (benchmarks/lib: a gRPC
bot, a real pipecat pipeline in the pipecat venv; the tests' fake console
peer speaking livekit's protocol, in its ``bench`` mode) — run in processes
of their own and speak the burst
pattern of ``benchmarks/lib/bursts.py`` (100 ms of tone every 500 ms), each
noting when a burst left it and when one reached it. Per connector:

- agent -> vae: from the agent emitting a burst to vae recording its first
  frame (the agent channel's arrival time), median and p95, ms;
- vae -> agent: from vae handing the caller's burst to the agent's side (the
  ``to_agent`` channel's delivery time) to the agent receiving it;
- CPU of this process (the bridge, the connector, its codec) per
  session-second, and as a ratio to gRPC's measured in the same run.

The LiveKit figure is the console connector's own (its real-time playout):
a LiveKit agent's pipeline adds its own time on top. WebRTC's ICE never uses
127.0.0.1, so the run moves itself into a network namespace of its own
(``unshare -n``, loopback 127.0.0.2 added) where it can; without one the
WebRTC row is left out, saying why. A connector whose venv is missing
(scripts/setup_pipecat_env.sh) is left out the same way. Figures are printed,
never asserted; ``--json`` prints one JSON document to stdout.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import socket
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
LIB = ROOT / "benchmarks" / "lib"
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(LIB))

from bursts import onsets, read  # noqa: E402

PIPECAT = ROOT / ".pipecat-venv" / "bin" / "python"
#: ``python -m livekit.agents console`` answered by the tests' fake console (mode ``bench``).
FAKE_CONSOLE = ROOT / "tests" / "bridge_service" / "connectors" / "livekit" / "fake_console"
KINDS = ("grpc", "pipecat", "webrtc", "livekit")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


async def spawn(*argv: str, env: dict[str, str] | None = None) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        *argv, cwd=ROOT, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
        env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
    )  # fmt: skip


async def stop(proc: asyncio.subprocess.Process) -> None:
    if proc.returncode is None:
        proc.terminate()
        try:
            await asyncio.wait_for(proc.wait(), 10)
        except TimeoutError:
            proc.kill()
            await proc.wait()


def arrivals(reader: Any, session_id: str, channel: str) -> tuple[np.ndarray, list[int]]:
    """The channel's samples in order, and each sample's frame arrival (ns), by offset."""
    pcm, times = [], []
    for seg in reader.segments(session_id, channel):
        samples = np.frombuffer(seg.pcm, "<i2")
        pcm.append(samples)
        rows = reader_frames(seg)
        for _seq, n, arrival in rows:
            times.extend([int(arrival)] * int(n))
        times.extend([times[-1] if times else 0] * (len(samples) - sum(int(r[1]) for r in rows)))
    return (np.concatenate(pcm) if pcm else np.zeros(0, np.int16)), times


def reader_frames(seg: Any) -> Any:
    from vae.recordings.audio import unpack_frames

    return unpack_frames(seg.frames)


def matched(starts: list[int], stops: list[int], within_ns: int = 1_000_000_000) -> list[float]:
    """For each start, ms to the first stop at or after it (within ``within_ns``)."""
    out, j = [], 0
    for start in starts:
        while j < len(stops) and stops[j] < start:
            j += 1
        if j < len(stops) and stops[j] - start <= within_ns:
            out.append((stops[j] - start) / 1e6)
            j += 1
    return out


def stats(values: list[float]) -> dict[str, float | int | None]:
    if not values:
        return {"n": 0, "p50": None, "p95": None}
    return {"n": len(values), "p50": float(np.percentile(values, 50)),
            "p95": float(np.percentile(values, 95))}  # fmt: skip


async def one(kind: str, bridge: Any, stub: Any, work: Path, seconds: float) -> dict[str, Any]:
    from vae.bridge.v1 import bridge_pb2
    from vae.recordings.read.reader import RecordingReader

    log = work / f"{kind}.log"
    agent_proc: asyncio.subprocess.Process | None = None
    options: dict[str, Any] = {}
    if kind in ("pipecat", "webrtc"):
        port = free_port()
        agent_proc = await spawn(str(PIPECAT), str(LIB / "pipecat_bench_bot.py"),
                                 "ws" if kind == "pipecat" else "webrtc", str(port), str(log),
                                 str(seconds + 2))  # fmt: skip
        assert agent_proc.stdout is not None
        await asyncio.wait_for(agent_proc.stdout.readline(), 60)
        url = f"ws://127.0.0.1:{port}" if kind == "pipecat" else \
            f"webrtc+http://127.0.0.1:{port}/api/offer"  # fmt: skip
        options = {"prompt_message": "none", "fetch_summary": False, "fetch_context": False}
        connector = bridge_pb2.ConnectorConfig(kind=kind, url=url, options_json=json.dumps(options))
    elif kind == "livekit":
        placeholder = work / "agent.py"
        placeholder.write_text("# the fake console (mode bench) answers for this file\n")
        env = {"PYTHONPATH": os.pathsep.join([str(FAKE_CONSOLE), str(LIB)]),
               "FAKE_CONSOLE_MODE": "bench", "BENCH_LOG": str(log),
               "BENCH_SECONDS": str(seconds + 2)}  # fmt: skip
        options = {"python": sys.executable, "env": env}
        connector = bridge_pb2.ConnectorConfig(kind="livekit", url=f"livekit:{placeholder}",
                                               options_json=json.dumps(options))  # fmt: skip
    scenario = {"name": f"bench_{kind}", "max_duration": seconds, "user": {}, "agent": {}}
    run_options = bridge_pb2.RunOptions(max_auto_retries=0)
    if kind != "grpc":
        run_options.agent_connector.CopyFrom(connector)
    request = bridge_pb2.StartRunRequest(
        sources=[bridge_pb2.ScenarioSource(inline=json.dumps([scenario]))], options=run_options
    )
    run_id = (await stub.StartRun(request)).run.run_id
    bots = [await spawn(sys.executable, str(LIB / "grpc_bench_agent.py"), bridge.address, run_id,
                        str(work / f"{kind}_user.log"), str(seconds + 2), "user")]  # fmt: skip
    if kind == "grpc":
        bots.append(await spawn(sys.executable, str(LIB / "grpc_bench_agent.py"),
                                bridge.address, run_id, str(log), str(seconds + 2)))  # fmt: skip
    before = cpu_s()
    try:
        async for _ in stub.WatchRun(bridge_pb2.WatchRunRequest(run_id=run_id)):
            pass
    finally:
        cpu = cpu_s() - before
        for proc in [*bots, *([agent_proc] if agent_proc else [])]:
            await stop(proc)
    with RecordingReader(work / "vae.db") as r:
        (session,) = r.sessions(run_id)
        agent_pcm, agent_at = arrivals(r, session.session_id, "agent")
        to_pcm, to_at = arrivals(r, session.session_id, "to_agent")
        rate = {str(k): v for k, v in r.channel_rates(session.session_id).items()}
    marks = read(log)
    recorded = [agent_at[i] for i in onsets(agent_pcm, rate.get("agent", 16000))]
    delivered = [to_at[i] for i in onsets(to_pcm, rate.get("to_agent", 16000))]
    return {
        "kind": kind,
        "stop_reason": session.stop_reason,
        "agent_to_vae_ms": stats(matched(marks["emit"], recorded)),
        "vae_to_agent_ms": stats(matched(delivered, marks["heard"])),
        "cpu_ms_per_session_s": 1000 * cpu / max(seconds, 1e-9),
    }


async def bench(kinds: list[str], seconds: float) -> list[dict[str, Any]]:
    import grpc

    from vae.bridge.v1 import bridge_pb2_grpc
    from vae.bridge_service.config import BridgeSettings
    from vae.bridge_service.server import BridgeServer

    with tempfile.TemporaryDirectory(prefix="vae-bench-connectors-") as tmp:
        work = Path(tmp)
        settings = BridgeSettings(address="127.0.0.1:0", end_grace_s=0.3, final_state_timeout_s=3)
        bridge = BridgeServer(work / "vae.db", settings)
        await bridge.start()
        try:
            async with grpc.aio.insecure_channel(bridge.address) as channel:
                stub = bridge_pb2_grpc.BridgeServiceStub(channel)
                return [await one(k, bridge, stub, work, seconds) for k in kinds]
        finally:
            await bridge.stop()


def in_namespace(argv: list[str]) -> int | None:
    """Run this benchmark again inside a fresh network namespace; None if refused."""
    if (
        os.environ.get("VAE_BENCH_NETNS")
        or subprocess.run(["unshare", "-n", "true"], capture_output=True, check=False).returncode
    ):
        return None
    script = 'ip link set lo up && ip addr add 127.0.0.2/8 dev lo && exec "$0" "$@"'
    env = {**os.environ, "VAE_BENCH_NETNS": "1"}
    cmd = ["unshare", "-n", "sh", "-c", script, sys.executable, __file__, *argv]
    return subprocess.run(cmd, env=env, check=False).returncode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 s per connector: a smoke run")
    parser.add_argument("--seconds", type=float, default=20.0, help="session length per connector")
    parser.add_argument("--kinds", nargs="+", choices=KINDS, default=list(KINDS))
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    args = parser.parse_args()
    kinds = list(args.kinds)
    notes = []
    if "webrtc" in kinds and not os.environ.get("VAE_BENCH_NETNS"):
        code = in_namespace(sys.argv[1:])
        if code is not None:
            sys.exit(code)
        kinds.remove("webrtc")
        notes.append("webrtc left out: no network namespace (unshare -n refused)")
    if not PIPECAT.exists():
        for kind in ("pipecat", "webrtc"):
            if kind in kinds:
                kinds.remove(kind)
                notes.append(
                    f"{kind} left out: create .pipecat-venv with scripts/setup_pipecat_env.sh"
                )
    seconds = 3.0 if args.quick else args.seconds
    results = asyncio.run(bench(kinds, seconds))
    base = next((r["cpu_ms_per_session_s"] for r in results if r["kind"] == "grpc"), None)
    for r in results:
        r["cpu_vs_grpc"] = r["cpu_ms_per_session_s"] / base if base else None
    if args.json:
        print(json.dumps({"seconds": seconds, "results": results, "notes": notes}))
        return
    for note in notes:
        print(note, file=sys.stderr)
    print(f"{seconds:g} s per connector; delays in ms (median / p95, samples); CPU of the bridge "
          "process per session-second")  # fmt: skip
    print(f"{'connector':10} {'agent->vae':>22} {'vae->agent':>22} {'CPU ms/s':>9} {'vs gRPC':>8}")
    for r in results:
        cells = []
        for key in ("agent_to_vae_ms", "vae_to_agent_ms"):
            s = r[key]
            cells.append("-" if s["n"] == 0 else f"{s['p50']:.0f} / {s['p95']:.0f} ({s['n']})")
        ratio = f"{r['cpu_vs_grpc']:.2f}x" if r["cpu_vs_grpc"] else "-"
        print(f"{r['kind']:10} {cells[0]:>22} {cells[1]:>22} "
              f"{r['cpu_ms_per_session_s']:9.1f} {ratio:>8}")  # fmt: skip


if __name__ == "__main__":
    main()
