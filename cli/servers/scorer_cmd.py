"""``vae scorer serve``: the scorer service on a local database."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from vae.cli.common import (
    db_option,
    log_level_option,
    setup_logging,
    shown,
    store_errors,
    tls_server_options,
    token_option,
)

if TYPE_CHECKING:
    from vae.recordings.backends.locator import Locator
    from vae.scorer_service.ray_scoring.runner import RayRunner
    from vae.serving import TlsFiles


async def _serve(
    db_path: Locator, address: str, tls: TlsFiles | None, token: str | None, ray: RayRunner | None
) -> None:
    from vae.scorer_service.edge.server import start_scorer

    running = await start_scorer(db_path, address, tls=tls, token=token, runner=ray)
    host = address.rsplit(":", 1)[0]
    where = f", scoring on Ray at {ray.address}" if ray is not None else ""
    click.echo(f"scorer serving {shown(db_path)} on {host}:{running.port}{where}", err=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(sig, stop.set)
    try:
        await stop.wait()
    finally:
        click.echo("scorer stopping", err=True)
        await running.stop(grace=5.0)


@click.group("scorer")
def scorer_group() -> None:
    """The scorer service: rescoring, the score ledger and reports over gRPC."""


@scorer_group.command("serve")
@click.option(
    "--address",
    default="127.0.0.1:50052",
    show_default=True,
    envvar="VAE_SCORER_ADDRESS",
    help="host:port to listen on; port 0 picks a free one (env VAE_SCORER_ADDRESS).",
)
@click.option(
    "--ray",
    "ray_address",
    default=None,
    metavar="ADDRESS",
    envvar="VAE_RAY",
    help="Score every Rescore's sessions as Ray tasks: auto, local, HOST:PORT or "
    "ray://HOST:PORT (env VAE_RAY; needs pip install 'vae[ray]'). Default: in this process.",
)
@tls_server_options
@db_option
@token_option
@log_level_option
@store_errors
def serve_command(
    address: str,
    ray_address: str | None,
    tls_cert: Path | None,
    tls_key: Path | None,
    db_path: Locator,
    token: str | None,
    log_level: str,
) -> None:
    """Serve ScorerService (with health and reflection) on the database --db.

    Runs until interrupted (Ctrl-C or SIGTERM), then finishes in-flight calls.

    \b
    Examples:
      vae scorer serve --db vae.db
      vae scorer serve --db vae.db --address 127.0.0.1:0 --token "$SECRET"
      vae scorer serve --db vae.db --ray auto
    """
    from vae.serving import TlsFiles

    setup_logging(log_level)
    if (tls_cert is None) != (tls_key is None):
        raise click.UsageError("--tls-cert and --tls-key go together")
    from vae.recordings.backends.connection import open_store

    if not db_path.exists():
        raise click.UsageError(f"no vae database at {shown(db_path)}")
    # Refuse a file the scorer cannot read and write now, not on every request.
    open_store(db_path, create=False).close()
    tls = TlsFiles(tls_cert, tls_key) if tls_cert and tls_key else None
    ray = _connect_ray(ray_address) if ray_address else None
    try:
        asyncio.run(_serve(db_path, address, tls, token, ray))
    except OSError as exc:
        raise click.ClickException(f"cannot serve on {address}: {exc}") from exc
    finally:
        if ray is not None:
            ray.close()


def _connect_ray(address: str) -> RayRunner:
    """Connect to Ray before serving: a bad address exits 2, an unusable one 1."""
    from vae.scorer_service.ray_scoring.connect import RayAddressError, RayScoringError
    from vae.scorer_service.ray_scoring.runner import RayRunner

    runner = RayRunner(address)
    try:
        runner.connect()
    except RayAddressError as exc:
        raise click.UsageError(str(exc)) from exc
    except RayScoringError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(1)
    return runner
