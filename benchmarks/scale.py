"""Scale-out budgets: each part measured against a baseline in the same run, printed as ratios.

Parts (``--part NAME``, repeatable; default: every part):

- ``rescore`` — rescoring throughput, in this process against Ray with 2
  workers, with a loopback judge that takes 200 ms per call. Writes N
  recorded sessions (both channels, a tool call, one NL assertion each, so
  every session asks the judge one distinct question), then scores fresh
  copies of that store (cold judge cache each time):

  1. in this process with the default judge concurrency (4) — the baseline;
  2. on a local Ray instance of 2 CPUs: 2 tasks at a time, each scoring its
     batch with the same concurrency (so 8 judge calls in flight);
  3. in this process with judge concurrency 8 (as many calls in flight as
     Ray), which tells the judge's share of the gain from the CPUs';
  4. without a judge, in this process and on Ray: the CPU-bound case (the
     timing metrics read both channels' audio).

  Ray's start and its workers' first tasks are timed apart (one-off costs).

- ``bridge`` — real-time sessions held (no frame lost, p99 added latency
  within one frame) at ``vae bridge serve --workers 1`` (the baseline) and
  ``--workers 2``: ``benchmarks/bridge.py``'s sweep (synthetic bots that
  follow redirects, 16 ms frames) at each size of ``--bridge-sizes``,
  sessions of ``--bridge-seconds``; prints each N's row and the ratio of the
  largest N held.
- ``store`` — the single writer's row and audio throughput on SQLite (the
  baseline) and on PostgreSQL (a throw-away server with durable defaults
  started on loopback, as ``benchmarks/store.py`` does; ``--postgres URL``
  for your own, ``none`` to skip): ``benchmarks/store.py``'s batched load.

Every part runs by default, one after the other, in one run.

Usage: ``python benchmarks/scale.py [--part rescore|bridge|store] [--sessions 120]
[--seconds 20] [--judge-ms 200] [--bridge-sizes 25 35 45 55] [--bridge-seconds 10]
[--rows 20000] [--postgres auto] [--quick]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.factories import SessionSpec, ToolCallSpec, conversation, scenario, write_run
from vae.scorer_service.config import JudgeSettings, ScoringConfig
from vae.scorer_service.scoring.rescore import rescore
from vae.scorer_service.scoring.runner import SessionRunner


class SlowJudge:
    """A loopback chat-completions server that answers a valid verdict after ``delay_s``."""

    def __init__(self, delay_s: float) -> None:
        self.calls = 0
        judge = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("content-length", 0)))
                time.sleep(delay_s)  # the judge's own latency: what is being measured
                judge.calls += 1
                verdicts = [{"index": 0, "passed": True, "reason": "ok"}]
                content = json.dumps(
                    {"score": 1.0, "reason": "ok", "nl_assertion_verdicts": verdicts}
                )
                choice = {
                    "index": 0,
                    "finish_reason": "stop",
                    "message": {"role": "assistant", "content": content},
                }
                reply = {"id": "x", "object": "chat.completion", "created": 0, "model": "bench"}
                body = json.dumps({**reply, "choices": [choice]}).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


async def write_sessions(path: Path, n: int, seconds: float) -> str:
    exchanges = max(1, int(seconds // 4.2))  # conversation(): 2 turns of 1.5 s + 0.6 s gaps
    scenarios = [
        scenario(f"s{i:04d}", reference_answer={"name": "Ann", "n": i}, nl_assertions=["Booked"])
        for i in range(n)
    ]
    specs = [
        SessionSpec(
            f"s{i:04d}",
            turns=conversation(exchanges),
            tool_calls=[ToolCallSpec("book", {"name": "Ann", "n": i}, at_s=2.0)],
            agent_state={"bookings": [{"name": "Ann", "n": i}]},
        )
        for i in range(n)
    ]
    return (await write_run(path, scenarios, specs)).run_id


async def timed(
    template: Path, folder: Path, label: str, run_id: str, config: ScoringConfig,
    runner: SessionRunner | None = None,
) -> float:  # fmt: skip
    """Seconds to rescore a fresh copy of ``template`` (cold judge cache)."""
    db = folder / f"{label.replace(' ', '_')}.db"
    shutil.copy(template, db)
    started = time.perf_counter()
    result = await rescore(db, run_id, config, runner=runner)
    took = time.perf_counter() - started
    assert result.scoring.status == "complete", result.scoring.summary
    return took


def row(label: str, n: int, took: float, base: float | None) -> None:
    ratio = "baseline" if base is None else f"{base / took:5.2f}x the baseline's throughput"
    print(f"  {label:<44} {took:7.2f} s  {n / took:7.1f} sessions/s  {ratio}")


async def rescore_part(args: argparse.Namespace) -> None:
    from vae.scorer_service.ray_scoring.connect import connect
    from vae.scorer_service.ray_scoring.runner import RayRunner

    n = args.sessions
    print(f"== rescore: {n} sessions of {args.seconds:.0f} s, judge {args.judge_ms} ms per call")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        template = folder / "template.db"
        run_id = await write_sessions(template, n, args.seconds)
        judge = SlowJudge(args.judge_ms / 1000)
        try:

            def judged(concurrency: int) -> ScoringConfig:
                settings = JudgeSettings(base_url=judge.url, model="bench", concurrency=concurrency)
                return ScoringConfig(judge=settings)

            base = await timed(template, folder, "local 4", run_id, judged(4))
            row("in this process, judge concurrency 4", n, base, None)

            started = time.perf_counter()
            connection = connect("local", num_cpus=2)
            took = time.perf_counter() - started
            print(f"  (Ray: a local instance of 2 CPUs started in {took:.1f} s", end="")
            plain = ScoringConfig(no_judge=True)
            try:
                with RayRunner("local") as ray:
                    warm = await write_sessions(folder / "warm.db", 4, 4.0)
                    started = time.perf_counter()
                    await rescore(folder / "warm.db", warm, plain, runner=ray)
                    print(f"; its workers' first tasks took {time.perf_counter() - started:.1f} s)")
                    on_ray = await timed(template, folder, "ray 2x4", run_id, judged(4), ray)
                    row("on Ray, 2 workers x judge concurrency 4", n, on_ray, base)
                    wide = await timed(template, folder, "local 8", run_id, judged(8))
                    row("in this process, judge concurrency 8", n, wide, base)
                    cpu_local = await timed(template, folder, "local nojudge", run_id, plain)
                    row("without a judge, in this process", n, cpu_local, None)
                    cpu_ray = await timed(template, folder, "ray nojudge", run_id, plain, ray)
                    row("without a judge, on Ray (2 workers)", n, cpu_ray, cpu_local)
            finally:
                connection.close()
            print(f"  judge calls: {judge.calls} (one per session and judged rescore)")
        finally:
            judge.close()


async def bridge_part(args: argparse.Namespace) -> None:
    from benchmarks import bridge

    print(
        f"== bridge: real-time sessions held at --workers 1 and 2 (N = "
        f"{' '.join(map(str, args.bridge_sizes))}, {args.bridge_seconds:g} s sessions, "
        f"16 ms frames, {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f})"
    )
    options = argparse.Namespace(
        quick=False, sizes=args.bridge_sizes, seconds=args.bridge_seconds, frame_ms=16,
        frames_per_message=1, workers=0, heavy=False, generator_nice=0, bridge_src=bridge.ROOT,
        baseline_src=None, bridge_loop="", echo=False, json=False,
    )  # fmt: skip
    held: dict[int, int] = {}
    bridge.say(  # the columns of benchmarks/bridge.py's rows (its docstring says what each is)
        f"{'W':>2} {'N':>5} {'lost':>5} {'late':>5} {'p50':>7} {'p99':>7} {'p99/fr':>6} "
        f"{'ms/ss':>7} {'core':>5} {'gen':>5} {'tk50':>5} {'tk99':>6} {'tkmax':>7} "
        f"{'rxgap':>7} {'brgap':>7} {'drop':>5} {'us/msg':>6} {'echo':>6}"
    )
    for workers in (1, 2):
        options.bridge_workers_now = workers
        _rows, saturation, _ = await bridge.sweep(options, args.bridge_sizes, False)
        held[workers] = saturation
    one, two = held[1], held[2]
    ratio = f"{two / one:.2f}x" if one else "n/a (the baseline held none)"
    print(f"  sessions held: --workers 1: {one or 'none'} (baseline); --workers 2: "
          f"{two or 'none'}: {ratio} the baseline")  # fmt: skip


async def store_part(args: argparse.Namespace) -> None:
    from benchmarks import store
    from vae.recordings.backends.connection import open_store

    rows = args.rows
    segments = store._segments(max(rows // 50, 1))
    print(f"== store: the single writer, {rows} event rows and {len(segments)} s of audio")
    measured: dict[str, tuple[store.Cost, store.Cost]] = {}
    with tempfile.TemporaryDirectory() as tmp, store._stores(Path(tmp), args.postgres) as backs:
        for name, fresh in backs:
            open_store(fresh()).close()  # connect and migrate once outside the timings
            measured[name] = await store.batched(fresh(), rows, segments)
            print("  " + store._line(name, rows, len(segments), *measured[name]))
    if "postgresql" in measured:
        (lite_rows, lite_audio), (pg_rows, pg_audio) = measured["sqlite"], measured["postgresql"]
        print(
            f"  postgresql against sqlite (baseline): rows {lite_rows[0] / pg_rows[0]:.2f}x the"
            f" throughput, audio {lite_audio[0] / pg_audio[0]:.2f}x the throughput"
        )


#: Every part of the benchmark, by name (each prints its own baseline and ratios).
PARTS: dict[str, Callable[[argparse.Namespace], Awaitable[None]]] = {
    "bridge": bridge_part,
    "rescore": rescore_part,
    "store": store_part,
}


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--part", action="append", choices=sorted(PARTS), help="default: all")
    parser.add_argument("--sessions", type=int, default=120, help="rescore: recorded sessions")
    parser.add_argument("--seconds", type=float, default=20.0, help="rescore: seconds each")
    parser.add_argument("--judge-ms", type=int, default=200, help="rescore: judge latency")
    parser.add_argument(
        "--bridge-sizes", type=int, nargs="+", default=[25, 35, 45, 55],
        help="bridge: session counts tried at each --workers value",
    )  # fmt: skip
    parser.add_argument("--bridge-seconds", type=float, default=10.0, help="bridge: session s")
    parser.add_argument("--rows", type=int, default=20_000, help="store: event rows")
    parser.add_argument("--postgres", default="auto", help="store: auto, none, or a URL")
    parser.add_argument(
        "--quick", action="store_true",
        help="rescore 24 sessions of 10 s; bridge N = 5 and 10 for 3 s; store 2,000 rows",
    )  # fmt: skip
    args = parser.parse_args()
    if args.quick:
        args.sessions, args.seconds = 24, 10.0
        args.bridge_sizes, args.bridge_seconds, args.rows = [5, 10], 3.0, 2_000
    for name in args.part or ["bridge", "rescore", "store"]:
        await PARTS[name](args)


if __name__ == "__main__":
    asyncio.run(main())
