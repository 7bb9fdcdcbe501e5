"""``vae bot user|agent``: run a reference bot against a bridge.

Scripted by default (each side plays the ``script`` from the scenario); with
``--llm-base-url`` and ``--llm-model`` an LLM-driven bot through any
OpenAI-compatible endpoint, which with ``--asr ENGINE`` transcribes the turns
of a peer that shares no transcripts (``vae.speech.stt``). ``--concurrency N``
holds N conversations at once (N Converse streams). Runs until interrupted, or
for ``--sessions`` sessions. What plays each session is chosen by
``cli/servers/bot_brains.py``; answering SIP calls is ``cli/servers/bot_sip.py``.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from vae import __version__
from vae.cli.common import log_level_option, setup_logging, token_option

if TYPE_CHECKING:
    from vae.bots.runner import BotConfig


async def _main(config: BotConfig) -> int:
    from vae.bots.preflight import BridgeUnusable, check_bridge

    try:
        await check_bridge(config.address, token=config.token, tls_ca=config.tls_ca)
    except BridgeUnusable as exc:
        click.echo(f"error: {exc}", err=True)
        return 1
    from vae.bots.runner import run_bots

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(sig, stop.set)
    outcomes = await run_bots(config, stop)
    click.echo(f"{config.role} bot: {len(outcomes)} sessions played", err=True)
    return 0


@click.command("bot")
@click.argument("role", type=click.Choice(["user", "agent"]))
@click.option(
    "--bridge",
    "address",
    envvar="VAE_BRIDGE",
    default="127.0.0.1:50051",
    show_default=True,
    help="Bridge address host:port (env VAE_BRIDGE).",
)
@click.option(
    "--concurrency",
    type=click.IntRange(1, 256),
    default=1,
    show_default=True,
    help="Conversations held at once (one Converse stream each).",
)
@click.option(
    "--sessions",
    type=click.IntRange(0),
    default=0,
    show_default=True,
    help="Stop after this many sessions (0: run until interrupted).",
)
@click.option("--run-filter", default="", help="Only take sessions of this run id.")
@click.option(
    "--llm-base-url", default=None, help="OpenAI-compatible endpoint: makes this an LLM-driven bot."
)
@click.option("--llm-model", default=None, help="Model name for --llm-base-url.")
@click.option(
    "--asr",
    type=click.Choice(["openai", "pocketsphinx"]),
    envvar="VAE_ASR",
    default=None,
    help="LLM bots: transcribe each peer turn with this engine when the peer shares no "
    "transcripts, act on the text and report it as heard (env VAE_ASR).",
)
@click.option(
    "--asr-base-url",
    envvar="VAE_ASR_BASE_URL",
    default="",
    help="--asr openai: an OpenAI-compatible /v1/audio/transcriptions endpoint "
    "(env VAE_ASR_BASE_URL).",
)
@click.option(
    "--asr-model",
    envvar="VAE_ASR_MODEL",
    default="",
    help="Transcription model (env VAE_ASR_MODEL).",
)
@click.option(
    "--asr-api-key",
    envvar="VAE_ASR_API_KEY",
    default="",
    help="API key of the transcription endpoint, never stored (env VAE_ASR_API_KEY).",
)
@click.option(
    "--asr-language",
    envvar="VAE_ASR_LANGUAGE",
    default="",
    help="Language hint, e.g. en (env VAE_ASR_LANGUAGE).",
)
@click.option(
    "--llm-api-key",
    envvar="VAE_BOT_LLM_API_KEY",
    default="unused",
    help="API key for the endpoint (env VAE_BOT_LLM_API_KEY).",
)
@click.option(
    "--tts",
    type=click.Choice(["auto", "espeak", "buzz"]),
    default="auto",
    show_default=True,
    help="Voice: eSpeak NG when installed, or a synthetic buzz.",
)
@click.option("--name", default=None, help="Bot name recorded with each session.")
@click.option(
    "--tls-ca",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    envvar="VAE_TLS_CA",
    help="CA certificate of a TLS bridge (env VAE_TLS_CA).",
)
@click.option(
    "--script-from",
    "script_from",
    type=click.Path(exists=True, path_type=Path),
    default=None,
    help="Scenario file or folder: for scenarios of the same name, play this side's "
    "script from here instead of the one the bridge sends (a changed agent).",
)
@click.option(
    "--follow-redirects/--no-follow-redirects",
    default=True,
    show_default=True,
    envvar="VAE_BOT_FOLLOW_REDIRECTS",
    help="Let a bridge with worker processes (`vae bridge serve --workers N`) move this bot's"
    " sessions to a worker (env VAE_BOT_FOLLOW_REDIRECTS); without it the bridge's own process"
    " serves them.",
)
@click.option(
    "--tool-backend",
    is_flag=True,
    help="Agent: call the tools through the session's tool backend over HTTP (vae run "
    "--tool-backend) instead of running them on the bot's own DB.",
)
@click.option(
    "--sip-listen",
    default="",
    metavar="HOST:PORT",
    envvar="VAE_BOT_SIP_LISTEN",
    help="Answer SIP calls here instead of joining a bridge: a bridge reaches this bot with"
    " --agent-connector sip:agent@HOST:PORT (any user part; calls at once; pip install"
    " 'vae[sip]'; env VAE_BOT_SIP_LISTEN).",
)
@click.option(
    "--capacity",
    type=click.IntRange(min=1),
    default=None,
    envvar="VAE_BOT_CAPACITY",
    help="Scripted agent: calls held at its base latency; beyond them every reply waits three "
    "base latencies more per extra call, like an agent behind a rate-limited LLM (the subject"
    " of `vae load`; env VAE_BOT_CAPACITY).",
)
@click.option(
    "--base-latency",
    type=click.FloatRange(min=0),
    default=None,
    envvar="VAE_BOT_BASE_LATENCY",
    help="Scripted agent: its reply delay in seconds when not overloaded, after the 0.5 s "
    "of quiet that ends the caller's turn [each scenario's response_delay_s, 0.15] (env "
    "VAE_BOT_BASE_LATENCY).",
)
@click.option(
    "--slow-down",
    type=click.FloatRange(min=0),
    default=0.0,
    show_default=True,
    envvar="VAE_BOT_SLOW_DOWN",
    help="Scripted agent: seconds added to the reply delay for every call it started before,"
    " a steady degradation for a soak to catch (env VAE_BOT_SLOW_DOWN).",
)
@token_option
@log_level_option
def bot_command(
    role: str,
    address: str,
    concurrency: int,
    sessions: int,
    run_filter: str,
    llm_base_url: str | None,
    llm_model: str | None,
    llm_api_key: str,
    asr: str | None,
    asr_base_url: str,
    asr_model: str,
    asr_api_key: str,
    asr_language: str,
    tts: str,
    name: str | None,
    tls_ca: Path | None,
    script_from: Path | None,
    follow_redirects: bool,
    tool_backend: bool,
    sip_listen: str,
    capacity: int | None,
    base_latency: float | None,
    slow_down: float,
    token: str | None,
    log_level: str,
) -> None:
    """Run a reference USER or AGENT bot that joins the bridge's sessions.

    With --capacity N the scripted agent answers at its base latency while
    it holds at most N calls, and slower beyond (three base latencies more
    per extra call: see `vae load`); --slow-down S makes it slower by S
    seconds with every call, for a soak to notice. On the virtual clock
    these delays are session time.

    With --sip-listen HOST:PORT the bot joins no bridge: it answers SIP calls
    (a bridge calling it with --agent-connector sip:agent@HOST:PORT), each one
    session, as many at once as come; the bridge sends the session over SIP
    INFO, audio is G.711 RTP.

    Before joining it checks the bridge once (health, with the token and TLS
    settings given): a wrong token or CA certificate ends it with a message
    naming the option, after a bounded number of tries.

    \b
    Examples:
      vae bot user --bridge 127.0.0.1:50051
      vae bot agent --bridge 127.0.0.1:50051 --concurrency 4
      vae bot agent --concurrency 8 --capacity 3 --tts buzz
      vae bot agent --concurrency 4 --token s3cret --tls-ca ca.pem
      vae bot user --bridge 127.0.0.1:50051 --tts buzz --sessions 1
      vae bot agent --llm-base-url http://127.0.0.1:8000/v1 --llm-model my-model
      vae bot agent --tool-backend --bridge 127.0.0.1:50051
      vae bot agent --sip-listen 127.0.0.1:5080
      vae bot user --llm-base-url http://127.0.0.1:8000/v1 --llm-model my-model \
          --asr openai --asr-base-url http://127.0.0.1:8001/v1 --asr-model whisper-1
    """
    import grpc

    from vae.bots.runner import BotConfig, BridgeUnreachable
    from vae.bots.sound.speech import default_synthesiser
    from vae.cli.servers.bot_brains import BrainOptions, brain_factory

    setup_logging(log_level)
    options = BrainOptions(role, llm_base_url, llm_model, llm_api_key, asr, asr_base_url, asr_model,
                           asr_api_key, asr_language, script_from, tool_backend,
                           capacity, base_latency, slow_down)  # fmt: skip
    make, kind = brain_factory(options)
    try:
        synth = default_synthesiser(tts)
    except OSError as exc:
        raise click.UsageError(str(exc)) from exc
    if sip_listen:
        from vae.cli.servers.bot_sip import run_sip_bot

        sys.exit(run_sip_bot(sip_listen, role, make, synth, sessions, name or f"vae-{kind}-{role}"))
    config = BotConfig(
        address,
        role,
        make,
        concurrency=concurrency,
        name=name or f"vae-{kind}-{role}",
        version=__version__,
        run_filter=run_filter,
        token=token,
        tls_ca=tls_ca,
        max_sessions=sessions,
        synth=synth,
        follow_redirects=follow_redirects,
    )
    try:
        sys.exit(asyncio.run(_main(config)))
    except* grpc.aio.AioRpcError as group:
        err = group.exceptions[0]
        assert isinstance(err, grpc.aio.AioRpcError)
        click.echo(
            f"error: the bridge refused the bot: {err.code().name}: {err.details()}", err=True
        )
        sys.exit(1)
    except* BridgeUnreachable as group:
        click.echo(f"error: {group.exceptions[0]}", err=True)
        sys.exit(1)
