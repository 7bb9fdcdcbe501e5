"""``vae runs list|show``: recorded runs, read straight from the database file.

Why apart from ``vae run``: ``vae run`` is a client of a running bridge (gRPC,
progress, cancel on Ctrl-C); these commands open ``--db`` directly, so they
work with no bridge running, also on a copy of the file, and change when the
store's records or the run table's columns do, not when the bridge does.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import click

from vae.cli.common import db_option, json_option, print_json, store_errors
from vae.cli.runs.run_summary import COLUMNS
from vae.cli.runs.sip_opts import sip_code
from vae.cli.tables import dict_table
from vae.cli.telemetry import prices_option

if TYPE_CHECKING:
    from vae.recordings.backends.locator import Locator


@click.group("runs")
def runs_group() -> None:
    """Recorded runs, read straight from the database (no bridge needed)."""


@runs_group.command("list")
@click.option("--prefix", default="", help="Only runs whose id starts with this (e.g. a date).")
@click.option("--limit", type=click.IntRange(min=0), default=0, help="At most this many (0: all).")
@db_option
@json_option
@store_errors
def runs_list(prefix: str, limit: int, db_path: Locator, as_json: bool) -> None:
    """List runs, newest first.

    \b
    Examples:
      vae runs list --db vae.db
      vae runs list --db vae.db --prefix 2026-12 --limit 5 --json
    """
    from vae.recordings.read.reader import RecordingReader

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
@prices_option
@json_option
@store_errors
def runs_show(run: str, db_path: Locator, prices: Any, as_json: bool) -> None:
    """Show RUN (exact id or unique prefix): options and every attempt of every scenario.

    Each attempt's session id is listed: that is what `--session` takes in
    `vae rescore` and `vae export`. The `line` column is the phone line the
    caller's audio went through (`user.line`, `--line`; `clean` without one),
    with the packets it lost. The `bridge` column names the bridge
    process that served it (`worker 2 pid 4242` under `vae bridge serve
    --workers N`); `--json` gives it as an object per session (host, pid,
    address, worker, front_door), null when not recorded. The `outcome`
    column is each session's verdict in the current scoring as the gate
    counts it (`expected failure` for a scenario built to fail that failed,
    `unexpectedly passed` for one that passed), and the closing lines are
    what `vae gate RUN` decides without a threshold (`--json`: `gate`). With
    `--prices FILE` each counted session's cost is shown ("?" where a price
    is unknown) and the run's total says how many were unknown; `--json` also
    gives the exports of vae's trace (`otel.spans_dropped`) and how the
    agent's spans were tied to sessions (docs/traces.md).

    \b
    Examples:
      vae runs show 2026-12 --db vae.db
      vae runs show 2026-12 --db vae.db --json
      vae runs show 2026-12 --db vae.db --prices examples/prices/prices.example.toml
    """
    from vae.cli.runs import run_summary, runs_gate
    from vae.cli.runs.replay_opts import replayed_from
    from vae.cli.telemetry_view import run_extras, run_lines, session_cost_text
    from vae.recordings.read.bot_errors import bot_errors
    from vae.recordings.read.reader import RecordingReader
    from vae.recordings.read.selection import select_run
    from vae.recordings.scenarios.line import describe_recorded
    from vae.recordings.stop_reasons import is_finished

    with RecordingReader(db_path) as reader:
        run_id = select_run(reader, run)
        record = reader.get_run(run_id)
        assert record is not None
        replayed = replayed_from(reader, run_id)
        modes = reader.session_modes(run_id)
        bridges = reader.session_bridges(run_id)
        callers = reader.session_callers(run_id)
        lines = reader.session_lines(run_id)
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
                "sip_code": sip_code(s.stop_detail),
                "finished": is_finished(s.stop_reason),
                "bot_errors": bot_errors(reader, s.session_id),
                "clock": reader.session_clock(s.session_id),
                "modality": modes[s.session_id].modality,
                "clock_kind": modes[s.session_id].clock,
                "bridge": bridges.get(s.session_id),
                "caller": callers.get(s.session_id),
                "line": lines.get(s.session_id),
            }
            for s in reader.sessions(run_id)
        ]
        for row in rows:
            row["detail"] = run_summary.detail_of(row)
        verdicts = runs_gate.run_verdicts(reader, run_id)
        runs_gate.annotate(reader, run_id, rows, verdicts)
        extras = run_extras(reader, run_id, prices)
    modality = str(record.options.get("modality", "audio"))
    clock = str(record.options.get("clock", "real"))
    if as_json:
        print_json(
            {
                "run_id": run_id,
                "status": str(record.status),
                "options": record.options,
                "vae_version": record.vae_version,
                "error": record.error,
                "modality": modality,
                "clock": clock,
                "replayed_from": replayed,
                "sessions": rows,
                "gate": runs_gate.gate_block(verdicts),
                **extras,
            }
        )
        return
    click.echo(f"run {run_id}: {record.status} (vae {record.vae_version})")
    click.echo(f"modality: {modality}, clock: {clock}")
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
        row["mode"] = f"{row['modality']}/{row['clock_kind']}"
        row["bridge"] = _bridge(row["bridge"])
        row["line"] = describe_recorded(row["line"])
        row["outcome"] = runs_gate.shown(str(row["outcome"]))
    columns = ["session_id", *COLUMNS, "outcome", "mode", "tick_late_ms", "line", "bridge"]
    if prices is not None:
        for row in rows:
            row["cost"] = session_cost_text(extras, str(row["session_id"]))
        columns.append("cost")
    click.echo(dict_table(rows, columns))
    for line in caller_lines(rows):
        click.echo(line)
    for line in run_summary.notes(run_id, str(record.status), record.error, rows):
        click.echo(line)
    for line in [*runs_gate.gate_lines(verdicts), *run_lines(extras)]:
        click.echo(line)


def caller_lines(rows: list[dict[str, Any]]) -> list[str]:
    """One line per session whose scenario named its caller: voice, behaviours, voicemail."""
    lines: list[str] = []
    for row in rows:
        caller = row.get("caller")
        if not isinstance(caller, dict):
            continue
        if "error" in caller:
            lines.append(f"  {row['session_id']}: {caller['error']}")
            continue
        voice = caller.get("voice", {})
        text = f"voice {voice.get('summary', '?')}"
        if voice.get("applies") is False:
            text += " (not applicable: text)"
        text += f"; behaviour: {caller.get('behaviour', {}).get('summary', 'none')}"
        mail = caller.get("voicemail")
        if caller.get("answers_as") == "voicemail" and isinstance(mail, dict):
            text += f"; answers as voicemail (expects {mail.get('expect')}"
            text += f" within {mail.get('within_s')} s)"
        lines.append(f"  {row['session_id']} {row['scenario']}: {text}")
    return ["callers:", *lines] if lines else []


def _bridge(bridge: Any) -> str:
    """The serving process as ``worker 2 pid 4242`` or ``bridge pid 4240`` ('' when unknown)."""
    if not isinstance(bridge, dict):
        return ""
    worker = bridge.get("worker")
    who = f"worker {worker}" if worker is not None else "bridge"
    return f"{who} pid {bridge.get('pid', '?')}"


def _tick_late(clock: Any) -> str:
    """The clock's tick lateness as ``p50/p99/max`` ms ('' when not recorded).

    A session on the virtual clock has no ticks to be late: its speed (session
    time over wall time) is shown instead.
    """
    if isinstance(clock, dict) and clock.get("clock") == "virtual":
        speed = clock.get("speed")
        return f"virtual, {speed:g}x real time" if isinstance(speed, int | float) else "virtual"
    late = clock.get("tick_late") if isinstance(clock, dict) else None
    if not isinstance(late, dict):
        return ""
    return f"{late.get('p50_ms', 0):g}/{late.get('p99_ms', 0):g}/{late.get('max_ms', 0):g}"
