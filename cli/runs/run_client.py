"""The bridge client side of ``vae run``: the call, progress, summary tables.

Kept apart from ``cli/runs/run_cmd.py`` (the click definitions) so that ``vae run
--help`` does not import grpc and the generated contract; the request it
sends is built by ``cli/runs/run_request.py``.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import click
import grpc

from vae.bridge.v1 import bridge_pb2, bridge_pb2_grpc
from vae.cli.common import print_json
from vae.cli.runs import run_summary
from vae.cli.runs.run_start import start_run
from vae.cli.runs.run_summary import COLUMNS
from vae.cli.tables import dict_table
from vae.serving import client_channel

#: The request itself was wrong: exit 2. FAILED_PRECONDITION (a run still
#: running, a bridge whose store failed) is the bridge's state: exit 1.
USAGE_CODES = {
    grpc.StatusCode.INVALID_ARGUMENT,
    grpc.StatusCode.NOT_FOUND,
    grpc.StatusCode.ALREADY_EXISTS,
}
STATUS = {v: k.removeprefix("RUN_STATUS_").lower() for k, v in bridge_pb2.RunStatus.items()}
STOP = {v: k.removeprefix("STOP_REASON_").lower() for k, v in bridge_pb2.StopReason.items()}
RESUME = {v: k.removeprefix("RESUME_STATE_").lower() for k, v in bridge_pb2.ResumeState.items()}


def summary_rows(run: bridge_pb2.Run) -> list[dict[str, Any]]:
    return [
        {
            "scenario": s.session.scenario_name,
            "attempt": s.session.attempt,
            "session_id": s.session.session_id,
            "status": s.status,
            "stop_reason": STOP.get(s.stop_reason, ""),
            "clean_exit": s.clean_exit,
            "user_turns": s.user_turns,
            "agent_turns": s.agent_turns,
            "duration_s": round(s.duration_s, 2),
            "retry_reason": s.retry_reason,
            "stop_detail": s.stop_detail,
            "finished": s.finished,
            "bot_errors": list(s.bot_errors),
            "bridge": bridge_json(s),
        }
        for s in run.sessions
    ]


def bridge_json(s: bridge_pb2.SessionSummary) -> dict[str, Any] | None:
    """The bridge process that served the attempt, as `vae runs show --json` gives it."""
    if not s.HasField("bridge"):
        return None
    b = s.bridge
    return {
        "host": b.host,
        "pid": b.pid,
        "address": b.address,
        "worker": b.worker if b.HasField("worker") else None,
        "front_door": b.front_door,
    }


def _run_json(run: bridge_pb2.Run) -> dict[str, Any]:
    return {
        "run_id": run.run_id,
        "status": STATUS.get(run.status, ""),
        "scenarios_total": run.scenarios_total,
        "scenarios_done": run.scenarios_done,
        "vae_version": run.vae_version,
        "error": run.error,
        "sessions": summary_rows(run),
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


async def run(
    address: str,
    token: str | None,
    tls_ca: Path | None,
    request: Any,
    as_json: bool,
    started: list[str] | None = None,
    document: dict[str, Any] | None = None,
) -> int:
    """Run and print; with ``document`` (``vae run --json`` with a gate) the run's JSON is
    put there for the caller to print with the gate's, instead of printed."""
    async with client_channel(address, token=token, tls_ca=tls_ca) as channel:
        stub = bridge_pb2_grpc.BridgeServiceStub(channel)
        response = await start_run(stub, request, started if started is not None else [])
        if request.dry_run:
            rows = [
                {
                    "scenario": c.scenario_name,
                    "state": RESUME.get(c.state, ""),
                    "reason": c.reason,
                    "session_id": c.session_id,
                }
                for c in response.classifications
            ]
            if as_json:
                print_json({"run_id": response.run.run_id, "classifications": rows})
            else:
                click.echo(f"run {response.run.run_id}: what a resume would do")
                click.echo(dict_table(rows, ["scenario", "state", "reason"]))
            return 0
        run = response.run
        if response.classifications and not as_json:
            for c in response.classifications:
                click.echo(f"{c.scenario_name}: {RESUME.get(c.state, '')} ({c.reason})", err=True)
        try:
            await _watch(stub, run, as_json)
        except asyncio.CancelledError:
            await stub.CancelRun(bridge_pb2.CancelRunRequest(run_id=run.run_id))
            raise
        final = (await stub.GetRun(bridge_pb2.GetRunRequest(run_id=run.run_id))).run
    status = STATUS.get(final.status, "")
    if as_json and document is not None:
        document.update(_run_json(final))
    elif as_json:
        print_json(_run_json(final))
    else:
        rows = summary_rows(final)
        for row in rows:
            row["detail"] = run_summary.detail_of(row)
        click.echo(dict_table(rows, COLUMNS))
        for line in run_summary.notes(final.run_id, status, final.error, rows):
            click.echo(line)
        click.echo(
            f"run {final.run_id}: {status} ({final.scenarios_done}/"
            f"{final.scenarios_total} scenarios)"
        )
    return 0 if final.status == bridge_pb2.RUN_STATUS_COMPLETED else 1
