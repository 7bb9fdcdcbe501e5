"""``vae bridge serve``: run the bridge service in the foreground."""

from __future__ import annotations

import logging
import os
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from vae.cli.common import (
    db_option,
    log_level_option,
    setup_logging,
    store_errors,
    tls_server_options,
    token_option,
)
from vae.cli.telemetry import otel_endpoint_option, otlp_receiver_option, require_otel

if TYPE_CHECKING:
    from vae.recordings.backends.locator import Locator

#: BridgeSettings' defaults, repeated so that --help need not import the bridge
#: (tests/cli/test_cli_startup.py checks they agree).
WAIT_TIMEOUT_S = 300.0
FINAL_STATE_TIMEOUT_S = 10.0

log = logging.getLogger("vae.bridge")


def cores() -> int:
    """The cores this process may run on (what `--workers auto` means)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def parse_workers(ctx: click.Context, param: click.Parameter, value: Any) -> int:
    """--workers: an integer of at least 1, or `auto` (one per core); else a usage error."""
    text = str(value).strip().lower()
    if text == "auto":
        return cores()
    try:
        number = int(text)
    except ValueError:
        raise click.BadParameter(f"{value!r} is neither a number nor 'auto'") from None
    if number < 1:
        raise click.BadParameter(f"{number} is below 1: give 1 or more, or 'auto'")
    return number


@click.group("bridge")
def bridge_group() -> None:
    """The bridge service: bots converse through it and every exchange is recorded."""


@bridge_group.command("serve")
@click.option(
    "--address",
    default="127.0.0.1:50051",
    show_default=True,
    envvar="VAE_BRIDGE_ADDRESS",
    help="host:port to listen on; loopback by default (env VAE_BRIDGE_ADDRESS).",
)
@db_option
@tls_server_options
@token_option
@click.option(
    "--wait-timeout",
    type=click.FloatRange(min=0.1),
    default=WAIT_TIMEOUT_S,
    show_default=True,
    envvar="VAE_BRIDGE_WAIT_TIMEOUT",
    help="Seconds a joined bot may wait for a session (env VAE_BRIDGE_WAIT_TIMEOUT).",
)
@click.option(
    "--final-state-timeout",
    type=click.FloatRange(min=0.1),
    default=FINAL_STATE_TIMEOUT_S,
    show_default=True,
    envvar="VAE_BRIDGE_FINAL_STATE_TIMEOUT",
    help="Seconds to wait for a bot's final state at the end of a session.",
)
@click.option(
    "--event-loop",
    type=click.Choice(["asyncio", "uvloop", "auto"]),
    default="asyncio",
    show_default=True,
    envvar="VAE_EVENT_LOOP",
    help="asyncio's own loop, uvloop (pip install 'vae[fast]'), or uvloop when installed"
    " (env VAE_EVENT_LOOP).",
)
@click.option(
    "--workers",
    callback=parse_workers,
    metavar="N|auto",
    default="1",
    show_default=True,
    envvar="VAE_WORKERS",
    help="Bridge processes serving sessions: 1 is one process; N >= 2 adds N worker processes"
    " behind the same address (bots that follow redirects are spread over them); 'auto' ="
    " one per core (env VAE_WORKERS).",
)
@click.option(
    "--share-runs",
    is_flag=True,
    envvar="VAE_SHARE_RUNS",
    help="Serve runs together with every other bridge sharing runs on the same PostgreSQL"
    " --db: a run started at any of them is served by whichever has a free pair of bots"
    " (env VAE_SHARE_RUNS=1).",
)
@click.option(
    "--sip-listen",
    default="",
    metavar="HOST:PORT",
    envvar="VAE_SIP_LISTEN",
    help="Take agents' SIP calls here, for runs with --agent-connector sip-inbound: (UDP and"
    " TCP; pip install 'vae[sip]'; env VAE_SIP_LISTEN).",
)
@otlp_receiver_option
@otel_endpoint_option
@log_level_option
@store_errors
def serve_command(
    address: str,
    db_path: Locator,
    tls_cert: Path | None,
    tls_key: Path | None,
    token: str | None,
    wait_timeout: float,
    final_state_timeout: float,
    event_loop: str,
    workers: int,
    share_runs: bool,
    sip_listen: str,
    otlp_receiver: str,
    otel_endpoint: str | None,
    log_level: str,
) -> None:
    """Serve BridgeService (with gRPC health and reflection) until interrupted.

    On SIGINT/SIGTERM live sessions end with reason `shutdown`, each still
    records its end, and the database is flushed before exit.

    With --workers N (N >= 2) this process stays on the address and keeps run
    control and pairing; N worker processes on the same host serve the
    sessions of bots that follow redirects (the reference bots do), both bots
    of a session always in one process. Other clients are served as before.
    A worker that dies is restarted; its sessions end `worker_lost` and are
    retried.

    With --share-runs several bridges (on any machines) sharing one PostgreSQL
    --db serve runs together: each attempt of a run started at any of them is
    queued in the database and claimed by a bridge with a free user and agent
    bot. A bridge that dies or stops mid-session has its attempts recorded
    `bridge_lost` by the run's bridge (within 5 s) and retried elsewhere.

    With --sip-listen HOST:PORT the bridge takes SIP calls from outbound agents:
    each session of a run with --agent-connector sip-inbound: answers the
    agent's call (matched by X-Vae-Session, else by the dialled user part as
    the scenario's name).

    With --otlp-receiver HOST:PORT the bridge receives agents' OpenTelemetry
    traces (OTLP/HTTP POST /v1/traces, protobuf or JSON) for every run and ties
    each span to its session; with --otel-endpoint URL (or the standard
    OTEL_EXPORTER_OTLP_* variables) it exports each run's trace when the run
    ends (pip install 'vae[otel]'; docs/traces.md).

    \b
    Examples:
      vae bridge serve --db vae.db
      vae bridge serve --db vae.db --sip-listen 127.0.0.1:5060
      vae bridge serve --db vae.db --otlp-receiver 127.0.0.1:4318
      vae bridge serve --db vae.db --workers auto
      vae bridge serve --db postgresql://vae@db:5432/vae --share-runs --workers auto
      vae bridge serve --address 0.0.0.0:50051 --token "$SECRET" --tls-cert c.pem --tls-key k.pem
    """
    from vae.bridge_service.config import BridgeSettings
    from vae.bridge_service.server import serve
    from vae.bridge_service.workers.process import WorkerStartError
    from vae.serving import TlsFiles

    setup_logging(log_level)
    if share_runs and not db_path.is_postgres:
        raise click.UsageError(
            f"--share-runs: {db_path.display()} is an SQLite file, one bridge's store; bridges"
            " share runs through a PostgreSQL --db (postgresql://USER@HOST:PORT/DATABASE)"
        )
    if (tls_cert is None) != (tls_key is None):
        raise click.UsageError("--tls-cert and --tls-key go together")
    if sip_listen:
        from vae.bridge_service.connectors.sip.listen import parse_listen
        from vae.sip import SipUnavailable, require

        try:
            parse_listen(sip_listen)
            require()
        except (ValueError, SipUnavailable) as exc:
            raise click.UsageError(str(exc)) from exc
    if otlp_receiver or otel_endpoint:
        require_otel("--otlp-receiver" if otlp_receiver else "--otel-endpoint")
    tls = TlsFiles(tls_cert, tls_key) if tls_cert and tls_key else None
    settings = replace(
        BridgeSettings(),
        wait_timeout_s=wait_timeout,
        final_state_timeout_s=final_state_timeout,
        otlp_receiver=otlp_receiver,
        otel_endpoint=otel_endpoint or "",
    )
    from vae.bridge_service import event_loop as loops

    try:
        name, _ = loops.loop_factory(event_loop)
        log.info("event loop: %s", name)
        loops.run(
            serve(
                db_path,
                address,
                settings=settings,
                tls=tls,
                token=token or None,
                workers=workers,
                event_loop=event_loop,
                log_level=log_level,
                share_runs=share_runs,
                sip_listen=sip_listen,
            ),
            event_loop,
        )
    except loops.EventLoopError as exc:
        raise click.UsageError(str(exc)) from exc
    except WorkerStartError as exc:
        raise click.ClickException(f"cannot start the bridge's workers: {exc}") from exc
    except (OSError, RuntimeError) as exc:
        raise click.ClickException(f"cannot serve on {address}: {exc}") from exc
