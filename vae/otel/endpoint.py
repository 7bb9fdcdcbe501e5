"""Where vae exports its trace: ``--otel-endpoint``, else the standard OTLP variables.

``--otel-endpoint URL`` (env ``VAE_OTEL_ENDPOINT``) is a base URL, as
``OTEL_EXPORTER_OTLP_ENDPOINT`` is: vae appends ``/v1/traces`` (a URL that
already ends so is taken as it is). Without it, the standard variables turn
export on: ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` (the full URL, used as it
is) or ``OTEL_EXPORTER_OTLP_ENDPOINT`` (a base URL); ``OTEL_SDK_DISABLED=true``
or ``OTEL_TRACES_EXPORTER=none`` turn that off. Headers, compression,
certificates and the service name come from their standard variables
(``OTEL_EXPORTER_OTLP_HEADERS``, ``..._COMPRESSION``, ``..._CERTIFICATE``,
``OTEL_SERVICE_NAME``, ``OTEL_RESOURCE_ATTRIBUTES``), read by the SDK.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from urllib.parse import urlsplit

PATH = "/v1/traces"


def traces_url(base: str) -> str:
    """The traces URL of a base URL; ValueError for one that is not http(s)://HOST."""
    url = base.strip()
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f"{base!r} is not an http:// or https:// URL")
    url = url.rstrip("/")
    return url if url.endswith(PATH) else url + PATH


def resolve(option: str | None, env: Mapping[str, str] | None = None) -> str | None:
    """The URL spans go to, or None when export is off (the default)."""
    env = os.environ if env is None else env
    if option:
        return traces_url(option)
    if env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return None
    if env.get("OTEL_TRACES_EXPORTER", "").strip().lower() == "none":
        return None
    signal = env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "").strip()
    if signal:
        traces_url(signal)  # checked; used as it is
        return signal
    base = env.get("OTEL_EXPORTER_OTLP_ENDPOINT", "").strip()
    return traces_url(base) if base else None
