"""vae's pytest plugin: ``pytest --vae-suite examples/suite`` runs a scenario suite as tests.

Shipped as the ``pytest11`` entry point ``vae`` (pyproject.toml), so pytest
loads it in every run of an environment where vae is installed — also vae's
own test suite. It therefore imports nothing but pytest and the standard
library here, and does nothing but declare its options unless ``--vae-suite``
is given; then it registers :class:`vae.cli.ci.pytest_suite.VaeSuite`, which
collects, runs and reports the scenarios (docs/ci.md, "pytest").
"""

from __future__ import annotations

import os

import pytest

_RUN_HELP = "(with --vae-suite)"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("vae", "vae: run a voice-agent scenario suite as tests")
    add = group.addoption
    add(
        "--vae-suite",
        action="append",
        default=[],
        metavar="PATH",
        help="Collect each scenario of this YAML/JSON file or folder as a test item and run "
        "the selected ones as one vae run at the start of the session (repeatable).",
    )
    add(
        "--vae-db",
        default=None,
        metavar="FILE",
        help="Database the run is recorded and scored in [env VAE_DB, else vae.db].",
    )
    add(
        "--vae-bridge",
        default=None,
        metavar="ADDR",
        help="Run on the bridge at host:port, with your bots or connectors; --vae-db must be "
        "its database. Default: an in-process bridge with the reference bots.",
    )
    add(
        "--vae-token",
        default=os.environ.get("VAE_TOKEN"),
        metavar="TOKEN",
        help="Bearer token of --vae-bridge [env VAE_TOKEN].",
    )
    add(
        "--vae-tls-ca",
        default=os.environ.get("VAE_TLS_CA"),
        metavar="FILE",
        help="CA certificate of a TLS --vae-bridge [env VAE_TLS_CA].",
    )
    add(
        "--vae-agent-connector",
        action="append",
        default=[],
        metavar="URL",
        help="Dial the agent at this URL (ws:// pipecat, twilio+ws:// Twilio); repeat for a pool.",
    )
    add(
        "--vae-user-connector",
        action="append",
        default=[],
        metavar="URL",
        help="Dial the user bot at this URL instead of a gRPC bot.",
    )
    add("--vae-connector-kind", default=None, help="Connector kind [from the URL].")
    add(
        "--vae-connector-options",
        default="{}",
        metavar="JSON",
        help="Connector options as a JSON object.",
    )
    add(
        "--vae-repeat",
        type=int,
        default=None,
        metavar="K",
        help="Run each scenario K times: items NAME#1 .. NAME#K.",
    )
    add(
        "--vae-concurrency",
        type=int,
        default=None,
        metavar="N",
        help="Sessions at once [in-process: 6; a bridge: its default].",
    )
    add(
        "--vae-max-duration",
        type=float,
        default=None,
        metavar="S",
        help="Override every scenario's max duration, seconds.",
    )
    add(
        "--vae-modality",
        default=os.environ.get("VAE_MODALITY") or None,
        choices=("audio", "text"),
        help="Run the scenarios in audio or as text turns (the fast tier) "
        "[env VAE_MODALITY; audio].",
    )
    add(
        "--vae-clock",
        default=os.environ.get("VAE_CLOCK") or None,
        choices=("real", "virtual", "auto"),
        help="Session clock: real, virtual, or auto (virtual where both bots declare it) "
        "[env VAE_CLOCK; text: auto, audio: real].",
    )
    add("--vae-run-id", default="", metavar="ID", help="Name the run [a readable timestamp].")
    add("--vae-tag", action="append", default=[], metavar="TAG", help="Tag the run.")
    add(
        "--vae-tts",
        default="auto",
        choices=("auto", "espeak", "buzz"),
        help="Voice of the in-process reference bots [auto].",
    )
    add(
        "--vae-judge-base-url",
        default=os.environ.get("VAE_JUDGE_BASE_URL", ""),
        metavar="URL",
        help="OpenAI-compatible judge [env VAE_JUDGE_BASE_URL; in-process "
        "default: the stand-in judge].",
    )
    add(
        "--vae-judge-model",
        default=os.environ.get("VAE_JUDGE_MODEL", ""),
        metavar="NAME",
        help="Judge model [env VAE_JUDGE_MODEL].",
    )
    add(
        "--vae-judge-api-key",
        default=os.environ.get("VAE_JUDGE_API_KEY", ""),
        metavar="KEY",
        help="Judge API key [env VAE_JUDGE_API_KEY].",
    )
    add("--vae-no-judge", action="store_true", default=False,
        help="Score without a judge: judge signals are unscored, their items errors "
        "[env VAE_NO_JUDGE].")  # fmt: skip


def pytest_configure(config: pytest.Config) -> None:
    if not config.getoption("vae_suite", default=None):
        return
    from vae.cli.ci.pytest_suite import VaeSuite

    config.pluginmanager.register(VaeSuite(config), "vae-suite")
