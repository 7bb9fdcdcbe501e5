"""``vae review RUN``: serve the review page on loopback until Ctrl-C.

Thin: the page and its server are :mod:`vae.scorer_service.review`. It prints the
page's URL (with its token) — with ``--json`` one JSON document on one line,
for scripts — and serves until interrupted (Ctrl-C or SIGTERM), then stops
cleanly: every label was already committed when the page said "saved".
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from vae.cli.common import db_option, json_option, log_level_option, setup_logging, store_errors


@click.command("review")
@click.argument("run")
@click.option("--scoring", "scoring_ref", default=None,
              help="Show this scoring's verdicts (default: the run's current one).")  # fmt: skip
@click.option("--by", envvar="VAE_LABEL_BY", default=None,
              help="Whose labels these are (env VAE_LABEL_BY; default: the OS user).")  # fmt: skip
@click.option("--host", default="127.0.0.1", show_default=True, envvar="VAE_REVIEW_HOST",
              help="Address to listen on; anything but loopback lets other machines reach the "
              "page (they still need the token). Env VAE_REVIEW_HOST.")  # fmt: skip
@click.option("--port", type=click.IntRange(0, 65535), default=0, show_default=True,
              envvar="VAE_REVIEW_PORT",
              help="Port (0: a free one). Env VAE_REVIEW_PORT.")  # fmt: skip
@click.option("--open", "open_browser", is_flag=True, help="Open the page in your browser.")
@db_option
@json_option
@log_level_option
@store_errors
def review_command(
    run: str,
    scoring_ref: str | None,
    by: str | None,
    host: str,
    port: int,
    open_browser: bool,
    db_path: Path,
    as_json: bool,
    log_level: str,
) -> None:
    """Serve a page on which you label RUN's sessions, and save each label at once.

    Per session: the audio with the timeline (click to play from there), the
    transcript, the judge's verdicts and reasons, and buttons to label the
    session, each signal and each NL assertion (pass, fail, can't tell) with a
    note. Keys: p / f / u label the session and go to the next unlabelled one,
    n next unlabelled, k previous, space play/pause. Only loopback by default;
    the printed URL carries a random token every request needs. Then run
    `vae scores agree RUN` to see how the judge agrees with you.

    \b
    Examples:
      vae review 2026-12 --db vae.db
      vae review 2026-12 --db vae.db --by ann --port 8765 --open
      vae review 2026-12 --db vae.db --scoring SCORING_ID --json
    """
    import asyncio

    from vae.recordings.labels import LabelError, check_labeller, default_labeller
    from vae.scorer_service.ledger.scorings import ScoringNotFoundError
    from vae.scorer_service.review.server import ReviewServer, is_loopback

    setup_logging(log_level)
    if not db_path.exists():
        raise click.UsageError(f"no database at {db_path}")
    try:
        labeller = check_labeller(by) if by is not None else default_labeller()
    except LabelError as exc:
        raise click.UsageError(str(exc)) from exc
    server = ReviewServer(db_path, run, labeller, scoring_ref, host, port)

    def ready(srv: ReviewServer) -> None:
        if as_json:
            doc = {"url": srv.url, "run_id": srv.run_id, "scoring_id": srv.scoring_id,
                   "labeller": labeller}  # fmt: skip
            import json

            click.echo(json.dumps(doc, ensure_ascii=False))
        else:
            click.echo(f"review {srv.run_id} as {labeller}: {srv.url}")
            click.echo("labels are saved as you click; Ctrl-C stops the page", err=True)
        if not is_loopback(host):
            click.echo(f"warning: listening on {host}: other machines can reach the page "
                       "(with the token)", err=True)  # fmt: skip
        sys.stdout.flush()
        if open_browser:
            import webbrowser

            webbrowser.open(srv.url)

    async def main() -> None:
        import signal

        task = asyncio.create_task(server.serve(ready))
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, task.cancel)
        try:
            await task
        except asyncio.CancelledError:
            if not task.cancelled():
                raise

    try:
        asyncio.run(main())
    except (ScoringNotFoundError, LabelError) as exc:
        raise click.UsageError(str(exc)) from exc
    except OSError as exc:
        click.echo(f"error: cannot listen on {host}:{port}: {exc.strerror or exc}", err=True)
        sys.exit(1)
    click.echo("review page stopped", err=True)
