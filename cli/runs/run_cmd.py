"""``vae run``: its options, their checks, and how a failed call is reported.

``vae run`` is a thin client of a running bridge: StartRun, then a progress
bar fed by WatchRun, then a summary table from GetRun. Ctrl-C cancels the run.
This module holds what the user types and sees as errors; the request is
built by ``cli/runs/run_request.py``, the call driven by ``cli/runs/run_client.py``, and
``vae runs list|show`` (no bridge, straight from ``--db``) live in
``cli/runs/runs_cmd.py``. Nothing heavy is imported at module level: ``--help``
stays instant.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from vae.cli.common import json_option, log_level_option, setup_logging, token_option
from vae.cli.runs.replay_opts import replay_options
from vae.cli.runs.run_gate import run_gate_options


@click.command("run")
@click.argument("scenarios", nargs=-1)
@click.option(
    "--bridge",
    "address",
    default="127.0.0.1:50051",
    show_default=True,
    envvar="VAE_BRIDGE",
    help="The bridge's address (env VAE_BRIDGE).",
)
@token_option
@click.option(
    "--tls-ca",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    envvar="VAE_TLS_CA",
    help="CA certificate for a TLS bridge (env VAE_TLS_CA).",
)
@click.option("--run-id", default="", help="Name the run (default: a readable timestamp).")
@click.option("--resume", default="", help="Resume RUN (exact id or unique prefix).")
@click.option(
    "--check",
    is_flag=True,
    help="With --resume: only print each scenario's "
    "classification (completed / in_flight / fresh) and why.",
)
@click.option("--concurrency", type=click.IntRange(min=1), help="Sessions at once [4].")
@click.option(
    "--max-duration",
    type=click.FloatRange(min=0.1),
    help="Override every scenario's max duration, seconds.",
)
@click.option(
    "--inactivity-timeout",
    type=click.FloatRange(min=0.1),
    help="Seconds of silence on both sides that end a session [120].",
)
@click.option(
    "--end-policy",
    type=click.Choice(["tool-only", "valid-terminal-state"]),
    help="What counts as a clean exit [tool-only].",
)
@click.option(
    "--min-agent-turns",
    type=click.IntRange(min=0),
    help="Agent responses below which a session is stalled [0].",
)
@click.option(
    "--retry-stale/--no-retry-stale",
    default=None,
    help="Retry attempts with 0 conversation turns [on].",
)
@click.option(
    "--retry-insufficient/--no-retry-insufficient",
    default=None,
    help="Retry attempts with fewer than --min-agent-turns [off].",
)
@click.option("--max-retries", type=click.IntRange(min=0), help="Automatic retries [1].")
@click.option("--retry-backoff", type=click.FloatRange(min=0), help="Seconds before a retry [5].")
@click.option(
    "--pairing-timeout",
    type=click.FloatRange(min=0.1),
    help="Seconds a session waits for both bots [60].",
)
@click.option(
    "--seed",
    type=click.IntRange(0, 2**64 - 1),
    help="Seed for noise and other randomness, 0..2^64-1 [0].",
)
@click.option(
    "--repeat",
    type=click.IntRange(1, 1000),
    help="Run each scenario K times (trials NAME#1..#K, own seeds) for pass^k [1].",
)
@click.option("--tag", "tags", multiple=True, help="Tag the run (repeatable).")
@click.option(
    "--share-transcripts",
    is_flag=True,
    default=None,
    help="Forward each bot's transcripts to its peer.",
)
@click.option(
    "--first-speaker",
    type=click.Choice(["agent", "user"]),
    help="Who opens every call, overriding the scenarios' first_speaker [agent].",
)
@click.option(
    "--first-speaker-timeout",
    type=click.FloatRange(min=0.1),
    help="Seconds of silence from the expected first speaker "
    "that end a session (first_speaker_silent) [10].",
)
@click.option(
    "--modality",
    type=click.Choice(["audio", "text"]),
    envvar="VAE_MODALITY",
    help="How the bots talk: audio, or whole text turns (the fast tier: bots must "
    "declare text support) [audio]. Env VAE_MODALITY.",
)
@click.option(
    "--clock",
    type=click.Choice(["real", "virtual", "auto"]),
    envvar="VAE_CLOCK",
    help="The session clock: real time; the virtual lock-step clock that runs as "
    "fast as both bots keep up (bots must declare it); or auto: virtual for each "
    "session whose two bots declare it, else real (recorded per session) "
    "[text: auto; audio: real]. Env VAE_CLOCK.",
)
@click.option(
    "--line",
    envvar="VAE_LINE",
    callback=lambda ctx, param, value: _line(value),
    help="Phone-line conditions for every scenario, over each one's user.line, as "
    "FIELD=VALUE,... (codec=mulaw8k, packet_loss=0.1, packet_loss_burst=3, jitter_ms=20, "
    "gain_db=-6, clipping=-3, white_noise_db=-40); seeded by --seed. Env VAE_LINE.",
)
@click.option(
    "--user-connector",
    multiple=True,
    help="Dial the user bot at this URL instead of waiting for a gRPC bot "
    "(e.g. ws://127.0.0.1:8766). Repeat for a pool of bot instances.",
)
@click.option(
    "--agent-connector",
    multiple=True,
    help="Dial the agent bot at this URL (ws://127.0.0.1:8765: pipecat; "
    "twilio+ws://127.0.0.1:8765/ws: Twilio Media Streams). Repeat for a pool.",
)
@click.option(
    "--connector-kind",
    default=None,
    help="Connector kind for --user-connector/--agent-connector "
    "[from the URL: twilio+ws:// is twilio, else pipecat].",
)
@click.option(
    "--connector-capacity",
    type=click.IntRange(min=1),
    help="Sessions one connector endpoint holds at once [1]; more wait for a free one.",
)
@click.option(
    "--connect-timeout",
    type=click.FloatRange(min=0.1),
    help="Seconds a refused connector connection is retried before the attempt "
    "fails (connector_failed) [30].",
)
@click.option("--connector-options", default="{}", help="Connector options as a JSON object.")
@replay_options
@run_gate_options
@json_option
@log_level_option
def run_command(
    scenarios: tuple[str, ...],
    address: str,
    token: str | None,
    tls_ca: Path | None,
    run_id: str,
    resume: str,
    check: bool,
    as_json: bool,
    tags: tuple[str, ...],
    log_level: str,
    **opts: Any,
) -> None:
    """Run SCENARIOS (files, folders, or Python modules) through a bridge.

    Shows progress, then a summary table; exits 1 if the run failed or was
    cancelled. `--resume RUN` re-runs what a run left unfinished (no SCENARIOS
    needed); add `--check` to only see what it would do. Scenario files are
    validated first (as `vae validate` does): a broken one exits 2 with every
    problem listed, before the bridge is asked for anything. `--modality text`
    and `--clock virtual` run the same scenarios as the fast tiers (text turns;
    audio on a virtual clock): the bridge refuses them (exit 2) when a
    connector or the waiting bots cannot follow them. Text runs on `--clock
    auto` unless told: the virtual clock for each session whose two bots
    declare it, else real time. `--replay RUN` plays
    the recorded callers of RUN, turn by turn, to the agent (only an agent bot
    or `--agent-connector` is needed), then compare: `vae compare RUN NEW`.
    With gate options (--min-success, --baseline, --junit-xml, ...) the run is
    then scored on --db (the bridge's database) and gated as `vae gate` does;
    the exit code is the gate's: 0 passed, 1 failed, 3 could not decide, 2
    usage (docs/ci.md).

    \b
    Examples:
      vae run examples/suite --bridge 127.0.0.1:50051
      vae run examples/suite --modality text
      vae run examples/suite --modality text --clock real
      vae run examples/suite --clock virtual --seed 7
      vae run examples/suite --line codec=mulaw8k,packet_loss=0.05 --seed 3
      vae run my-scenarios/ --concurrency 2 --tag nightly --json
      vae run --resume 2026-12-02 --check
      vae run --replay 2026-12-02 --replay-scenario airline_wrong_date
      vae run examples/suite --db vae.db --min-success 0.5 --junit-xml vae-junit.xml
    """
    import asyncio

    import grpc

    from vae.cli.runs import run_client, run_summary
    from vae.cli.runs.replay_opts import replay_fields
    from vae.cli.runs.run_gate import RunGate
    from vae.cli.runs.run_request import start_run_request
    from vae.cli.scenarios.validate_cmd import refuse_invalid

    setup_logging(log_level)
    gate = RunGate.take(opts)
    if gate is not None and check:
        raise click.UsageError("--check runs nothing: it cannot be combined with gate options")
    if check and not resume:
        raise click.UsageError("--check needs --resume RUN")
    if resume and opts["repeat"] is not None:
        raise click.UsageError("--repeat cannot change a resumed run (its trials are recorded)")
    replay = replay_fields(opts, bool(scenarios), bool(resume))
    if not scenarios and not resume and not replay:
        raise click.UsageError(
            "give SCENARIOS (files, folders or modules), --resume RUN or --replay RUN"
        )
    try:
        json.loads(opts["connector_options"])
    except json.JSONDecodeError as exc:
        raise click.BadParameter(str(exc), param_hint="--connector-options") from exc
    refuse_invalid(scenarios)
    if gate is not None:
        gate.precheck(scenarios)
    request = start_run_request(
        scenarios, tags, opts, run_id=run_id, resume=resume, check=check, replay=replay
    )
    started: list[str] = []
    try:
        document = gate.document if gate is not None and as_json else None
        code = asyncio.run(
            run_client.run(address, token, tls_ca, request, as_json, started, document)
        )
    except grpc.aio.AioRpcError as exc:
        if exc.code() in run_client.USAGE_CODES:
            raise click.UsageError(exc.details() or str(exc.code())) from exc
        if gate is not None:
            gate.unreachable(f"the bridge at {address}: {exc.code().name}: {exc.details()}",
                             as_json)  # fmt: skip
        if exc.code() == grpc.StatusCode.UNAVAILABLE:
            hint = (
                "check that --tls-ca (VAE_TLS_CA) is the CA of the bridge's certificate"
                if tls_ca
                else "is it running? if it serves TLS, pass --tls-ca"
            )
            click.echo(
                f"error: cannot reach the bridge at {address}: {exc.details()}; {hint}", err=True
            )
        elif exc.code() == grpc.StatusCode.UNAUTHENTICATED:
            click.echo(
                f"error: UNAUTHENTICATED: {exc.details()}; pass the bridge's token with "
                "--token or VAE_TOKEN",
                err=True,
            )
        else:
            click.echo(f"error: {exc.code().name}: {exc.details()}", err=True)
        sys.exit(1)
    except KeyboardInterrupt:
        click.echo(run_summary.interrupted_line(started[0] if started else ""), err=True)
        sys.exit(1)
    if gate is not None and started:
        gate.finish(started[0], token, tls_ca, as_json)
    sys.exit(code)


def _line(value: str | None) -> dict[str, Any] | None:
    """``--line FIELD=VALUE,...`` checked here (exit 2 naming the field), or None."""
    if not value:
        return None
    from vae.recordings.scenarios.line import LineConditions, merge, parse_option

    try:
        fields = parse_option(value)
        merge(LineConditions(), fields)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--line") from None
    return fields
