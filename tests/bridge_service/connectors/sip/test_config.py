"""The SIP connectors' URLs and options are checked before a run starts; secrets stay secret."""

from __future__ import annotations

import json

import pytest

from vae.bridge_service.config import RunSettings
from vae.bridge_service.connectors.base import (
    ConnectorConfig,
    ConnectorOptionsError,
    check_connector,
    connector_capabilities,
)
from vae.bridge_service.connectors.sip.options import header_value, parse_options
from vae.bridge_service.connectors.sip.refusals import stop_reason
from vae.bridge_service.connectors.sip.target import parse_target
from vae.cli.runs.run_request import connector
from vae.cli.runs.sip_opts import apply_sip, sip_code
from vae.sip.outgoing import CallFailed


def test_targets() -> None:
    t = parse_target("sip:agent@127.0.0.1:5080;transport=tcp")
    assert (t.user, t.peer.transport, t.peer.host, t.peer.port) == (
        "agent",
        "tcp",
        "127.0.0.1",
        5080,
    )
    assert parse_target("sip:bob@pbx.example.com").peer.port == 5060


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("sips:agent@h", "TLS"),
        ("sip:agent:secret@h", "no password in the URL"),
        ("sip:agent@h;transport=sctp", "transport=sctp"),
        ("ws://h:1", "is not sip:USER@HOST"),
        ("sip:agent@h:99999", "out of range"),
    ],
)
def test_bad_targets_are_refused_before_the_run(url: str, problem: str) -> None:
    with pytest.raises(ConnectorOptionsError, match=problem):
        check_connector(ConnectorConfig("sip", url))


@pytest.mark.parametrize(
    ("options", "problem"),
    [
        ({"ring_timeout_s": 0}, "ring_timeout_s"),
        ({"rtp_timeout_s": "x"}, "rtp_timeout_s"),
        ({"headers": {"Via": "x"}}, "not allowed"),
        ({"headers": {"X-Ok": "a\r\nInjected: 1"}}, "one line"),
        ({"nope": 1}, "unknown option"),
    ],
)
def test_bad_options_are_refused(options: dict[str, object], problem: str) -> None:
    with pytest.raises(ConnectorOptionsError, match=problem):
        parse_options(options)


def test_hostile_scenario_names_stay_one_header_line() -> None:
    assert header_value("a\r\nVia: evil\x00") == "a Via: evil"


def test_inbound_needs_a_listening_bridge() -> None:
    with pytest.raises(ConnectorOptionsError, match="--sip-listen"):
        check_connector(ConnectorConfig("sip-inbound", "sip-inbound:"))


def test_sip_kinds_carry_audio_only() -> None:
    caps, why = connector_capabilities("sip")
    assert caps.lacks("text", "virtual") == ["supports_text", "supports_virtual_clock"]
    assert "real time" in why


@pytest.mark.parametrize(
    ("failed", "reason"),
    [
        (CallFailed(486, "Busy Here", ""), "sip_busy"),
        (CallFailed(600, "Busy Everywhere", ""), "sip_busy"),
        (CallFailed(404, "Not Found", ""), "sip_not_found"),
        (CallFailed(408, "Request Timeout", "", ring_timeout=True), "sip_no_answer"),
        (CallFailed(603, "Decline", ""), "sip_declined"),
        (CallFailed(502, "Bad Gateway", ""), "sip_server_error"),
        (CallFailed(407, "Proxy Authentication Required", "", auth=True), "sip_auth_failed"),
        (CallFailed(488, "Not Acceptable Here", ""), "connector_failed"),
    ],
)
def test_refusals_map_to_stop_reasons(failed: CallFailed, reason: str) -> None:
    assert stop_reason(failed) == reason


def test_credentials_go_to_secrets_and_are_never_recorded() -> None:
    cfg = connector(("sip:agent@127.0.0.1",), None, "{}", None, None)
    assert cfg is not None and cfg.kind == "sip"
    apply_sip(cfg, {"sip_username": "alice", "sip_password": "pw-x", "sip_rtp_timeout": 5.0})
    assert dict(cfg.secrets) == {"sip_username": "alice", "sip_password": "pw-x"}
    assert json.loads(cfg.options_json) == {"rtp_timeout_s": 5.0}
    inbound = connector(("sip-inbound:",), None, "{}", None, None)
    assert inbound is not None and inbound.kind == "sip-inbound"
    settings = RunSettings(
        agent_connector=ConnectorConfig("sip", "sip:a@h", secrets={"sip_password": "pw-x"})
    )
    assert "pw-x" not in json.dumps(settings.to_dict()) and "pw-x" not in repr(settings)
    assert RunSettings.from_dict(settings.to_dict()).agent_connector == settings.agent_connector


def test_sip_code_from_a_stop_detail() -> None:
    assert sip_code("connector: SIP 486 Busy Here: the far end answered") == 486
    assert sip_code("no SIP here") is None


def test_without_the_extra_the_bridge_starts_and_sip_says_what_to_install() -> None:
    import subprocess
    import sys

    code = (
        "import sys; sys.modules['sipmessage'] = None\n"
        "import vae.bridge_service.server, vae.cli.runs.run_cmd, vae.cli.servers.bot_cmd\n"
        "from vae.bridge_service.connectors.base import ConnectorConfig, check_connector\n"
        "try:\n    check_connector(ConnectorConfig('sip', 'sip:a@127.0.0.1'))\n"
        "except Exception as exc:\n    print(exc)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "pip install 'vae[sip]'" in done.stdout


@pytest.mark.parametrize("argv", [["bridge", "serve", "--sip-listen", "nowhere"],
                                  ["bot", "agent", "--sip-listen", "nowhere:x"]])  # fmt: skip
def test_a_bad_listen_address_is_a_usage_error(argv: list[str]) -> None:
    from click.testing import CliRunner

    from vae.cli.main import vae

    done = CliRunner().invoke(vae, argv)
    assert done.exit_code == 2 and "HOST:PORT" in done.output, done.output
