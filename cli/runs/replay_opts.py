"""``vae run --replay RUN`` options, and ``replayed_from`` for ``vae runs show``.

Kept out of ``run_cmd`` so the run command gains two lines: the options
decorator and the request fields (``run_request`` sets the gate silence). No
heavy imports at module level (the CLI starts instantly).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])


def replay_options(func: F) -> F:
    opts = [
        click.option(
            "--replay",
            "replay",
            default="",
            envvar="VAE_REPLAY",
            help="Replay the recorded callers of RUN (id or unique prefix) to the agent; "
            "the run's frozen scenarios are reused (env VAE_REPLAY).",
        ),
        click.option(
            "--replay-scenario",
            "replay_scenarios",
            multiple=True,
            help="With --replay: only this scenario (repeatable).",
        ),
        click.option(
            "--replay-session",
            "replay_sessions",
            multiple=True,
            help="With --replay: replay this recorded session (attempt id; repeatable).",
        ),
        click.option(
            "--gate-silence",
            type=click.FloatRange(0.05, 10),
            default=None,
            help="With --replay: seconds of quiet that end the agent's turn before the "
            "next recorded caller turn [0.5] (the recording's own gap when longer).",
        ),
    ]
    for option in reversed(opts):
        func = option(func)
    return func


def replay_fields(opts: dict[str, Any], scenarios: bool, resume: bool) -> dict[str, Any]:
    """The StartRunRequest fields for --replay (empty without it); usage errors for misuse."""
    replay = opts.pop("replay")
    chosen, sessions = opts.pop("replay_scenarios"), opts.pop("replay_sessions")
    if not replay:
        if chosen or sessions or opts["gate_silence"] is not None:
            raise click.UsageError(
                "--replay-scenario/--replay-session/--gate-silence need --replay"
            )
        return {}
    if scenarios or resume:
        raise click.UsageError("--replay reuses the recorded run's scenarios: give no SCENARIOS")
    if opts.get("user_connector"):
        raise click.UsageError("--replay plays the user side itself: no --user-connector")
    return {"replay": replay, "replay_scenarios": list(chosen), "replay_sessions": list(sessions)}


def replayed_from(reader: Any, run_id: str) -> dict[str, Any]:
    """``{"run": source run or None, "sessions": {session: source session}}``."""
    from vae.recordings.read.replay_links import run_source, session_sources

    return {"run": run_source(reader, run_id), "sessions": session_sources(reader, run_id)}
