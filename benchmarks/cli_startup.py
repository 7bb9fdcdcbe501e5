"""CLI start-up: ``vae --help`` and every subcommand's ``--help`` against ``python -c pass``.

The budget is under 0.3 s for each on the reference 2-core machine. Each
command runs in a fresh interpreter (``python -m vae.cli.main ...``, the code of
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
import resource
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


def _child_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(
    argv: list[str], env: dict[str, str], root: Path, repeat: int
) -> tuple[float, float] | None:
    """Median wall and CPU seconds of ``argv`` over ``repeat`` runs; None: no such command.

    CPU time (user + system of the child) moves little when other processes
    compete for the cores; wall time is what a user waits.
    """
    times, cpus = [], []
    for _ in range(repeat):
        start, cpu = time.perf_counter(), _child_cpu()
        done = subprocess.run(argv, env=env, cwd=root, capture_output=True, check=False)
        times.append(time.perf_counter() - start)
        cpus.append(_child_cpu() - cpu)
        if b"No such command" in done.stderr:
            return None
        if done.returncode != 0:
            sys.exit(f"{' '.join(argv)} failed: {done.stderr.decode(errors='replace')[-500:]}")
    return statistics.median(times), statistics.median(cpus)


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
    baseline, base_cpu = timed([sys.executable, "-c", "pass"], env, root, repeat) or (0.0, 0.0)
    print(
        f"python -c pass: {baseline * 1000:.0f} ms wall, {base_cpu * 1000:.0f} ms CPU "
        f"(medians of {repeat}; {root}; load average {os.getloadavg()[0]:.1f})"
    )
    print(
        f"{'command':<28} {'wall':>8} {'CPU':>8} {'wall - baseline':>16}  budget {BUDGET_S:.1f} s"
    )
    worst = 0.0
    for command in commands:
        argv = [sys.executable, "-m", "vae.cli.main", *command, "--help"]
        measured = timed(argv, env, root, repeat)
        label = "vae " + " ".join([*command, "--help"])
        if measured is None:
            print(f"{label:<28} {'(no such command)':>24}")
            continue
        seconds, cpu = measured
        worst = max(worst, seconds)
        mark = "ok" if seconds < BUDGET_S else "OVER"
        extra = (seconds - baseline) * 1000
        print(
            f"{label:<28} {seconds * 1000:>5.0f} ms {cpu * 1000:>5.0f} ms {extra:>13.0f} ms  {mark}"
        )
    print(f"slowest: {worst * 1000:.0f} ms = {worst / baseline:.1f}x python -c pass")


if __name__ == "__main__":
    main()
