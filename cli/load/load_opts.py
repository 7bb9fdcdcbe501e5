"""``vae load``'s options, declared apart from the command (they are most of its text).

Each option's help is what ``vae load --help`` shows; their checks are in
:mod:`vae.cli.load.load_plan` (steps, durations, thresholds) and the
command (which combinations make sense).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from vae.cli.common import DEFAULT_DB, STORE, json_option, token_option
from vae.cli.scoring.rescore_opts import judge_options

F = TypeVar("F", bound=Callable[..., Any])


def load_options(func: F) -> F:
    """Every option of ``vae load``, in the order ``--help`` lists them."""
    for decorator in reversed(_DECORATORS):
        func = decorator(func)
    return func


_DECORATORS: list[Callable[[Any], Any]] = [
    click.argument("suite", nargs=-1, required=True),
    click.option(
        "--steps",
        default=None,
        envvar="VAE_LOAD_STEPS",
        help="Levels of concurrency, increasing, e.g. 1,2,5,10,20 [1,2,4,8,16] "
        "(env VAE_LOAD_STEPS).",
    ),
    click.option(
        "--calls",
        type=int,
        default=None,
        help="Calls per step in all (at least the largest step's concurrency).",
    ),
    click.option(
        "--step-duration",
        default=None,
        help="Instead of --calls: how long each step starts calls, e.g. 60s [60s]; "
        "wall time on the real clock, session time on the virtual one.",
    ),
    click.option(
        "--ramp-up",
        default=None,
        help="Spread a step's first calls over this long (e.g. 10s) [all at once].",
    ),
    click.option(
        "--soak", default=None, help="Hold --concurrency N for this long instead of steps, e.g. 2h."
    ),
    click.option(
        "--concurrency",
        type=click.IntRange(min=1),
        default=None,
        help="The calls at once a --soak holds.",
    ),
    click.option(
        "--window",
        default=None,
        help="A soak's window for p95 and success over time [a tenth of the soak].",
    ),
    click.option(
        "--max-p95",
        default=None,
        help="p95 latency above which a step is the knee, ms or e.g. 1.5s "
        "[twice the first step's p95].",
    ),
    click.option(
        "--max-drop",
        default=None,
        help="Fall of the success rate below the first step's that makes the knee, "
        "0.1 or 10% [0.1].",
    ),
    click.option(
        "--min-concurrency",
        type=click.IntRange(min=1),
        default=None,
        help="Gate: exit 1 when the largest step before the knee is below N, 3 when that "
        "cannot be decided.",
    ),
    click.option(
        "--max-loop-lag",
        type=click.FloatRange(min=0),
        default=10.0,
        show_default=True,
        help="Harness limit: a harness process whose clock ticked later than this on "
        "median (ms) makes its step harness-limited.",
    ),
    click.option(
        "--max-dropped",
        type=click.FloatRange(0, 1),
        default=0.05,
        show_default=True,
        help="Harness limit: the share of frames a harness process may drop (its loop blocked "
        "for more than ten frames) before its step is harness-limited.",
    ),
    click.option(
        "--max-cpu",
        type=click.FloatRange(min=0),
        default=0.9,
        show_default=True,
        help="Harness limit: cores one harness process may use before its step is harness-limited.",
    ),
    click.option(
        "--bridge",
        "address",
        default=None,
        envvar="VAE_BRIDGE",
        help="Load a running bridge (its bots are yours; give its --db) instead of "
        "starting one here (env VAE_BRIDGE).",
    ),
    token_option,
    click.option(
        "--tls-ca",
        type=click.Path(exists=True, dir_okay=False, path_type=Path),
        envvar="VAE_TLS_CA",
        help="CA certificate of a TLS --bridge (env VAE_TLS_CA).",
    ),
    click.option(
        "--db",
        "db_path",
        type=STORE,
        default=DEFAULT_DB,
        show_default=True,
        envvar="VAE_DB",
        help="The store the calls are recorded in (with --bridge: the bridge's) (env VAE_DB).",
    ),
    click.option(
        "--workers",
        type=click.IntRange(min=1),
        default=1,
        show_default=True,
        envvar="VAE_WORKERS",
        help="Bridge processes running sessions (the bridge vae load starts; env VAE_WORKERS).",
    ),
    click.option(
        "--agent-connector",
        multiple=True,
        help="Dial the agent under test at this URL (as vae run); repeat for a pool. "
        "Default: the reference agent, started here.",
    ),
    click.option("--connector-kind", default=None, help="Connector kind [from the URL]."),
    click.option("--connector-options", default="{}", help="Connector options as a JSON object."),
    click.option(
        "--connector-capacity",
        type=click.IntRange(min=1),
        default=None,
        help="Sessions one connector endpoint holds at once [1].",
    ),
    click.option(
        "--connect-timeout",
        type=click.FloatRange(min=0.1),
        default=None,
        help="Seconds a refused connector connection is retried [30].",
    ),
    click.option(
        "--agent-capacity",
        type=click.IntRange(min=1),
        default=None,
        help="The reference agent's capacity: beyond N calls at once its replies slow "
        "down (vae bot agent --capacity).",
    ),
    click.option(
        "--agent-base-latency",
        type=click.FloatRange(min=0),
        default=None,
        help="The reference agent's reply delay, seconds [the script's, 0.15].",
    ),
    click.option(
        "--agent-slow-down",
        type=click.FloatRange(min=0),
        default=0.0,
        help="The reference agent slows by this many seconds per call (a soak's drift).",
    ),
    click.option(
        "--clock",
        type=click.Choice(["real", "virtual"]),
        default="real",
        show_default=True,
        envvar="VAE_CLOCK",
        help="Real time, or the virtual clock (session time; no harness limits) (env VAE_CLOCK).",
    ),
    click.option(
        "--tts",
        type=click.Choice(["auto", "espeak", "buzz"]),
        default="auto",
        show_default=True,
        help="Voice of the callers and reference agent vae load starts.",
    ),
    click.option(
        "--max-duration",
        type=click.FloatRange(min=0.1),
        default=None,
        help="Override every scenario's max duration, seconds.",
    ),
    click.option(
        "--inactivity-timeout",
        type=click.FloatRange(min=0.1),
        default=None,
        help="Seconds of silence on both sides that end a call [120].",
    ),
    click.option(
        "--pairing-timeout",
        type=click.FloatRange(min=0.1),
        default=None,
        help="Seconds a call waits for both bots [60].",
    ),
    click.option("--seed", type=click.IntRange(0, 2**64 - 1), default=None, help="Seed [0]."),
    click.option("--tag", "tags", multiple=True, help="Tag every run (repeatable)."),
    click.option(
        "--report",
        "report_path",
        type=click.Path(dir_okay=False, path_type=Path),
        default=None,
        help="Write the load report (HTML, charts without JavaScript) here.",
    ),
    judge_options,
    json_option,
    click.option(
        "--log-level",
        type=click.Choice(["debug", "info", "warning", "error"], case_sensitive=False),
        default="warning",
        show_default=True,
        envvar="VAE_LOG_LEVEL",
        help="Logging verbosity (env VAE_LOG_LEVEL).",
    ),
]
