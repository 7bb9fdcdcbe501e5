"""The demo benchmark: `vae demo --modality text`, wall time from the command's start.

    python benchmarks/demo.py                # 5 runs each of the default and the baseline
    python benchmarks/demo.py --quick        # one run each
    python benchmarks/demo.py --runs 9 --json
    python benchmarks/demo.py --demo-args --modality audio --clock virtual   # another form

Each run starts ``vae demo --modality text --json`` as a new process (the
example suite, the scripted reference bots, the stand-in judge, a fresh
database in a temporary folder, so no run compares with a previous one) and
measures the wall time from just before the process is started to its exit:
the interpreter's start, the imports, the bridge, scorer and bots starting,
the run, the scoring, the report and the shutdown — what a user waits for.
The recorded calls' duration is read from that database: the sum of the
run's sessions' durations on their own clock (session time on the virtual
clock, where a text turn lasts its speaking time).

Printed: per form, the median and range of the wall time, the calls'
duration, and the wall time as a fraction of it (goal: at most 1/100 on the
2-core reference machine). The baseline, measured in the same invocation, is
the same demo with ``--clock real`` (text on wall time: the default before
``--clock auto``); its "vs" column is its median wall time over the
measured form's. Figures are printed, never asserted; ``--json`` prints one
JSON document to stdout, everything else goes to stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from vae.recordings.read.reader import RecordingReader  # noqa: E402

DEFAULT = ["--modality", "text"]
BASELINE = ["--modality", "text", "--clock", "real"]
GOAL = 100.0  # the calls' duration over the wall time, at least


def say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def one_demo(args: list[str]) -> dict[str, Any]:
    """One ``vae demo`` in a fresh database: its wall time and its calls' duration."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    for name in ("VAE_MODALITY", "VAE_CLOCK", "VAE_DEMO_DB"):
        env.pop(name, None)
    with tempfile.TemporaryDirectory(prefix="vae-demo-bench-") as tmp:
        db = Path(tmp) / "demo.db"
        command = [sys.executable, "-m", "vae.cli.main", "demo", "--db", str(db), "--json"]
        started = time.perf_counter()
        done = subprocess.run(
            [*command, *args], cwd=tmp, env=env, capture_output=True, text=True, check=False
        )
        wall = time.perf_counter() - started
        if done.returncode != 0:
            raise RuntimeError(f"vae demo {' '.join(args)} exited {done.returncode}: {done.stderr}")
        doc = json.loads(done.stdout)
        with RecordingReader(db) as reader:
            latest = reader.latest_attempts(doc["run_id"]).values()
            calls = sum(s.duration_s for s in latest)
            clocks = sorted(reader.session_mode(s.session_id).clock for s in latest)
    return {"wall_s": wall, "calls_s": calls, "sessions": len(clocks), "clocks": clocks}


def measure(args: list[str], runs: int) -> dict[str, Any]:
    results = [one_demo(args) for _ in range(runs)]
    walls = [r["wall_s"] for r in results]
    calls = statistics.median(r["calls_s"] for r in results)
    wall = statistics.median(walls)
    clocks = results[-1]["clocks"]
    return {
        "args": args,
        "runs": runs,
        "wall_s": round(wall, 3),
        "wall_min_s": round(min(walls), 3),
        "wall_max_s": round(max(walls), 3),
        "calls_s": round(calls, 2),
        "sessions": results[-1]["sessions"],
        "clocks": {c: clocks.count(c) for c in sorted(set(clocks))},
        "calls_per_wall": round(calls / wall, 1),
        "meets_goal": calls / wall >= GOAL,
    }


def report(doc: dict[str, Any]) -> None:
    say(f"demo benchmark: {doc['runs']} runs per form, {doc['cores']} cores")
    say(f"{'form':>40} {'wall s (min-max)':>20} {'calls s':>8} {'wall/calls':>11} {'vs':>6}")
    base = doc["baseline"]
    for name, r in (("measured", doc["measured"]), ("baseline", base)):
        form = "vae demo " + " ".join(r["args"])
        spread = f"{r['wall_s']:.2f} ({r['wall_min_s']:.2f}-{r['wall_max_s']:.2f})"
        vs = f"{base['wall_s'] / r['wall_s']:.1f}x"
        say(
            f"{form:>40} {spread:>20} {r['calls_s']:>8.1f} {'1/' + str(r['calls_per_wall']):>11} "
            f"{vs:>6}  {name}; clocks {r['clocks']}"
        )
    met = "met" if doc["measured"]["meets_goal"] else "NOT met"
    say(f"goal: wall time at most 1/{GOAL:g} of the calls' duration: {met}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one run per form")
    parser.add_argument("--runs", type=int, default=5, help="runs per form [5]")
    parser.add_argument("--json", action="store_true", help="print one JSON document to stdout")
    parser.add_argument(
        "--demo-args",
        nargs=argparse.REMAINDER,
        default=DEFAULT,
        help="the demo's options to measure (last) [--modality text]",
    )
    args = parser.parse_args()
    runs = 1 if args.quick else args.runs
    say(f"measuring vae demo {' '.join(args.demo_args)} ...")
    measured = measure(args.demo_args, runs)
    say(f"measuring the baseline, vae demo {' '.join(BASELINE)} ...")
    baseline = measure(BASELINE, runs)
    doc = {"runs": runs, "cores": os.cpu_count(), "measured": measured, "baseline": baseline}
    report(doc)
    if args.json:
        print(json.dumps(doc, indent=1))


if __name__ == "__main__":
    main()
