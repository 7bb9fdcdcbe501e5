"""Bad OpenTelemetry options are refused with what is wrong; a missing extra is named."""

from __future__ import annotations

import sys

import pytest
from click.testing import CliRunner

from vae.bridge_service.config import RunSettings
from vae.cli.main import vae
from vae.otel import OtelMissingError, require
from vae.otel.address import parse_hostport


def test_addresses_and_run_options_are_checked() -> None:
    assert parse_hostport("127.0.0.1:4318") == ("127.0.0.1", 4318)
    assert parse_hostport("[::1]:0") == ("::1", 0)
    for bad in ("4318", "host:", ":4318", "host:99999", "host:port"):
        with pytest.raises(ValueError, match="is not HOST:PORT"):
            parse_hostport(bad)
    with pytest.raises(ValueError, match=r"options\.otlp_receiver"):
        RunSettings(otlp_receiver="nowhere").validate()
    with pytest.raises(ValueError, match=r"options\.otel_endpoint"):
        RunSettings(otel_endpoint="collector:4318").validate()
    RunSettings(otlp_receiver="127.0.0.1:0", otel_endpoint="http://c:4318").validate()


def test_a_missing_extra_names_the_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "opentelemetry.sdk.trace", None)  # as if not installed
    with pytest.raises(OtelMissingError, match=r"pip install 'vae\[otel\]'"):
        require()
    with pytest.raises(ValueError, match=r"options.otlp_receiver: .*vae\[otel\]"):
        RunSettings(otlp_receiver="127.0.0.1:0").validate()
    result = CliRunner().invoke(vae, ["rescore", "--run", "x", "--no-judge",
                                      "--otel-endpoint", "http://127.0.0.1:9"])  # fmt: skip
    assert result.exit_code == 2 and "vae[otel]" in result.output


def test_the_cli_refuses_malformed_options_with_exit_2() -> None:
    runner = CliRunner()
    bad = [
        (["run", "x.yaml", "--otlp-receiver", "nowhere"], "--otlp-receiver"),
        (["rescore", "--run", "x", "--otel-endpoint", "ftp://c"], "--otel-endpoint"),
        (["runs", "show", "x", "--prices", "/no/such/prices.toml"], "--prices"),
    ]
    for args, option in bad:
        result = runner.invoke(vae, args)
        assert result.exit_code == 2, (args, result.output)
        assert option in result.output
