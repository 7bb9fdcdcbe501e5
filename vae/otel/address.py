"""``HOST:PORT`` of an OTLP receiver, checked before anything listens on it."""

from __future__ import annotations


def parse_hostport(text: str) -> tuple[str, int]:
    """``(host, port)``; ValueError naming what is wrong. Port 0 picks a free port."""
    value = text.strip()
    host, sep, port = value.rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"{text!r} is not HOST:PORT (for example 127.0.0.1:4318)")
    return host, int(port)


def check_run_options(otlp_receiver: str, otel_endpoint: str) -> None:
    """A run's OpenTelemetry options: well formed, and the extra installed (ValueError)."""
    from vae.otel import OtelMissingError, require
    from vae.otel.endpoint import traces_url

    if otlp_receiver:
        try:
            parse_hostport(otlp_receiver)
        except ValueError as exc:
            raise ValueError(f"options.otlp_receiver: {exc}") from None
    if otel_endpoint:
        try:
            traces_url(otel_endpoint)
        except ValueError as exc:
            raise ValueError(f"options.otel_endpoint: {exc}") from None
    try:
        require()
    except OtelMissingError as exc:
        name = "otlp_receiver" if otlp_receiver else "otel_endpoint"
        raise ValueError(f"options.{name}: the bridge cannot: {exc}") from None
