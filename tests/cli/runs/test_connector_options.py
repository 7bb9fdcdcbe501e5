"""``vae run`` connector and first-speaker options become the right RunOptions."""

from __future__ import annotations

from click.testing import CliRunner

from vae.cli.main import vae
from vae.cli.runs.run_request import connector as _connector


def test_kind_comes_from_the_url_and_repeats_form_a_pool() -> None:
    twilio = _connector(("twilio+ws://h:1/ws",), None, "{}", None, None)
    assert twilio is not None and twilio.kind == "twilio"
    assert not twilio.HasField("capacity")
    pool = _connector(("ws://h:1", "ws://h:2"), None, "{}", 1, 12.5)
    assert pool is not None and pool.kind == "pipecat"
    assert (pool.url, list(pool.pool_urls)) == ("ws://h:1", ["ws://h:2"])
    assert (pool.capacity, pool.connect_timeout_s) == (1, 12.5)
    forced = _connector(("ws://h:1",), "fake", "{}", None, None)
    assert forced is not None and forced.kind == "fake"
    assert _connector((), None, "{}", None, None) is None


def test_help_documents_the_new_options() -> None:
    run_help = CliRunner().invoke(vae, ["run", "--help"]).output
    for text in ("--first-speaker", "--first-speaker-timeout", "--connector-capacity",
                 "--connect-timeout", "twilio+ws://"):  # fmt: skip
        assert text in run_help, text
    bot_help = CliRunner().invoke(vae, ["bot", "--help"]).output
    assert "--tls-ca" in bot_help and "VAE_TLS_CA" in bot_help
    bad = CliRunner().invoke(vae, ["run", "x", "--first-speaker", "nobody"])
    assert bad.exit_code == 2


def test_livekit_and_webrtc_kinds_come_from_the_url() -> None:
    import os
    from pathlib import Path

    livekit = _connector(("livekit:examples/livekit_agent/agent.py",), None, "{}", None, None)
    assert livekit is not None and livekit.kind == "livekit"
    # The bridge starts the agent: the path goes absolute, from where vae run was started.
    assert livekit.url == f"livekit:{Path(os.getcwd(), 'examples/livekit_agent/agent.py')}"
    webrtc = _connector(("webrtc+http://h:7860/api/offer",), None, "{}", None, None)
    assert webrtc is not None and webrtc.kind == "webrtc"
    assert webrtc.url == "webrtc+http://h:7860/api/offer"
    run_help = CliRunner().invoke(vae, ["run", "--help"]).output
    assert "livekit:agent.py" in run_help and "webrtc+http://" in run_help
