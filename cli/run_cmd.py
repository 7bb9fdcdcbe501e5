"""``vae run`` (through a bridge) and ``vae runs list|show`` (straight from the database).

``vae run`` is a thin client of a running bridge: StartRun, then a progress
bar fed by WatchRun, then a summary table from GetRun. Ctrl-C cancels the run.
``vae runs`` reads the database file directly (``--db``), so it works with no
bridge running, also on a copy of the file.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from cli.common import (
    db_option,
    json_option,
    log_level_option,
    print_json,
    setup_logging,
    store_errors,
    token_option,
)
from cli.replay_opts import replay_options
from cli.run_summary import COLUMNS
from cli.tables import dict_table


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
    problem listed, before the bridge is asked for anything. `--replay RUN` plays
    the recorded callers of RUN, turn by turn, to the agent (only an agent bot
    or `--agent-connector` is needed), then compare: `vae compare RUN NEW`.

    \b
    Examples:
      vae run examples/suite --bridge 127.0.0.1:50051
      vae run my-scenarios/ --concurrency 2 --tag nightly --json
      vae run --resume 2026-12-02 --check
      vae run --replay 2026-12-02 --replay-scenario airline_wrong_date
    """
    import asyncio

    import grpc

    from cli import run_client, run_summary
    from cli.replay_opts import replay_fields
    from cli.validate_cmd import refuse_invalid
    from vae.bridge.v1 import bridge_pb2
    from vae.common.v1 import common_pb2

    setup_logging(log_level)
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
        "repeat": "repeat",
        "share_transcripts": "share_transcripts",
        "first_speaker_timeout": "first_speaker_timeout_s",
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
    if opts["first_speaker"]:
        options.first_speaker = (
            common_pb2.ROLE_USER if opts["first_speaker"] == "user" else common_pb2.ROLE_AGENT
        )
    for side in ("user", "agent"):
        cfg = run_client.connector(
            opts[f"{side}_connector"],
            opts["connector_kind"],
            opts["connector_options"],
            opts["connector_capacity"],
            opts["connect_timeout"],
        )
        if cfg is not None:
            getattr(options, f"{side}_connector").CopyFrom(cfg)
    request = bridge_pb2.StartRunRequest(
        sources=[run_client.source(s) for s in scenarios],
        options=options,
        run_id=run_id,
        resume=resume,
        dry_run=check,
        **replay,
    )
    started: list[str] = []
    try:
        code = asyncio.run(run_client.run(address, token, tls_ca, request, as_json, started))
    except grpc.aio.AioRpcError as exc:
        if exc.code() in run_client.USAGE_CODES:
            raise click.UsageError(exc.details() or str(exc.code())) from exc
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
    """List runs, newest first.

    \b
    Examples:
      vae runs list --db vae.db
      vae runs list --db vae.db --prefix 2026-12 --limit 5 --json
    """
    from recordings.reader import RecordingReader

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
        click.echo(
            dict_table(rows, ["run_id", "status", "scenarios", "ended", "clean_exits", "tags"])
        )


@runs_group.command("show")
@click.argument("run")
@db_option
@json_option
@store_errors
def runs_show(run: str, db_path: Path, as_json: bool) -> None:
    """Show RUN (exact id or unique prefix): options and every attempt of every scenario.

    Each attempt's session id is listed: that is what `--session` takes in
    `vae rescore` and `vae export`.

    \b
    Examples:
      vae runs show 2026-12 --db vae.db
      vae runs show 2026-12 --db vae.db --json
    """
    from cli import run_summary
    from cli.replay_opts import replayed_from
    from recordings.bot_errors import bot_errors
    from recordings.reader import RecordingReader
    from recordings.selection import select_run
    from recordings.stop_reasons import is_finished

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
                "stop_detail": s.stop_detail,
                "finished": is_finished(s.stop_reason),
                "bot_errors": bot_errors(reader, s.session_id),
                "clock": reader.session_clock(s.session_id),
            }
            for s in reader.sessions(run_id)
        ]
        for row in rows:
            row["detail"] = run_summary.detail_of(row)
    if as_json:
        print_json(
            {
                "run_id": run_id,
                "status": str(record.status),
                "options": record.options,
                "vae_version": record.vae_version,
                "error": record.error,
                "replayed_from": replayed,
                "sessions": rows,
            }
        )
        return
    click.echo(f"run {run_id}: {record.status} (vae {record.vae_version})")
    if record.error:
        click.echo(f"error: {record.error}")
    if replayed["run"]:
        click.echo(f"replayed from run {replayed['run']} (sessions: {replayed['sessions']})")
    if record.tags:
        click.echo(f"tags: {', '.join(record.tags)}")
    click.echo("options:" if record.options else "options: (none recorded)")
    for key, value in sorted(record.options.items()):
        click.echo(f"  {key}: {json.dumps(value, ensure_ascii=False, default=str)}")
    for row in rows:
        row["tick_late_ms"] = _tick_late(row.pop("clock"))
    click.echo(dict_table(rows, ["session_id", *COLUMNS, "tick_late_ms"]))
    for line in run_summary.notes(run_id, str(record.status), record.error, rows):
        click.echo(line)


def _tick_late(clock: Any) -> str:
    """The clock's tick lateness as ``p50/p99/max`` ms ('' when not recorded)."""
    late = clock.get("tick_late") if isinstance(clock, dict) else None
    if not isinstance(late, dict):
        return ""
    return f"{late.get('p50_ms', 0):g}/{late.get('p99_ms', 0):g}/{late.get('max_ms', 0):g}"
