"""CLI start-up: ``vae --help`` and every subcommand's ``--help`` against ``python -c pass``.

The budget is under 0.3 s for each on the reference 2-core machine. Each
command runs in a fresh interpreter (``python -m cli.main ...``, the code of
``--root``), ``--repeat`` times; the median wall time is printed beside the
baseline, an interpreter that does nothing, measured in the same run. The
machine may be shared, so figures are noisy: compare medians, rerun when in
doubt.

Usage::

    python benchmarks/cli_startup.py [--repeat 7] [--root PATH] [--quick]

``--root`` measures another checkout (e.g. the commit before a change) with
the same interpreter: ``PYTHONPATH`` is set to it for every command.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BUDGET_S = 0.3
COMMANDS = [
    [],
    ["bridge", "serve"],
    ["scorer", "serve"],
    ["run"],
    ["runs", "list"],
    ["runs", "show"],
    ["validate"],
    ["schema", "scenario"],
    ["rescore"],
    ["scores", "diff"],
    ["report"],
    ["export"],
    ["bot"],
    ["judge", "serve"],
    ["demo"],
    ["import", "nemo"],
]


def timed(argv: list[str], env: dict[str, str], root: Path, repeat: int) -> float | None:
    """Median wall seconds of ``argv`` over ``repeat`` runs; None if there is no such command."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        done = subprocess.run(argv, env=env, cwd=root, capture_output=True, check=False)
        times.append(time.perf_counter() - start)
        if b"No such command" in done.stderr:
            return None
        if done.returncode != 0:
            sys.exit(f"{' '.join(argv)} failed: {done.stderr.decode(errors='replace')[-500:]}")
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--root", type=Path, default=ROOT, help="checkout whose CLI to measure")
    parser.add_argument("--quick", action="store_true", help="3 repeats, top-level help only")
    args = parser.parse_args()
    repeat = 3 if args.quick else args.repeat
    commands = COMMANDS[:1] if args.quick else COMMANDS
    root = args.root.resolve()
    env = dict(os.environ, PYTHONPATH=str(root))
    baseline = timed([sys.executable, "-c", "pass"], env, root, repeat) or 0.0
    print(f"python -c pass: {baseline * 1000:.0f} ms (median of {repeat}; {args.root})")
    print(f"{'command':<28} {'median':>8} {'minus baseline':>15}  budget {BUDGET_S:.1f} s")
    worst = 0.0
    for command in commands:
        argv = [sys.executable, "-m", "cli.main", *command, "--help"]
        seconds = timed(argv, env, root, repeat)
        label = "vae " + " ".join([*command, "--help"])
        if seconds is None:
            print(f"{label:<28} {'(no such command)':>24}")
            continue
        worst = max(worst, seconds)
        mark = "ok" if seconds < BUDGET_S else "OVER"
        print(
            f"{label:<28} {seconds * 1000:>6.0f} ms {(seconds - baseline) * 1000:>12.0f} ms  {mark}"
        )
    print(f"slowest: {worst * 1000:.0f} ms = {worst / baseline:.1f}x python -c pass")


if __name__ == "__main__":
    main()
