"""``vae judge serve``: the demo's rule-based STAND-IN judge, on its own.

Why: NL assertions and JUDGE_PASSED need an OpenAI-compatible judge endpoint.
A user without one can still try the whole pipeline on their own scenarios
with this stand-in (the one ``vae demo`` uses). It is not an evaluator: it
checks quoted phrases and reference values by keyword (rules in
``bots/stand_in/offline_judge.py`` and docs/scenarios.md), and its banner says so.
"""

from __future__ import annotations

import sys

import click

from vae.cli.common import json_option, log_level_option, print_json, setup_logging

BANNER = (
    "STAND-IN JUDGE: rule-based keyword checks for trying the pipeline, NOT an evaluator.\n"
    '  An NL assertion passes when every phrase it quotes ("...") appears in the\n'
    "  conversation evidence (or, if it says not/never/no, when none does); the judge\n"
    "  score is the share of reference-answer values found in the recorded actions.\n"
    "  Use a real LLM judge for real evaluations."
)


@click.group("judge")
def judge_group() -> None:
    """A local stand-in judge for trying NL assertions without any model."""


@judge_group.command("serve")
@click.option(
    "--address",
    default="127.0.0.1:8090",
    show_default=True,
    envvar="VAE_JUDGE_ADDRESS",
    help="host:port to listen on; loopback by default, port 0 picks a free one "
    "(env VAE_JUDGE_ADDRESS).",
)
@json_option
@log_level_option
def judge_serve(address: str, as_json: bool, log_level: str) -> None:
    """Serve the rule-based STAND-IN judge (OpenAI-compatible) until interrupted.

    It is the judge `vae demo` uses: deterministic keyword rules, no model, no
    network. It lets you try NL_ASSERTION and JUDGE_PASSED on your own
    scenarios; it is not an evaluator. Point `vae rescore` at the printed
    base URL with `--judge-model vae-offline-judge`. With --json, prints one
    JSON document ({"base_url", "model"}) once it is listening.

    \b
    Examples:
      vae judge serve
      vae judge serve --address 127.0.0.1:0 --json
      vae rescore --run 2026-12 --db vae.db --judge-model vae-offline-judge \
          --judge-base-url http://127.0.0.1:8090/v1
    """
    import signal
    import threading

    from vae.bots.stand_in.offline_judge import MODEL, offline_judge_server

    setup_logging(log_level)
    host, sep, port_text = address.rpartition(":")
    if not sep or not port_text.isdigit():
        raise click.BadParameter("expected host:port", param_hint="--address")
    if host not in ("127.0.0.1", "localhost", "::1", "[::1]"):
        click.echo(
            f"warning: serving on {host}, not loopback: anyone who can reach it can use it",
            err=True,
        )
    try:
        server = offline_judge_server(port=int(port_text), host=host.strip("[]"))
    except OSError as exc:
        raise click.ClickException(f"cannot serve on {address}: {exc}") from exc
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    with server:
        click.echo(BANNER, err=True)
        if as_json:
            print_json({"base_url": server.base_url, "model": MODEL, "stand_in": True})
        else:
            click.echo(f"base URL {server.base_url}  model {MODEL}")
        sys.stdout.flush()
        stop.wait()
        click.echo("judge stopping", err=True)
