"""``vae load SUITE``: its options, their checks, and its exit codes.

The sequence is :mod:`vae.cli.load.load_run`; this module is what the user
types and what every mistake says. Everything heavy is imported inside the
command, so ``vae load --help`` stays instant.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import click

from vae.cli.common import print_json, setup_logging
from vae.cli.load.load_opts import load_options
from vae.cli.load.load_plan import parse_fraction, parse_ms

#: The judge keywords ``judge_options`` adds.
_JUDGE_PREFIX = "judge_"


@click.command("load")
@load_options
def load_command(suite: tuple[str, ...], as_json: bool, log_level: str, **opts: Any) -> None:
    """Load-test an agent: steps of concurrency up to its knee, or a soak of hours.

    Runs SUITE (files or folders of scenarios) round-robin at each step of
    --steps, each step an ordinary run tagged with it, scores every call as
    vae rescore does, and prints per step the calls, success rate (gating
    verdicts), p50/p95/p99 response latency from the audio, time to first
    audio and errors by kind; then the knee: the first step whose p95
    exceeds --max-p95 or whose success fell more than --max-drop below the
    first step's. It measures the harness too (the bridge's event-loop lag,
    CPU and dropped frames per process): a harness-limited step is never the
    knee, and the output says what to add to measure higher.

    Without --bridge it starts a bridge here (--workers N), the reference
    callers, and the reference agent (--agent-capacity N gives it a
    capacity) unless --agent-connector names the agent. --soak DURATION
    --concurrency N holds one level instead and reports p95 and success per
    window and the latency drift per hour with its confidence interval.

    Exit codes: 0 done, 1 interrupted (Ctrl-C: the step under way is kept,
    marked partial), a step that recorded no call or a bridge that failed, 2
    usage; with --min-concurrency the gate's: 0 passed, 1 failed, 3 could
    not decide. Every option also reads VAE_LOAD_<OPTION>.

    \b
    Examples:
      vae load examples/load --agent-capacity 3 --steps 1,2,3,4,6 --calls 6 --report load.html
      vae load examples/load --steps 1,2,5,10,20 --step-duration 60s --workers 2
      vae load examples/load --clock virtual --soak 2h --concurrency 4 --agent-slow-down 0.01
      vae load my-suite/ --agent-connector ws://127.0.0.1:8765 --steps 1,2,4 --calls 8
      vae load my-suite/ --bridge 127.0.0.1:50051 --db vae.db --min-concurrency 10 --json
    """
    setup_logging(log_level)
    cfg = _config(suite, opts, as_json)
    code = _run(cfg, opts["report_path"], as_json)
    sys.exit(code)


def _config(suite: tuple[str, ...], opts: dict[str, Any], as_json: bool) -> Any:
    """Every check before anything starts (exit 2), then the run's configuration."""
    from vae.cli.load.load_harness import AgentSpec
    from vae.cli.load.load_plan import make_plan
    from vae.cli.load.load_run import LoadConfig
    from vae.scorer_service.load.headroom import Limits

    plan = make_plan(steps=opts["steps"], calls=opts["calls"], step_duration=opts["step_duration"],
                     ramp_up=opts["ramp_up"], soak=opts["soak"], concurrency=opts["concurrency"],
                     window=opts["window"])  # fmt: skip
    max_p95, max_drop = parse_ms(opts["max_p95"]), parse_fraction(opts["max_drop"])
    if plan.is_soak and (max_p95 is not None or max_drop is not None or opts["min_concurrency"]):
        raise click.UsageError("--max-p95, --max-drop and --min-concurrency judge steps; a soak "
                               "reports its windows and drift instead")  # fmt: skip
    reference = opts["agent_capacity"] is not None or opts["agent_base_latency"] is not None
    reference = reference or bool(opts["agent_slow_down"])
    if opts["address"]:
        if opts["workers"] != 1:
            raise click.UsageError("--workers sizes the bridge vae load starts; a --bridge has "
                                   "its own (vae bridge serve --workers N)")  # fmt: skip
        if reference:
            raise click.UsageError("--agent-capacity/--agent-base-latency/--agent-slow-down "
                                   "shape the agent vae load starts; with --bridge start it "
                                   "yourself: vae bot agent --capacity N")  # fmt: skip
    if reference and opts["agent_connector"]:
        raise click.UsageError("--agent-capacity and its kin shape the reference agent; "
                               "--agent-connector names another agent")  # fmt: skip
    try:
        json.loads(opts["connector_options"])
    except json.JSONDecodeError as exc:
        raise click.BadParameter(str(exc), param_hint="--connector-options") from exc
    docs, names = _suite(suite)
    scoring = _scoring(opts, names)
    agent = None
    label = "the agent at " + ", ".join(opts["agent_connector"]) if opts["agent_connector"] else ""
    if opts["address"]:
        label = f"the bots of the bridge at {opts['address']}"
    elif not opts["agent_connector"]:
        agent = AgentSpec(opts["agent_capacity"], opts["agent_base_latency"],
                          opts["agent_slow_down"])  # fmt: skip
        label = agent.describe()
    return LoadConfig(
        load_id=_load_id(opts["db_path"]), suite=" ".join(suite), docs=docs, plan=plan,
        db=opts["db_path"], options=_run_options(opts), scoring=scoring, clock=opts["clock"],
        bridge=opts["address"], token=opts["token"], tls_ca=opts["tls_ca"],
        workers=opts["workers"], tts=opts["tts"], agent=agent, agent_label=label,
        limits=Limits(opts["max_loop_lag"], opts["max_cpu"], opts["max_dropped"]),
        max_p95_ms=max_p95, max_drop=max_drop, min_concurrency=opts["min_concurrency"],
        progress=(lambda line: None) if as_json else (lambda line: click.echo(line, err=True)),
    )  # fmt: skip


def _suite(suite: tuple[str, ...]) -> tuple[list[dict[str, Any]], list[Any]]:
    """The suite's scenarios (validated as vae validate does; a broken one is exit 2)."""
    from vae.cli.scenarios.validate_cmd import refuse_invalid
    from vae.recordings.scenarios.lint import lint_arguments

    refuse_invalid(suite)
    scenarios = lint_arguments(list(suite)).scenarios
    if not scenarios:
        raise click.UsageError(f"no scenarios in {' '.join(suite)}")
    return [sc.to_dict() for sc in scenarios], scenarios


def _scoring(opts: dict[str, Any], scenarios: list[Any]) -> Any:
    """How every call is scored (the judge options of vae rescore); refused now if it cannot."""
    from vae.cli.scoring.rescore_opts import asr_defaults, scoring_config
    from vae.scorer_service.config import ConfigError
    from vae.scorer_service.judge.need import require_judge

    judge = {k: opts.pop(k) for k in list(opts) if k.startswith(_JUDGE_PREFIX)}
    judge.update(no_judge=opts.pop("no_judge"), no_judge_cache=opts.pop("no_judge_cache"))
    asr = {k: opts.pop(k, v) for k, v in asr_defaults().items()}
    config = scoring_config({**asr, **judge, "scorers": (), "overrides": None,
                             "strict_match": None, "min_agent_turns": None, "end_policy": None,
                             "label": "vae load"})  # fmt: skip
    try:
        config.validate()
        require_judge(config, scenarios)
    except ConfigError as exc:
        raise click.UsageError(str(exc)) from exc
    return config


def _run_options(opts: dict[str, Any]) -> Any:
    from vae.bridge.v1 import bridge_pb2
    from vae.cli.runs.run_request import connector, set_tier

    options = bridge_pb2.RunOptions(tags=list(opts["tags"]), max_auto_retries=0,
                                    auto_resume_on_stale=False)  # fmt: skip
    for name, field in (("max_duration", "max_duration_s"),
                        ("inactivity_timeout", "inactivity_timeout_s"),
                        ("pairing_timeout", "pairing_timeout_s"), ("seed", "seed")):  # fmt: skip
        if opts[name] is not None:
            setattr(options, field, opts[name])
    set_tier(options, None, opts["clock"])
    cfg = connector(opts["agent_connector"], opts["connector_kind"], opts["connector_options"],
                    opts["connector_capacity"], opts["connect_timeout"])  # fmt: skip
    if cfg is not None:
        options.agent_connector.CopyFrom(cfg)
    return options


def _load_id(db: Any) -> str:
    """``load-<time>``, suffixed when a load of that second is in the store already."""
    stamp = "load-" + time.strftime("%Y-%m-%dT%H-%M-%S")
    try:
        from vae.recordings.read.reader import RecordingReader

        with RecordingReader(db) as reader:
            taken = {r.run_id for r in reader.list_runs(stamp)}
    except Exception:  # no store yet: nothing is taken
        taken = set()
    n, load_id = 1, stamp
    while any(r == load_id or r.startswith(load_id + "-") for r in taken):
        n += 1
        load_id = f"{stamp}.{n}"
    return load_id


def _run(cfg: Any, report: Path | None, as_json: bool) -> int:
    import asyncio

    import grpc

    from vae.cli.load.load_output import print_text, write_report
    from vae.cli.load.load_run import run_load

    try:
        result = asyncio.run(run_load(cfg))
    except* grpc.aio.AioRpcError as group:
        err = group.exceptions[0]
        assert isinstance(err, grpc.aio.AioRpcError)
        if err.code() in (grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.NOT_FOUND,
                          grpc.StatusCode.ALREADY_EXISTS):  # fmt: skip
            raise click.UsageError(f"the bridge refused the step: {err.details()}") from None
        where = cfg.bridge or "the bridge vae load started"
        click.echo(f"error: {where}: {err.code().name}: {err.details()}", err=True)
        sys.exit(1)
    except* click.ClickException as group:
        raise group.exceptions[0] from None
    except* OSError as group:
        click.echo(f"error: {group.exceptions[0]}", err=True)
        sys.exit(1)
    if report is not None:
        write_report(result, report)
    if as_json:
        print_json(result.to_dict())
    else:
        print_text(result)
    if result.interrupted:
        click.echo("interrupted: the step under way is marked partial; what it recorded is kept",
                   err=True)  # fmt: skip
        return 1
    if result.gate is not None:
        return result.gate.code
    empty = [s for s in result.steps if s.figures.calls == 0]
    if result.soak is not None and result.soak.soak.overall.calls == 0:
        click.echo("error: the soak recorded no call", err=True)
        return 1
    if empty:
        click.echo(f"error: step {empty[0].index} recorded no call", err=True)
        return 1
    return 0
