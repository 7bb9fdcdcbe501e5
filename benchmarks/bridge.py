"""Bridge load benchmark: N real-time sessions through a bridge in its own process.

    python benchmarks/bridge.py                         # N = 10, 25, 50, 100, 150, 200
    python benchmarks/bridge.py --quick                 # N = 10 for 3 s: a smoke run
    python benchmarks/bridge.py --sizes 25 50 --frame-ms 40 --json
    python benchmarks/bridge.py --heavy --sizes 10      # + a 64 MB final state + a flooder
    python benchmarks/bridge.py --bridge-src ../base    # the same load on another checkout
    python benchmarks/bridge.py --baseline-src ../base  # before/after, per N, in one run
    python benchmarks/bridge.py --bridge-workers 1 2    # one bridge process, then two workers

Each session pairs two synthetic bots that both send 40 ms chunks of 16 kHz
PCM in real time (the chunk's id encoded in its samples) and receive the
peer's audio in frames of ``--frame-ms`` (``--frames-per-message`` per
message; a bridge that predates frame negotiation uses the run's frame_ms).
The bots run in ``--workers`` processes of their own (benchmarks/lib/
bridge_bots.py), so the load generator is not the limit; its CPU is reported
beside the bridge's. Per N:

- lost: chunks whose samples never fully reached the peer; late: stretches
  of silence inside a sender's continuous speech (the jitter buffer ran dry);
- added latency p50/p99: peer receive time of a chunk's first sample minus
  its send time, minus the jitter buffer (also as a ratio to one frame);
- bridge CPU in ms per session-second and as a share of one core, and the
  generator's CPU the same way;
- us/msg: bridge CPU per gRPC message through it (chunks in, audio messages
  out); with ``--echo``, beside it a bare grpc.aio echo's CPU per message
  carrying the same chunks in the same run (the floor under the bridge);
- tick lateness: the bridge's own record of how late its clocks ticked
  (``sessions.clock_json``; median of the sessions' p50, worst p99 and max);
  empty for a bridge that does not record it;
- ``--heavy``: while the N sessions run, one more session's bot sends a
  64 MB final state and another's floods audio at 100x real time; reported:
  the N sessions' worst gap between received frames (beyond one frame), the
  worst arrival gap the bridge recorded, and frames dropped for them.

``--bridge-workers 1 2`` runs the whole sweep once per value: 1 is one
bridge process; N >= 2 is ``vae bridge serve --workers N`` (a front door and
N worker processes; the synthetic bots follow redirects, so every pair runs
at a worker). The bridge CPU is then the sum over all its processes, and the
last lines compare the largest N held (no frame lost, p99 within one frame)
per value.

Budgets (docs/benchmarks.md): 100 sessions on one core, no frame
lost, p99 added latency within one frame; <= 12 ms bridge CPU per
session-second at 16 ms frames, <= 6 ms at 40 ms; --heavy: <= 2 frames gap,
0 dropped. Figures are printed, never asserted. ``--json`` prints one JSON
document to stdout; everything else goes to stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import re
import sqlite3
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import grpc
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.lib.echo import bench_echo  # noqa: E402
from vae.bridge.v1 import bridge_pb2, bridge_pb2_grpc  # noqa: E402

BOTS = ROOT / "benchmarks" / "lib" / "bridge_bots.py"


def say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def bridge_env(src: Path, loop: str) -> dict[str, str]:
    """The checkout under test first; other entries (e.g. where uvloop lives) after it."""
    extra = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    extra = [p for p in extra if Path(p).resolve() != ROOT]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(src), *extra]))
    if loop:
        env["VAE_EVENT_LOOP"] = loop
    return env


async def start_bridge(
    db: Path, src: Path, loop: str, workers: int = 1
) -> tuple[asyncio.subprocess.Process, str, list[int]]:
    """The bridge, its address, and the pids of all its processes (front door first)."""
    profile = os.environ.get("VAE_BENCH_PROFILE")  # a path: run the bridge under cProfile
    wrap = ["-m", "cProfile", "-o", profile, "-m"] if profile else ["-m"]
    env = bridge_env(src, loop)
    more = ["--workers", str(workers)] if workers > 1 else []
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        *wrap,
        "vae.cli.main",
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
        *more,
        cwd=src,
        env=env,
        stdout=asyncio.subprocess.PIPE,
    )
    assert proc.stdout is not None
    line = await asyncio.wait_for(proc.stdout.readline(), 60)
    pids = [proc.pid]
    if workers > 1:  # "  and N worker processes ...: worker 1 pid P port Q, ..."
        listed = (await asyncio.wait_for(proc.stdout.readline(), 60)).decode()
        pids += [int(pid) for pid in re.findall(r"worker \d+ pid (\d+)", listed)]
        if len(pids) != workers + 1:
            raise RuntimeError(f"expected {workers} workers, the bridge said: {listed!r}")
    return proc, line.decode().rsplit(" ", 1)[1].strip(), pids


async def start_run(stub: Any, names: list[str], args: argparse.Namespace) -> str:
    docs = [{"name": name, "max_duration": args.seconds + 60} for name in names]
    options = bridge_pb2.RunOptions(
        concurrency=len(names), max_auto_retries=0, inactivity_timeout_s=600
    )
    options.frame_ms = args.frame_ms
    request = bridge_pb2.StartRunRequest(
        sources=[bridge_pb2.ScenarioSource(inline=json.dumps(docs))], options=options
    )
    return str((await stub.StartRun(request)).run.run_id)


async def generator(cmd: list[str], nice: int = 0) -> asyncio.subprocess.Process:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        str(BOTS),
        *cmd,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        preexec_fn=(lambda: os.nice(nice)) if nice else None,
    )
    assert proc.stderr is not None
    seen = b""
    while (line := await asyncio.wait_for(proc.stderr.readline(), 120)) != b"ready\n":
        if not line:
            raise RuntimeError(f"bot generator failed: {seen.decode()[-2000:]}")
        seen += line
    return proc


async def finish(proc: asyncio.subprocess.Process) -> dict[str, Any]:
    out, err = await proc.communicate()
    if proc.returncode:
        raise RuntimeError(f"bot generator failed: {err.decode()[-2000:]}")
    result: dict[str, Any] = json.loads(out)
    return result


def store_figures(db: Path, normal: set[str]) -> dict[str, Any]:
    """Tick lateness and drops the bridge recorded for the normal sessions."""
    conn = sqlite3.connect(db)
    try:
        columns = {r[1] for r in conn.execute("PRAGMA table_info(sessions)")}
        clocks = []
        if "clock_json" in columns:
            for sid, text in conn.execute("SELECT session_id, clock_json FROM sessions"):
                if sid in normal and text:
                    clocks.append(json.loads(text))
        dropped = 0
        for sid, payload in conn.execute(
            "SELECT session_id, payload_json FROM events WHERE kind = 'audio_dropped'"
        ):
            if sid in normal:
                p = json.loads(payload)
                dropped += int(p.get("frames", 0)) or math.ceil(int(p.get("samples", 0)) / 256)
    finally:
        conn.close()
    if not clocks:
        return {"tick_p50_ms": None, "tick_p99_ms": None, "tick_max_ms": None,
                "bridge_gap_ms": None, "dropped": dropped}  # fmt: skip
    return {
        "tick_p50_ms": float(np.median([c["tick_late"]["p50_ms"] for c in clocks])),
        "tick_p99_ms": max(c["tick_late"]["p99_ms"] for c in clocks),
        "tick_max_ms": max(c["tick_late"]["max_ms"] for c in clocks),
        "bridge_gap_ms": max(max(c["arrival_gap_max_ms"].values()) for c in clocks),
        "dropped": dropped,
    }


async def bench(n: int, args: argparse.Namespace) -> dict[str, Any]:
    workers = args.workers or max(2, math.ceil(n / 20))
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "bench.db"
        proc, address, pids = await start_bridge(
            db, args.bridge_src, args.bridge_loop, args.bridge_workers_now
        )
        try:
            async with grpc.aio.insecure_channel(address) as channel:
                stub = bridge_pb2_grpc.BridgeServiceStub(channel)
                run_id = await start_run(stub, [f"b{i}" for i in range(n)], args)
                common = ["--address", address, "--seconds", str(args.seconds)]
                gens = []
                if args.heavy:
                    heavy_run = await start_run(stub, ["heavy"], args)
                    flood_run = await start_run(stub, ["flood"], args)
                    gens.append(await generator([*common, "--kind", "heavy", "--run", heavy_run,
                                                 "--flood-run", flood_run]))  # fmt: skip
                shares = [n // workers + (i < n % workers) for i in range(workers)]
                framing = ["--frame-ms", str(args.frame_ms),
                           "--frames-per-message", str(args.frames_per_message)]  # fmt: skip
                cpu0, t0 = [cpu_seconds(p) for p in pids], time.monotonic()
                gens += [
                    await generator(
                        [*common, *framing, "--run", run_id, "--sessions", str(k)],
                        args.generator_nice,
                    )
                    for k in shares
                    if k
                ]
                results = [await finish(g) for g in gens]
                wall = time.monotonic() - t0
                per_process = [cpu_seconds(p) - c for p, c in zip(pids, cpu0, strict=True)]
                cpu = sum(per_process)
        finally:
            proc.terminate()
            await proc.wait()
        normal_results = results[1:] if args.heavy else results
        normal = {sid for r in normal_results for sid in r["sessions"]}
        recorded = store_figures(db, normal)
    directions = [d for r in normal_results for d in r["directions"]]
    latency = [x for d in directions for x in d["latency_ms"]] or [float("nan")]
    gen_cpu = sum(r["cpu_s"] for r in normal_results)
    messages = sum(r["messages"] for r in results)
    echo = await bench_echo(n, min(args.seconds, 5.0)) if args.echo else {}
    return {
        "bridge_cpu_us_per_message": 1e6 * cpu / max(1, messages),
        **echo,
        "n": n,
        "bridge_workers": args.bridge_workers_now,
        "bots_by_port": _merge_ports(normal_results),
        "sessions_paired": len(normal),
        "lost": sum(d["lost"] for d in directions),
        "late": sum(d["late"] for d in directions),
        "p50_ms": float(np.percentile(latency, 50)),
        "p99_ms": float(np.percentile(latency, 99)),
        "p99_frames": float(np.percentile(latency, 99)) / args.frame_ms,
        "bridge_cpu_core": cpu / wall,
        # Per process (the front door first, then each worker), share of one core.
        "bridge_cpu_core_by_process": [c / wall for c in per_process],
        "bridge_cpu_ms_per_session_s": 1000 * cpu / wall / n,
        "generator_cpu_core": gen_cpu / wall,
        "generator_cpu_ms_per_session_s": 1000 * gen_cpu / wall / n,
        "recv_gap_max_ms": max((d["gap_ms"] for d in directions), default=0.0),
        **recorded,
    }


def _merge_ports(results: list[dict[str, Any]]) -> dict[str, int]:
    """Bots per serving process (port "0": the bridge's own process)."""
    merged: dict[str, int] = {}
    for r in results:
        for port, bots in r.get("by_port", {}).items():
            merged[port] = merged.get(port, 0) + bots
    return merged


def row(r: dict[str, Any]) -> str:
    def f(key: str, spec: str = ".1f") -> str:
        v = r.get(key)
        return "-" if v is None else format(v, spec)

    return (
        f"{r.get('bridge_workers', 1):>2} {r['n']:>5} {r['lost']:>5} {r['late']:>5} "
        f"{f('p50_ms'):>7} {f('p99_ms'):>7} "
        f"{f('p99_frames', '.2f'):>6} {f('bridge_cpu_ms_per_session_s'):>7} "
        f"{f('bridge_cpu_core', '.2f'):>5} {f('generator_cpu_core', '.2f'):>5} "
        f"{f('tick_p50_ms'):>5} {f('tick_p99_ms'):>6} {f('tick_max_ms'):>7} "
        f"{f('recv_gap_max_ms'):>7} {f('bridge_gap_ms'):>7} {r['dropped']:>5} "
        f"{f('bridge_cpu_us_per_message', '.0f'):>6} {f('echo_cpu_us_per_message', '.0f'):>6}"
    )


async def main(args: argparse.Namespace) -> None:
    sizes = [10] if args.quick else args.sizes
    if args.quick:
        args.seconds = 3.0
    say(
        f"bridge benchmark ({args.bridge_src}, loop {args.bridge_loop or 'default'}): "
        f"{args.seconds:g} s sessions, 40 ms chunks in, {args.frame_ms} ms frames x "
        f"{args.frames_per_message} per message out, jitter buffer 80 ms, "
        f"{os.cpu_count()} cores{', heavy' if args.heavy else ''}"
    )
    say(
        f"{'W':>2} {'N':>5} {'lost':>5} {'late':>5} {'p50':>7} {'p99':>7} {'p99/fr':>6} "
        f"{'ms/ss':>7} {'core':>5} {'gen':>5} {'tk50':>5} {'tk99':>6} {'tkmax':>7} "
        f"{'rxgap':>7} {'brgap':>7} {'drop':>5} {'us/msg':>6} {'echo':>6}"
    )
    by_workers: dict[int, dict[str, Any]] = {}
    base_rows: list[dict[str, Any]] = []
    base_saturation = 0
    for workers in args.bridge_workers:
        args.bridge_workers_now = workers
        # The baseline runs as one process (a checkout before workers has no --workers).
        baseline = args.baseline_src is not None and workers == args.bridge_workers[0]
        rows, saturation, base = await sweep(args, sizes, baseline)
        if baseline:
            base_rows, base_saturation = base
        by_workers[workers] = {"saturation_n": saturation, "rows": rows}
        say(
            f"largest N with no frame lost and p99 within one frame"
            f"{f' at --workers {workers}' if len(args.bridge_workers) > 1 else ''}: "
            f"{saturation or 'none'}"
        )
        if baseline:
            say(f"  baseline: {base_saturation or 'none'}")
    if len(by_workers) > 1:
        one = args.bridge_workers[0]
        for workers, got in by_workers.items():
            held = by_workers[one]["saturation_n"]
            ratio = got["saturation_n"] / held if held else float("nan")
            say(f"--workers {workers}: {got['saturation_n'] or 'none'} sessions held "
                f"({ratio:.2f}x --workers {one})")  # fmt: skip
    if args.json:
        first = by_workers[args.bridge_workers[0]]
        doc = {
            "bridge_src": str(args.bridge_src),
            "bridge_loop": args.bridge_loop or "default",
            "frame_ms": args.frame_ms,
            "frames_per_message": args.frames_per_message,
            "seconds": args.seconds,
            "heavy": args.heavy,
            "cores": os.cpu_count(),
            "load_average": os.getloadavg(),
            "saturation_n": first["saturation_n"],
            "rows": first["rows"],
            "by_bridge_workers": {str(w): got for w, got in by_workers.items()},
            "baseline_src": None if args.baseline_src is None else str(args.baseline_src),
            "baseline_saturation_n": base_saturation if base_rows else None,
            "baseline_rows": base_rows,
        }
        print(json.dumps(doc, indent=2))


async def sweep(
    args: argparse.Namespace, sizes: list[int], baseline: bool
) -> tuple[list[dict[str, Any]], int, tuple[list[dict[str, Any]], int]]:
    """Every N at ``args.bridge_workers_now``: rows, saturation, and the baseline's."""
    rows: list[dict[str, Any]] = []
    base_rows: list[dict[str, Any]] = []
    saturation = base_saturation = 0
    for n in sizes:
        if baseline:
            b = await bench(
                n, argparse.Namespace(**{**vars(args), "bridge_src": args.baseline_src})
            )
            base_rows.append(b)
            say(row(b) + "  (baseline)")
            if b["lost"] == 0 and b["p99_ms"] <= args.frame_ms:
                base_saturation = n
        r = await bench(n, args)
        rows.append(r)
        split = " + ".join(f"{c:.2f}" for c in r["bridge_cpu_core_by_process"])
        more = f"  cores {split}; bots by port {r['bots_by_port']}"
        say(row(r) + (more if r["bridge_workers"] > 1 else ""))
        if base_rows:
            r["cpu_vs_baseline"] = r["bridge_cpu_ms_per_session_s"] / max(
                1e-9, base_rows[-1]["bridge_cpu_ms_per_session_s"]
            )
            say(f"      bridge CPU per session-second: {r['cpu_vs_baseline']:.2f}x the baseline's")
        if r["lost"] == 0 and r["p99_ms"] <= args.frame_ms:
            saturation = n
        if r["lost"] or r["p99_ms"] > 10 * args.frame_ms:
            say(f"stopping: broken at N={n} (frames lost or p99 beyond 10 frames)")
            break
    return rows, saturation, (base_rows, base_saturation)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="\n".join(__doc__.split("\n")[1:8]),
    )  # fmt: skip
    parser.add_argument("--quick", action="store_true", help="N=10 for 3 s (smoke run)")
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 25, 50, 100, 150, 200])
    parser.add_argument("--seconds", type=float, default=10.0, help="session length")
    parser.add_argument("--frame-ms", type=int, default=16, help="frame length to the bots")
    parser.add_argument("--frames-per-message", type=int, default=1)
    parser.add_argument("--workers", type=int, default=0, help="bot processes (0: N/20, >= 2)")
    parser.add_argument("--heavy", action="store_true", help="add a 64 MB final state + flooder")
    parser.add_argument(
        "--generator-nice", type=int, default=0,
        help="run the bot processes at this nice value (e.g. 10: on a small machine the"
        " load generator then takes only the CPU the bridge leaves, as if it ran elsewhere)",
    )  # fmt: skip
    parser.add_argument(
        "--bridge-src", type=Path, default=ROOT, help="checkout whose bridge to run"
    )
    parser.add_argument(
        "--baseline-src", type=Path, default=None,
        help="another checkout to run the same load on first, per N (before/after figures)",
    )  # fmt: skip
    parser.add_argument(
        "--bridge-loop", choices=["", "asyncio", "uvloop"], default="",
        help="event loop of the bridge (VAE_EVENT_LOOP; default: the bridge's own choice)",
    )  # fmt: skip
    parser.add_argument(
        "--echo", action="store_true",
        help="also measure a bare grpc.aio echo's CPU per message (the floor), per N",
    )  # fmt: skip
    parser.add_argument(
        "--bridge-workers", type=int, nargs="+", default=[1],
        help="bridge processes to measure, each a full sweep: 1 = one process, N >= 2 ="
        " `vae bridge serve --workers N` (e.g. --bridge-workers 1 2)",
    )  # fmt: skip
    parser.add_argument("--json", action="store_true", help="print one JSON document to stdout")
    asyncio.run(main(parser.parse_args()))
