"""``vae run`` (through a bridge) and ``vae runs list|show`` (straight from the database).

``vae run`` is a thin client of a running bridge: StartRun, then a progress
bar fed by WatchRun, then a summary table from GetRun. Ctrl-C cancels the run.
``vae runs`` reads the database file directly (``--db``), so it works with no
bridge running, also on a copy of the file.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import click
import grpc

from cli.common import db_option, json_option, print_json, store_errors, token_option
from cli.replay_opts import replay_fields, replay_options, replayed_from
from recordings.reader import RecordingReader
from recordings.selection import select_run
from vae.bridge.v1 import bridge_pb2, bridge_pb2_grpc
from vae.serving import client_channel

_USAGE_CODES = {
    grpc.StatusCode.INVALID_ARGUMENT,
    grpc.StatusCode.NOT_FOUND,
    grpc.StatusCode.ALREADY_EXISTS,
    grpc.StatusCode.FAILED_PRECONDITION,
}
_STATUS = {v: k.removeprefix("RUN_STATUS_").lower() for k, v in bridge_pb2.RunStatus.items()}
_STOP = {v: k.removeprefix("STOP_REASON_").lower() for k, v in bridge_pb2.StopReason.items()}
_RESUME = {v: k.removeprefix("RESUME_STATE_").lower() for k, v in bridge_pb2.ResumeState.items()}


def _source(arg: str) -> bridge_pb2.ScenarioSource:
    path = Path(arg)
    if path.suffix == ".py" or (
        not path.exists() and all(p.isidentifier() for p in arg.split("."))
    ):
        return bridge_pb2.ScenarioSource(
            python_module=str(path.resolve()) if path.exists() else arg
        )
    # Paths are read by the bridge process: send them absolute.
    return bridge_pb2.ScenarioSource(path=str(path.resolve()))


def _connector(url: str | None, kind: str, options: str) -> bridge_pb2.ConnectorConfig | None:
    if not url:
        return None
    return bridge_pb2.ConnectorConfig(kind=kind, url=url, options_json=options)


def _summary_rows(run: bridge_pb2.Run) -> list[dict[str, Any]]:
    return [
        {
            "scenario": s.session.scenario_name,
            "attempt": s.session.attempt,
            "session_id": s.session.session_id,
            "status": s.status,
            "stop_reason": _STOP.get(s.stop_reason, ""),
            "clean_exit": s.clean_exit,
            "user_turns": s.user_turns,
            "agent_turns": s.agent_turns,
            "duration_s": round(s.duration_s, 2),
            "retry_reason": s.retry_reason,
        }
        for s in run.sessions
    ]


def _table(rows: list[dict[str, Any]], columns: list[str]) -> str:
    if not rows:
        return "(no sessions)"
    widths = {c: max(len(c), *(len(str(r[c])) for r in rows)) for c in columns}
    lines = ["  ".join(c.ljust(widths[c]) for c in columns)]
    lines += ["  ".join(str(r[c]).ljust(widths[c]) for c in columns) for r in rows]
    return "\n".join(lines)


_COLUMNS = [
    "scenario",
    "attempt",
    "status",
    "stop_reason",
    "clean_exit",
    "user_turns",
    "agent_turns",
    "duration_s",
    "retry_reason",
]


def _run_json(run: bridge_pb2.Run) -> dict[str, Any]:
    return {
        "run_id": run.run_id,
        "status": _STATUS.get(run.status, ""),
        "scenarios_total": run.scenarios_total,
        "scenarios_done": run.scenarios_done,
        "vae_version": run.vae_version,
        "sessions": _summary_rows(run),
    }


async def _watch(stub: Any, run: bridge_pb2.Run, quiet: bool) -> None:
    total = max(run.scenarios_total, 1)
    with click.progressbar(
        length=total, label=f"run {run.run_id}", file=sys.stderr, show_pos=True
    ) as bar:
        shown = 0
        async for event in stub.WatchRun(bridge_pb2.WatchRunRequest(run_id=run.run_id)):
            if event.scenarios_done > shown:
                bar.update(event.scenarios_done - shown)
                shown = event.scenarios_done
            if not quiet and event.kind == bridge_pb2.RUN_EVENT_KIND_SESSION_RETRYING:
                click.echo(f"\nretrying {event.message}", err=True)
            if event.kind == bridge_pb2.RUN_EVENT_KIND_RUN_FINISHED:
                bar.update(total - shown)
                return


async def _run(
    address: str, token: str | None, tls_ca: Path | None, request: Any, as_json: bool
) -> int:
    async with client_channel(address, token=token, tls_ca=tls_ca) as channel:
        stub = bridge_pb2_grpc.BridgeServiceStub(channel)
        response = await stub.StartRun(request)
        if request.dry_run:
            rows = [
                {
                    "scenario": c.scenario_name,
                    "state": _RESUME.get(c.state, ""),
                    "reason": c.reason,
                    "session_id": c.session_id,
                }
                for c in response.classifications
            ]
            if as_json:
                print_json({"run_id": response.run.run_id, "classifications": rows})
            else:
                click.echo(f"run {response.run.run_id}: what a resume would do")
                click.echo(_table(rows, ["scenario", "state", "reason"]))
            return 0
        run = response.run
        if response.classifications and not as_json:
            for c in response.classifications:
                click.echo(f"{c.scenario_name}: {_RESUME.get(c.state, '')} ({c.reason})", err=True)
        try:
            await _watch(stub, run, as_json)
        except asyncio.CancelledError:
            await stub.CancelRun(bridge_pb2.CancelRunRequest(run_id=run.run_id))
            raise
        final = (await stub.GetRun(bridge_pb2.GetRunRequest(run_id=run.run_id))).run
    status = _STATUS.get(final.status, "")
    if as_json:
        print_json(_run_json(final))
    else:
        click.echo(_table(_summary_rows(final), _COLUMNS))
        click.echo(
            f"run {final.run_id}: {status} ({final.scenarios_done}/"
            f"{final.scenarios_total} scenarios)"
        )
    return 0 if final.status == bridge_pb2.RUN_STATUS_COMPLETED else 1


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
@click.option("--seed", type=int, help="Seed for noise and other randomness [0].")
@click.option("--tag", "tags", multiple=True, help="Tag the run (repeatable).")
@click.option(
    "--share-transcripts",
    is_flag=True,
    default=None,
    help="Forward each bot's transcripts to its peer.",
)
@click.option(
    "--user-connector",
    help="Dial the user bot at this URL instead of waiting "
    "for a gRPC bot (e.g. ws://127.0.0.1:8766).",
)
@click.option(
    "--agent-connector", help="Dial the agent bot at this URL (e.g. ws://127.0.0.1:8765)."
)
@click.option(
    "--connector-kind",
    default="pipecat",
    show_default=True,
    help="Connector kind for --user-connector/--agent-connector.",
)
@click.option("--connector-options", default="{}", help="Connector options as a JSON object.")
@replay_options
@json_option
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
    **opts: Any,
) -> None:
    """Run SCENARIOS (files, folders, or Python modules) through a bridge.

    Shows progress, then a summary table; exits 1 if the run failed or was
    cancelled. `--resume RUN` re-runs what a run left unfinished (no SCENARIOS
    needed); add `--check` to only see what it would do. `--replay RUN` plays
    the recorded callers of RUN, turn by turn, to the agent (only an agent bot
    or `--agent-connector` is needed), then compare: `vae compare RUN NEW`.

    \b
    Examples:
      vae run examples/suite --bridge 127.0.0.1:50051
      vae run --resume 2024-06-01 --check
      vae run --replay 2024-06-01 --replay-scenario airline_wrong_date
    """
    if check and not resume:
        raise click.UsageError("--check needs --resume RUN")
    replay = replay_fields(opts, bool(scenarios), bool(resume))
    if not scenarios and not resume and not replay:
        raise click.UsageError(
            "give SCENARIOS (files, folders or modules), --resume RUN or --replay RUN"
        )
    try:
        json.loads(opts["connector_options"])
    except json.JSONDecodeError as exc:
        raise click.BadParameter(str(exc), param_hint="--connector-options") from exc
    options = bridge_pb2.RunOptions(tags=list(tags))
    mapping = {
        "concurrency": "concurrency",
        "max_duration": "max_duration_s",
        "inactivity_timeout": "inactivity_timeout_s",
        "min_agent_turns": "min_agent_turns",
        "retry_stale": "auto_resume_on_stale",
        "max_retries": "max_auto_retries",
        "retry_insufficient": "auto_resume_on_insufficient_turns",
        "retry_backoff": "auto_retry_backoff_s",
        "pairing_timeout": "pairing_timeout_s",
        "seed": "seed",
        "share_transcripts": "share_transcripts",
    }
    for name, field in mapping.items():
        if opts[name] is not None:
            setattr(options, field, opts[name])
    if opts["gate_silence"] is not None:
        options.replay_gate_silence_s = opts["gate_silence"]
    if opts["end_policy"]:
        options.end_policy = (
            bridge_pb2.END_POLICY_TOOL_ONLY
            if opts["end_policy"] == "tool-only"
            else bridge_pb2.END_POLICY_VALID_TERMINAL_STATE
        )
    for side in ("user", "agent"):
        cfg = _connector(
            opts[f"{side}_connector"], opts["connector_kind"], opts["connector_options"]
        )
        if cfg is not None:
            getattr(options, f"{side}_connector").CopyFrom(cfg)
    request = bridge_pb2.StartRunRequest(
        sources=[_source(s) for s in scenarios],
        options=options,
        run_id=run_id,
        resume=resume,
        dry_run=check,
        **replay,
    )
    try:
        code = asyncio.run(_run(address, token, tls_ca, request, as_json))
    except grpc.aio.AioRpcError as exc:
        if exc.code() in _USAGE_CODES:
            raise click.UsageError(exc.details() or str(exc.code())) from exc
        if exc.code() == grpc.StatusCode.UNAVAILABLE:
            click.echo(f"error: cannot reach the bridge at {address}: {exc.details()}", err=True)
        else:
            click.echo(f"error: {exc.code().name}: {exc.details()}", err=True)
        sys.exit(1)
    except KeyboardInterrupt:
        click.echo("interrupted: the run was cancelled", err=True)
        sys.exit(1)
    sys.exit(code)


@click.group("runs")
def runs_group() -> None:
    """Recorded runs, read straight from the database (no bridge needed)."""


@runs_group.command("list")
@click.option("--prefix", default="", help="Only runs whose id starts with this (e.g. a date).")
@click.option("--limit", type=click.IntRange(min=0), default=0, help="At most this many (0: all).")
@db_option
@json_option
@store_errors
def runs_list(prefix: str, limit: int, db_path: Path, as_json: bool) -> None:
    """List runs, newest first."""
    with RecordingReader(db_path) as reader:
        rows = []
        for r in reader.list_runs(prefix, limit):
            sessions = reader.latest_attempts(r.run_id)
            rows.append(
                {
                    "run_id": r.run_id,
                    "status": str(r.status),
                    "scenarios": len(reader.run_scenarios(r.run_id)),
                    "ended": sum(1 for s in sessions.values() if s.ended_ns),
                    "clean_exits": sum(1 for s in sessions.values() if s.clean_exit),
                    "tags": ",".join(r.tags),
                    "vae_version": r.vae_version,
                }
            )
    if as_json:
        print_json(rows)
    else:
        click.echo(_table(rows, ["run_id", "status", "scenarios", "ended", "clean_exits", "tags"]))


@runs_group.command("show")
@click.argument("run")
@db_option
@json_option
@store_errors
def runs_show(run: str, db_path: Path, as_json: bool) -> None:
    """Show RUN (exact id or unique prefix): options and every attempt of every scenario."""
    with RecordingReader(db_path) as reader:
        run_id = select_run(reader, run)
        record = reader.get_run(run_id)
        assert record is not None
        replayed = replayed_from(reader, run_id)
        rows = [
            {
                "scenario": s.scenario_name,
                "attempt": s.attempt,
                "session_id": s.session_id,
                "status": str(s.status),
                "stop_reason": s.stop_reason or "",
                "clean_exit": s.clean_exit,
                "user_turns": s.user_turns,
                "agent_turns": s.agent_turns,
                "duration_s": round(s.duration_s, 2),
                "retry_reason": s.retry_reason,
                "superseded_reason": s.superseded_reason,
            }
            for s in reader.sessions(run_id)
        ]
    if as_json:
        print_json(
            {
                "run_id": run_id,
                "status": str(record.status),
                "options": record.options,
                "vae_version": record.vae_version,
                "replayed_from": replayed,
                "sessions": rows,
            }
        )
        return
    click.echo(f"run {run_id}: {record.status} (vae {record.vae_version})")
    if replayed["run"]:
        click.echo(f"replayed from run {replayed['run']} (sessions: {replayed['sessions']})")
    click.echo(_table(rows, _COLUMNS))


COMMANDS: list[click.Command] = [run_command, runs_group]
