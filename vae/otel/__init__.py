"""OpenTelemetry at vae's edges: OTLP/HTTP in (the agent's spans) and out (vae's trace).

Beside the contract because the bridge (which receives the agent's spans), the
scorer and the CLI (which export vae's trace) all need it and must not import
each other; it imports no product package. The OpenTelemetry libraries are the
optional ``otel`` extra (``pip install 'vae[otel]'``), imported only inside the
functions that need them (:func:`require` names the extra when they are missing):

- :mod:`.spans`: the plain span records on both sides (no library types);
- :mod:`.decode`: an OTLP ``ExportTraceServiceRequest``, protobuf or JSON,
  decoded with the official ``opentelemetry-proto`` classes, every value bounded;
- :mod:`.receiver`: ``POST /v1/traces`` on an asyncio HTTP/1.1 server (:mod:`.address`:
  its ``HOST:PORT``, and a run's options checked);
- :mod:`.endpoint`: where vae exports (``--otel-endpoint``, the standard
  ``OTEL_EXPORTER_OTLP_*`` variables);
- :mod:`.export`: vae's spans through the SDK's OTLP/HTTP exporter, bounded in
  time (a dead, failing or slow collector costs at most 2 s and one WARNING).
"""

from __future__ import annotations

EXTRA_HINT = "pip install 'vae[otel]'"


class OtelMissingError(RuntimeError):
    """The OpenTelemetry libraries are not installed (the ``otel`` extra)."""


def require() -> None:
    """Raise :class:`OtelMissingError` naming the extra when the libraries are missing."""
    try:
        import opentelemetry.exporter.otlp.proto.http.trace_exporter
        import opentelemetry.proto.collector.trace.v1.trace_service_pb2
        import opentelemetry.sdk.trace  # noqa: F401
    except ImportError as exc:
        raise OtelMissingError(
            f"OpenTelemetry is not installed ({exc.name or exc}): {EXTRA_HINT}"
        ) from None
