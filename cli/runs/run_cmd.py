"""``vae run``: the command, the checks across its options, and how a failed call is reported.

``vae run`` is a thin client of a running bridge: StartRun, then a progress
bar fed by WatchRun, then a summary table from GetRun. Ctrl-C cancels the run.
This module holds what the user types and sees as errors; the options on how
sessions run and which connectors dial the bots are declared in
``cli/runs/run_opts.py`` (SIP, replay and gate options beside it), the request
is built by ``cli/runs/run_request.py``, the call driven by
``cli/runs/run_client.py``, and ``vae runs list|show`` (no bridge, straight
from ``--db``) live in ``cli/runs/runs_cmd.py``. Nothing heavy is imported at
module level: ``--help`` stays instant.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from vae.cli.common import json_option, log_level_option, setup_logging, token_option
from vae.cli.redaction import load, redact_config_option
from vae.cli.runs.replay_opts import replay_options
from vae.cli.runs.run_gate import run_gate_options
from vae.cli.runs.run_opts import connector_options, session_options
from vae.cli.runs.sip_opts import sip_options
from vae.cli.telemetry import otel_endpoint_option, otlp_receiver_option, require_otel


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
@session_options
@connector_options
@click.option(
    "--redact",
    is_flag=True,
    envvar="VAE_REDACT",
    help="Record the run redacted: personal data never reaches the store (typed "
    "placeholders in text, audio masked when each session ends; the bridge needs "
    "pip install 'vae[redact]'; docs/privacy.md) (env VAE_REDACT).",
)
@redact_config_option
@otlp_receiver_option
@otel_endpoint_option
@sip_options
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
    then scored on --db (the bridge's database) and gated as `vae gate` does
    (without a threshold every scenario must pass unless built to fail,
    `expect-fail`); the exit code is the gate's: 0 passed, 1 failed, 3 could not decide, 2
    usage (docs/ci.md). `--otlp-receiver HOST:PORT` has the bridge receive the
    agent's OpenTelemetry traces during the run (and 10 s after) and tie them
    to sessions; `--otel-endpoint URL` exports the run's trace when it ends
    (with gate options: after scoring, with each session's verdict and the
    scoring's evaluations); docs/traces.md.

    \b
    Examples:
      vae run examples/suite --bridge 127.0.0.1:50051
      vae run examples/suite --modality text
      vae run examples/suite --modality text --clock real
      vae run examples/suite --clock virtual --seed 7
      vae run examples/suite --line codec=mulaw8k,packet_loss=0.05 --seed 3
      vae run examples/tool_backend --tool-backend --agent-connector ws://127.0.0.1:8765
      vae run scenarios/ --agent-connector livekit:agent.py --connector-options
          '{"python": ".livekit-venv/bin/python"}'
      vae run examples/suite --first-speaker user
          --agent-connector webrtc+http://127.0.0.1:7860/api/offer
      vae run my-scenarios/ --concurrency 2 --tag nightly --json
      vae run --resume 2026-12-02 --check
      vae run --replay 2026-12-02 --replay-scenario airline_wrong_date
      vae run examples/suite --db vae.db --min-success 0.5 --junit-xml vae-junit.xml
      vae run examples/suite --redact --redact-config redaction.yaml
      vae run examples/suite --agent-connector ws://127.0.0.1:8765 --first-speaker user
          --otlp-receiver 127.0.0.1:4318 --otel-endpoint http://127.0.0.1:4328
      VAE_SIP_USERNAME=me VAE_SIP_PASSWORD=... vae run examples/suite \
          --agent-connector 'sip:agent@pbx.example.com;transport=tcp'
      vae run examples/suite --agent-connector sip-inbound:
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
    if gate is not None and opts["otel_endpoint"]:  # scored here: exported here (run_gate.py)
        require_otel("--otel-endpoint")
        gate.otel_endpoint, opts["otel_endpoint"] = opts["otel_endpoint"], None
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
    redact, redact_config = opts.pop("redact"), opts.pop("redact_config")
    if redact_config is not None and not redact:
        raise click.UsageError("--redact-config needs --redact")
    opts["redaction_json"] = json.dumps(load(redact_config).to_dict()) if redact else ""
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
