"""pipecat's own OpenTelemetry tracing for the example bot, joined to vae's trace.

``--trace`` turns on what a pipecat app turns on to be traced: pipecat's
``setup_tracing`` with the OTLP/HTTP exporter (it sends to
``OTEL_EXPORTER_OTLP_ENDPOINT`` + ``/v1/traces``, or to ``--otlp-endpoint``),
and ``PipelineTask(enable_tracing=True)``, whose ``TurnTraceObserver`` makes
the ``conversation`` and ``turn`` spans. The bot's stand-in services report
spans the way pipecat's services do: the "LLM" through pipecat's own
``@traced_llm`` decorator, "STT" and "TTS" with pipecat's span attribute
helpers (model, transcript, text, character count, TTFB), all under the turn
(or conversation) span of pipecat's tracing context.

Stock pipecat starts its ``conversation`` span with no parent. vae sends each
session's W3C context as the RTVI client message ``vae-trace-context``
(``{traceparent, tracestate, session_id}``); :func:`adopt` ends the previous
conversation span and starts the next one as a child of that context, so
every span of the session joins vae's trace. With ``--ignore-trace-context``
the bot behaves as stock pipecat: a new conversation per session, in a trace
of its own; vae then ties its spans by time window and the ``vae.endpoint``
resource attribute (set ``OTEL_RESOURCE_ATTRIBUTES=vae.endpoint=ws://HOST:PORT``).
"""

from __future__ import annotations

import argparse
import os
import time
from typing import Any

from pipecat.utils.tracing.setup import is_tracing_available, setup_tracing

STT_MODEL, LLM_MODEL, TTS_MODEL = "tone-stt-1", "tone-1", "tone-tts-1"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--trace",
        action="store_true",
        help="export pipecat's OpenTelemetry spans over OTLP/HTTP (OTEL_EXPORTER_OTLP_ENDPOINT)",
    )
    parser.add_argument(
        "--otlp-endpoint",
        default="",
        metavar="URL",
        help="with --trace: the base URL to export to (default: OTEL_EXPORTER_OTLP_ENDPOINT)",
    )
    parser.add_argument(
        "--ignore-trace-context",
        action="store_true",
        help="as stock pipecat: do not adopt the vae-trace-context vae sends",
    )


def start(args: argparse.Namespace) -> bool:
    """Set up pipecat's tracing with the OTLP/HTTP exporter; False when not asked."""
    if not args.trace:
        return False
    if not is_tracing_available():
        raise SystemExit("--trace needs pipecat-ai[tracing] (scripts/setup_pipecat_env.sh)")
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    endpoint = args.otlp_endpoint.rstrip("/")
    exporter = OTLPSpanExporter(endpoint=f"{endpoint}/v1/traces" if endpoint else None)
    name = os.environ.get("OTEL_SERVICE_NAME", "pipecat-example-bot")
    return setup_tracing(service_name=name, exporter=exporter)


def adopt(task: Any, data: Any, ignore: bool) -> dict[str, Any]:
    """Start this session's conversation span under vae's context (``vae-trace-context``)."""
    observer = task.turn_trace_observer
    if observer is None:
        return {"ok": False, "tracing": "off"}
    from opentelemetry import context
    from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

    body = data if isinstance(data, dict) else {}
    observer.end_conversation_tracing()
    carrier = {"traceparent": str(body.get("traceparent", ""))}
    if body.get("tracestate"):
        carrier["tracestate"] = str(body["tracestate"])
    token = None if ignore else context.attach(TraceContextTextMapPropagator().extract(carrier))
    try:
        observer.start_conversation_tracing(str(body.get("session_id") or "") or None)
    finally:
        if token is not None:
            context.detach(token)
    return {"ok": True, "adopted": not ignore}


def end(task: Any) -> None:
    """End the session's conversation span, so it is exported now, not at exit."""
    observer = getattr(task, "turn_trace_observer", None)
    if observer is not None:
        observer.end_conversation_tracing()


def parent_context(processor: Any) -> Any:
    tracing = getattr(processor, "_tracing_context", None)
    if tracing is None:
        return None
    return tracing.get_turn_context() or tracing.get_conversation_context()


def stt_span(processor: Any, started_ns: int, transcript: str) -> None:
    """The stand-in recogniser's span: from the utterance's start until it was heard."""
    if not getattr(processor, "_tracing_enabled", False):
        return
    from opentelemetry import trace
    from pipecat.utils.tracing.service_attributes import add_stt_span_attributes

    span = trace.get_tracer("pipecat").start_span(
        "stt", context=parent_context(processor), start_time=started_ns
    )
    add_stt_span_attributes(
        span, service_name="ToneSTTService", model=STT_MODEL, transcript=transcript,
        is_final=True, language="en", ttfb=0.0,
    )  # fmt: skip
    span.set_attribute("metrics.audio_seconds", round((time.time_ns() - started_ns) / 1e9, 3))
    span.end()


class TtsSpan:
    """The stand-in TTS's span: from the text until its last audio; TTFB at the first."""

    def __init__(self, processor: Any, text: str) -> None:
        self.span: Any = None
        self.started = time.monotonic()
        if not getattr(processor, "_tracing_enabled", False):
            return
        from opentelemetry import trace
        from pipecat.utils.tracing.service_attributes import add_tts_span_attributes

        self.span = trace.get_tracer("pipecat").start_span("tts", context=parent_context(processor))
        add_tts_span_attributes(
            self.span, service_name="ToneTTSService", model=TTS_MODEL, voice_id="tone-440",
            text=text, character_count=len(text),
        )  # fmt: skip

    def first_audio(self) -> None:
        if self.span is not None:
            self.span.set_attribute("metrics.ttfb", round(time.monotonic() - self.started, 4))

    def end(self) -> None:
        if self.span is not None:
            self.span.end()
            self.span = None
