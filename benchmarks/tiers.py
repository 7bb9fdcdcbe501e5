"""The tiers benchmark: the example suite in audio (real and virtual clock) and in text.

    python benchmarks/tiers.py                  # the example suite, every tier, bots in 2 processes
    python benchmarks/tiers.py --quick          # three scenarios of it
    python benchmarks/tiers.py --layout one-process   # bridge and bots in one process (as vae demo)
    python benchmarks/tiers.py --profile audio/virtual --layout one-process  # cProfile one tier
    python benchmarks/tiers.py --json

Each tier runs the same scenarios with the demo's options (concurrency 6,
inactivity 4 s, seed 7, the scripted reference bots with their eSpeak voice)
into a fresh database, and measures the wall time from StartRun to the run's
end. Printed per tier, all in one run so the ratios compare like with like:

- wall: seconds from StartRun to RUN_FINISHED;
- calls: the total duration of the recorded sessions on the session clock
  (their own clock: wall time on the real clock, session time on the virtual
  one; a text turn lasts its speaking time on the virtual clock);
- x real time: the audio calls' duration (the audio/real tier's ``calls``:
  how long these conversations take when played) over this tier's wall time —
  how many seconds of calls one second of this tier checks;
- vs audio/real: the audio/real tier's wall time over this tier's;
- CPU: the bridge process and the bots' processes, seconds.

Goals on the 2-core reference machine: the virtual clock at least 20x real
time, text at least 100x. The bridge runs in this process; with ``--layout
processes`` (the default) the user and agent bots each run in a process of
their own (``vae bot``), as a user runs them; ``one-process`` puts them in the
bridge's process, as ``vae demo`` does (and lets ``--profile`` see them).
Figures are printed, never asserted; ``--json`` prints one JSON document to
stdout, everything else goes to stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import cProfile
import io
import json
import os
import pstats
import resource
import shutil
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from vae.bots.brains.scripted import play_script  # noqa: E402
from vae.bots.runner import BotConfig, run_bots  # noqa: E402
from vae.bots.sound.speech import default_synthesiser  # noqa: E402
from vae.bridge.v1 import bridge_pb2, bridge_pb2_grpc  # noqa: E402
from vae.bridge_service.config import BridgeSettings  # noqa: E402
from vae.bridge_service.server import BridgeServer  # noqa: E402
from vae.cli.demo.demo_wire import run_options  # noqa: E402
from vae.cli.runs.run_request import set_tier  # noqa: E402
from vae.recordings.models import Side  # noqa: E402
from vae.recordings.read.reader import RecordingReader  # noqa: E402

SUITE = ROOT / "examples" / "suite"
TIERS = ("audio/real", "audio/virtual", "text/virtual", "text/real")
QUICK = ("restaurant_hang_up", "restaurant_cancel_booking", "retail_order_status_noisy")
GOALS = {"audio/virtual": 20.0, "text/virtual": 100.0}


def say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def own_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


@contextlib.asynccontextmanager
async def bots(
    address: str, layout: str, concurrency: int
) -> AsyncIterator[list[asyncio.subprocess.Process]]:
    """The scripted user and agent, with ``concurrency`` streams each."""
    if layout == "one-process":
        synth = await asyncio.to_thread(default_synthesiser)
        stop = asyncio.Event()
        async with asyncio.TaskGroup() as tg:
            for role in ("user", "agent"):
                config = BotConfig(
                    address, role, lambda: play_script, concurrency=concurrency,
                    name=f"vae-scripted-{role}", version="1", synth=synth,
                )  # fmt: skip
                tg.create_task(run_bots(config, stop))
            try:
                yield []
            finally:
                stop.set()
        return
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    procs = []
    for role in ("user", "agent"):
        args = ["bot", role, "--bridge", address, "--concurrency", str(concurrency)]
        procs.append(
            await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "vae.cli.main",
                *args,
                "--log-level",
                "warning",
                cwd=ROOT,
                env=env,
                stdout=asyncio.subprocess.DEVNULL,
            )
        )
    try:
        yield procs
    finally:
        for proc in procs:
            if proc.returncode is None:
                proc.terminate()
        for proc in procs:
            await proc.wait()


async def wait_for_bots(server: BridgeServer, concurrency: int, timeout_s: float = 120) -> None:
    """Until every bot stream waits in the pool: start-up is not part of a tier's time."""
    deadline = time.monotonic() + timeout_s
    while any(server.pool.waiting(side) < concurrency for side in (Side.USER, Side.AGENT)):
        if time.monotonic() > deadline:
            raise RuntimeError("the bots did not join the bridge in time")
        await asyncio.sleep(0.05)  # polling the pool: nothing to wait on from outside


async def run_tier(tier: str, suite: Path, args: argparse.Namespace) -> dict[str, Any]:
    modality, clock = tier.split("/")
    with tempfile.TemporaryDirectory(prefix="vae-tiers-") as tmp:
        db = Path(tmp) / "tiers.db"
        settings = BridgeSettings(address="127.0.0.1:0", wait_timeout_s=600)
        async with (
            BridgeServer(db, settings) as server,
            bots(server.address, args.layout, args.concurrency) as procs,
        ):
            await wait_for_bots(server, args.concurrency)
            cpu0 = own_cpu_s()
            bots_cpu0 = sum(cpu_s(p.pid) for p in procs)
            profile = cProfile.Profile() if args.profile == tier else None
            if profile is not None:
                profile.enable()
            started = time.perf_counter()
            run_id, status = await run_suite(server.address, suite, modality, clock, args)
            wall = time.perf_counter() - started
            if profile is not None:
                profile.disable()
            cpu = own_cpu_s() - cpu0
            bots_cpu = sum(cpu_s(p.pid) for p in procs) - bots_cpu0
        with RecordingReader(db) as reader:
            latest = reader.latest_attempts(run_id).values()
            calls = sum(s.duration_s for s in latest)
            stops = sorted(str(s.stop_reason) for s in latest)
    out = {
        "tier": tier, "status": status, "sessions": len(stops), "wall_s": round(wall, 3),
        "calls_s": round(calls, 2), "bridge_cpu_s": round(cpu, 2),
        "bots_cpu_s": round(bots_cpu, 2) if procs else None, "stop_reasons": stops,
    }  # fmt: skip
    if profile is not None:
        text = io.StringIO()
        pstats.Stats(profile, stream=text).sort_stats("cumulative").print_stats(40)
        out["profile"] = text.getvalue()
    return out


async def run_suite(
    address: str, suite: Path, modality: str, clock: str, args: argparse.Namespace
) -> tuple[str, str]:
    import grpc

    options = run_options(args.concurrency, 4.0)
    set_tier(options, modality, clock)
    if args.frame_ms:
        options.frame_ms = args.frame_ms
    request = bridge_pb2.StartRunRequest(
        sources=[bridge_pb2.ScenarioSource(path=str(suite))], options=options
    )
    async with grpc.aio.insecure_channel(address) as channel:
        stub = bridge_pb2_grpc.BridgeServiceStub(channel)
        run = (await stub.StartRun(request)).run
        async for event in stub.WatchRun(bridge_pb2.WatchRunRequest(run_id=run.run_id)):
            if event.kind == bridge_pb2.RUN_EVENT_KIND_RUN_FINISHED:
                return run.run_id, bridge_pb2.RunStatus.Name(event.status)
    raise RuntimeError("WatchRun ended before the run finished")


def quick_suite(folder: Path) -> Path:
    for name in QUICK:
        shutil.copy(SUITE / f"{name}.yaml", folder / f"{name}.yaml")
    return folder


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="vae-tiers-suite-") as tmp:
        suite = quick_suite(Path(tmp)) if args.quick else SUITE
        results = []
        for tier in args.tiers:
            say(f"running {tier} ...")
            results.append(await run_tier(tier, suite, args))
    base = next((r for r in results if r["tier"] == "audio/real"), None)
    for r in results:
        audio_calls = base["calls_s"] if base else r["calls_s"]
        r["x_real_time"] = round(audio_calls / r["wall_s"], 1)
        r["vs_audio_real"] = round(base["wall_s"] / r["wall_s"], 1) if base else None
        goal = GOALS.get(r["tier"])
        r["goal"] = goal
        r["meets_goal"] = None if goal is None else r["x_real_time"] >= goal
    return {
        "suite": "quick (3 scenarios)" if args.quick else str(SUITE.relative_to(ROOT)),
        "layout": args.layout,
        "concurrency": args.concurrency,
        "cores": os.cpu_count(),
        "tiers": results,
    }


def report(doc: dict[str, Any]) -> None:
    say(
        f"tiers benchmark: {doc['suite']}, concurrency {doc['concurrency']}, "
        f"layout {doc['layout']}, {doc['cores']} cores"
    )
    say(
        f"{'tier':>14} {'status':>10} {'wall s':>8} {'calls s':>8} {'x real':>7} "
        f"{'vs a/r':>7} {'bridge':>7} {'bots':>6}  goal"
    )
    for r in doc["tiers"]:
        met = "met" if r["meets_goal"] else "NOT met"
        goal = "" if r["goal"] is None else f"{met} (>= {r['goal']:g}x)"
        bots_cpu = "-" if r["bots_cpu_s"] is None else f"{r['bots_cpu_s']:.1f}"
        status = r["status"].removeprefix("RUN_STATUS_").lower()
        say(
            f"{r['tier']:>14} {status:>10} {r['wall_s']:>8.2f} {r['calls_s']:>8.1f} "
            f"{r['x_real_time']:>6.1f}x {r['vs_audio_real']!s:>6}x {r['bridge_cpu_s']:>7.1f} "
            f"{bots_cpu:>6}  {goal}"
        )
        if r.get("profile"):
            say(f"\nprofile of {r['tier']} (cumulative):\n{r['profile']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="three scenarios of the suite")
    parser.add_argument("--tiers", nargs="+", choices=TIERS, default=list(TIERS))
    parser.add_argument("--concurrency", type=int, default=6)
    parser.add_argument("--frame-ms", type=int, default=0, help="RunOptions.frame_ms [16]")
    parser.add_argument("--layout", choices=("processes", "one-process"), default="processes")
    parser.add_argument("--profile", choices=TIERS, help="cProfile this tier (this process)")
    parser.add_argument("--json", action="store_true", help="print one JSON document to stdout")
    args = parser.parse_args()
    doc = asyncio.run(main_async(args))
    report(doc)
    if args.json:
        print(json.dumps(doc, indent=1))


if __name__ == "__main__":
    main()
