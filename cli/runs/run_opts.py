"""``vae run``'s options on how each session runs, and on the connectors that reach the bots.

Why apart from ``run_cmd`` (the command, its checks and how a failed call is
reported): these are the run's settings as the user types them — concurrency,
durations, retries, seeds, tiers, the phone line, and which bots are dialled
and how — and they change with what a run can be told, one option at a
time. Each decorator adds its options in the order ``vae run --help`` lists
them. Nothing heavy is imported at module level (the CLI starts instantly).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])


def session_options(func: F) -> F:
    """How each session runs: concurrency, limits, retries, seeds, tiers, the phone line."""
    for option in reversed(
        [
            click.option("--concurrency", type=click.IntRange(min=1), help="Sessions at once [4]."),
            click.option(
                "--max-duration",
                type=click.FloatRange(min=0.1),
                help="Override every scenario's max duration, seconds.",
            ),
            click.option(
                "--inactivity-timeout",
                type=click.FloatRange(min=0.1),
                help="Seconds of silence on both sides that end a session [120].",
            ),
            click.option(
                "--end-policy",
                type=click.Choice(["tool-only", "valid-terminal-state"]),
                help="What counts as a clean exit [tool-only].",
            ),
            click.option(
                "--min-agent-turns",
                type=click.IntRange(min=0),
                help="Agent responses below which a session is stalled [0].",
            ),
            click.option(
                "--retry-stale/--no-retry-stale",
                default=None,
                help="Retry attempts with 0 conversation turns [on].",
            ),
            click.option(
                "--retry-insufficient/--no-retry-insufficient",
                default=None,
                help="Retry attempts with fewer than --min-agent-turns [off].",
            ),
            click.option(
                "--max-retries", type=click.IntRange(min=0), help="Automatic retries [1]."
            ),
            click.option(
                "--retry-backoff", type=click.FloatRange(min=0), help="Seconds before a retry [5]."
            ),
            click.option(
                "--pairing-timeout",
                type=click.FloatRange(min=0.1),
                help="Seconds a session waits for both bots [60].",
            ),
            click.option(
                "--seed",
                type=click.IntRange(0, 2**64 - 1),
                help="Seed for noise and other randomness, 0..2^64-1 [0].",
            ),
            click.option(
                "--repeat",
                type=click.IntRange(1, 1000),
                help="Run each scenario K times (trials NAME#1..#K, own seeds) for pass^k [1].",
            ),
            click.option("--tag", "tags", multiple=True, help="Tag the run (repeatable)."),
            click.option(
                "--share-transcripts",
                is_flag=True,
                default=None,
                help="Forward each bot's transcripts to its peer.",
            ),
            click.option(
                "--tool-backend",
                is_flag=True,
                default=None,
                envvar="VAE_TOOL_BACKEND",
                help="Serve each session's agent tools from a backend the bridge owns (HTTP, "
                "OpenAPI, MCP; needs the bridge's tools extra) and record every call (env "
                "VAE_TOOL_BACKEND).",
            ),
            click.option(
                "--first-speaker",
                type=click.Choice(["agent", "user"]),
                help="Who opens every call, overriding the scenarios' first_speaker [agent].",
            ),
            click.option(
                "--first-speaker-timeout",
                type=click.FloatRange(min=0.1),
                help="Seconds of silence from the expected first speaker "
                "that end a session (first_speaker_silent) [10].",
            ),
            click.option(
                "--modality",
                type=click.Choice(["audio", "text"]),
                envvar="VAE_MODALITY",
                help="How the bots talk: audio, or whole text turns (the fast tier: bots must "
                "declare text support) [audio]. Env VAE_MODALITY.",
            ),
            click.option(
                "--clock",
                type=click.Choice(["real", "virtual", "auto"]),
                envvar="VAE_CLOCK",
                help="The session clock: real time; the virtual lock-step clock that runs as "
                "fast as both bots keep up (bots must declare it); or auto: virtual for each "
                "session whose two bots declare it, else real (recorded per session) "
                "[text: auto; audio: real]. Env VAE_CLOCK.",
            ),
            click.option(
                "--line",
                envvar="VAE_LINE",
                callback=lambda ctx, param, value: line_conditions(value),
                help="Phone-line conditions for every scenario, over each one's user.line, as "
                "FIELD=VALUE,... (codec=mulaw8k, packet_loss=0.1, packet_loss_burst=3, "
                "jitter_ms=20, gain_db=-6, clipping=-3, white_noise_db=-40); seeded by --seed. "
                "Env VAE_LINE.",
            ),
        ]
    ):
        func = option(func)
    return func


def connector_options(func: F) -> F:
    """Which bots the run dials instead of waiting for gRPC bots, and how."""
    for option in reversed(
        [
            click.option(
                "--user-connector",
                multiple=True,
                help="Dial the user bot at this URL instead of waiting for a gRPC bot "
                "(e.g. ws://127.0.0.1:8766). Repeat for a pool of bot instances.",
            ),
            click.option(
                "--agent-connector",
                multiple=True,
                help="Dial the agent bot at this URL (ws://127.0.0.1:8765: pipecat; "
                "twilio+ws://127.0.0.1:8765/ws: Twilio Media Streams; sip:USER@HOST[:PORT]"
                "[;transport=udp|tcp]: call a SIP agent; sip-inbound: take the agent's SIP call "
                "at the bridge's --sip-listen address; webrtc+http://127.0.0.1:7860/api/offer: "
                "pipecat SmallWebRTC; livekit:agent.py: a LiveKit agent, started per session). "
                "Repeat for a pool.",
            ),
            click.option(
                "--connector-kind",
                default=None,
                help="Connector kind for --user-connector/--agent-connector "
                "[from the URL: twilio+ws:// is twilio, sip: is sip, sip-inbound: is sip-inbound,"
                " livekit: livekit, webrtc+http:// webrtc, else pipecat].",
            ),
            click.option(
                "--connector-capacity",
                type=click.IntRange(min=1),
                help="Sessions one connector endpoint holds at once [1]; more wait for a free one.",
            ),
            click.option(
                "--connect-timeout",
                type=click.FloatRange(min=0.1),
                help="Seconds a refused connector connection is retried before the attempt "
                "fails (connector_failed) [30].",
            ),
            click.option(
                "--connector-options", default="{}", help="Connector options as a JSON object."
            ),
        ]
    ):
        func = option(func)
    return func


def line_conditions(value: str | None) -> dict[str, Any] | None:
    """``--line FIELD=VALUE,...`` checked here (exit 2 naming the field), or None."""
    if not value:
        return None
    from vae.recordings.scenarios.line import LineConditions, merge, parse_option

    try:
        fields = parse_option(value)
        merge(LineConditions(), fields)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--line") from None
    return fields
