"""What ``vae load`` will run: its steps or its soak, checked before anything starts.

Every check here is a usage error (exit 2) that names the option and says
what would be right: no bridge is started, nothing is recorded. The rules:

- ``--steps`` are whole numbers >= 1, strictly increasing (the first is the
  baseline every later step is compared with);
- a step runs ``--calls N`` calls in all (N at least the largest step's
  concurrency: every slot gets a call) or calls for ``--step-duration``;
- ``--soak DURATION`` needs ``--concurrency N`` (and the other way round)
  and replaces the steps; its windows (``--window``) are at most the soak
  (by default a tenth of it, and at least two calls long);
- durations are ``90``, ``90s``, ``1.5m``, ``2h`` or ``250ms``.
"""

from __future__ import annotations

import itertools
import math
import re
from dataclasses import dataclass

import click

_DURATION = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*(ms|s|m|min|h)?\s*$", re.IGNORECASE)
_UNIT = {"ms": 0.001, "s": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0}

#: The most calls one duration-based run plans (the bridge's repeat limit is
#: 1000 trials per scenario; see :func:`planned_calls`).
MAX_TRIALS = 1000
#: A call shorter than this (session time) is not expected: it sizes a timed run's plan.
SHORTEST_CALL_S = 2.0


def parse_duration(text: str, option: str) -> float:
    """Seconds in ``text`` (see the module); a usage error naming ``option`` otherwise."""
    match = _DURATION.match(text or "")
    if match is None:
        raise click.BadParameter(
            f"{text!r} is not a duration (e.g. 90s, 1.5m, 2h, 250ms)", param_hint=option
        )
    seconds = float(match.group(1)) * _UNIT[(match.group(2) or "s").lower()]
    if seconds <= 0:
        raise click.BadParameter("must be longer than 0", param_hint=option)
    return seconds


def parse_steps(text: str) -> list[int]:
    """``--steps 1,2,5``: the levels, or a usage error saying what is wrong with them."""
    parts = [p.strip() for p in (text or "").split(",")]
    if not text or not text.strip() or all(not p for p in parts):
        raise click.BadParameter("give at least one level, e.g. 1,2,5,10", param_hint="--steps")
    levels = []
    for part in parts:
        if not part.isdigit():
            raise click.BadParameter(
                f"{part!r} is not a whole number of calls at once (e.g. 1,2,5,10)",
                param_hint="--steps",
            )
        levels.append(int(part))
    if levels[0] < 1 or any(n < 1 for n in levels):
        raise click.BadParameter(
            "a step runs at least 1 call at once; 0 is not a level", param_hint="--steps"
        )
    for before, after in itertools.pairwise(levels):
        if after <= before:
            raise click.BadParameter(
                f"levels must increase: {after} comes after {before} (each step is compared "
                "with the first)",
                param_hint="--steps",
            )
    return levels


def parse_ms(value: str | None) -> float | None:
    """``--max-p95``: ``1500`` (ms), ``1500ms`` or ``1.5s`` -> milliseconds."""
    if value is None:
        return None
    text = value.strip()
    seconds = parse_duration(text + ("ms" if text.replace(".", "", 1).isdigit() else ""),
                             "--max-p95")  # fmt: skip
    return seconds * 1000.0


def parse_fraction(value: str | None) -> float | None:
    """``--max-drop``: ``0.1`` or ``10%``."""
    if value is None:
        return None
    text = value.strip()
    try:
        number = float(text[:-1]) / 100 if text.endswith("%") else float(text)
    except ValueError:
        raise click.BadParameter(f"{value!r} is not a fraction (0.1) or a percentage (10%)",
                                 param_hint="--max-drop") from None  # fmt: skip
    if not 0 <= number <= 1:
        raise click.BadParameter("must be between 0 and 1 (or 0% and 100%)",
                                 param_hint="--max-drop")  # fmt: skip
    return number


@dataclass(frozen=True)
class LoadPlan:
    #: Levels of concurrency, in order (empty for a soak).
    steps: tuple[int, ...] = ()
    #: Calls per step in all, or None: calls for ``step_s``.
    calls: int | None = None
    step_s: float | None = None
    ramp_up_s: float = 0.0
    #: A soak: its level, length and windows (None: steps).
    soak_concurrency: int | None = None
    soak_s: float | None = None
    window_s: float | None = None

    @property
    def is_soak(self) -> bool:
        return self.soak_s is not None

    @property
    def largest(self) -> int:
        """The most calls at once the plan ever needs (bots, agent streams)."""
        if self.soak_concurrency is not None:
            return self.soak_concurrency
        return max(self.steps)


def make_plan(
    *,
    steps: str | None,
    calls: int | None,
    step_duration: str | None,
    ramp_up: str | None,
    soak: str | None,
    concurrency: int | None,
    window: str | None,
) -> LoadPlan:
    """The plan from ``vae load``'s options (usage errors as the module says)."""
    ramp = parse_duration(ramp_up, "--ramp-up") if ramp_up else 0.0
    if soak is None and concurrency is not None:
        raise click.UsageError("--concurrency is the level a soak holds: give --soak DURATION too")
    if soak is not None:
        if concurrency is None:
            raise click.UsageError(
                "--soak needs --concurrency N: the number of calls it holds at once"
            )
        if steps is not None or calls is not None or step_duration is not None:
            raise click.UsageError(
                "--soak holds one level: it cannot be combined with --steps, --calls or "
                "--step-duration (run them as a separate vae load)"
            )
        soak_s = parse_duration(soak, "--soak")
        window_s = parse_duration(window, "--window") if window else None
        if window_s is not None and window_s > soak_s:
            raise click.BadParameter(
                f"a window ({window}) longer than the soak ({soak}) holds no trend",
                param_hint="--window",
            )
        return LoadPlan(
            ramp_up_s=ramp, soak_concurrency=concurrency, soak_s=soak_s, window_s=window_s
        )
    if window is not None:
        raise click.UsageError("--window cuts a soak: give --soak DURATION --concurrency N")
    levels = parse_steps(steps if steps is not None else "1,2,4,8,16")
    if calls is not None and step_duration is not None:
        raise click.UsageError("give either --calls N or --step-duration, not both")
    if calls is not None and calls < 1:
        raise click.BadParameter(f"{calls}: a step runs at least one call", param_hint="--calls")
    if calls is not None and calls < max(levels):
        raise click.BadParameter(
            f"{calls} calls cannot fill step {max(levels)}: a step runs at least one call per "
            f"slot, so --calls must be at least {max(levels)}",
            param_hint="--calls",
        )
    step_s = None
    if calls is None:
        step_s = parse_duration(step_duration or "60s", "--step-duration")
    return LoadPlan(steps=tuple(levels), calls=calls, step_s=step_s, ramp_up_s=ramp)


def planned_calls(level: int, seconds: float, scenarios: int) -> tuple[int, int]:
    """How a timed run of ``seconds`` at ``level`` is planned: (repeat, calls).

    Enough calls for every slot to start one every :data:`SHORTEST_CALL_S`
    seconds, plus one per slot; the run is drained when the time is up and the
    calls never started leave it. At most :data:`MAX_TRIALS` per scenario.
    """
    wanted = level * (math.ceil(seconds / SHORTEST_CALL_S) + 1)
    repeat = min(MAX_TRIALS, max(1, math.ceil(wanted / scenarios)))
    return repeat, repeat * scenarios
