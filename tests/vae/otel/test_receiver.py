"""vae's OTLP/HTTP receiver, fed by the official SDK exporter and by hostile senders.

Real HTTP on loopback. The SDK's own OTLP/HTTP exporter (protobuf) and an
OTLP/JSON body reach the sink decoded; then what a sender must never get away
with: a body that is not protobuf (400), the wrong content type (415), a
body over the limit (413, also once unzipped), the wrong path or method,
huge attribute values and names (cut), many spans in one request (the rest
refused, counted as partial success), spans with malformed ids (refused). The
server answers each and keeps serving.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import time
import urllib.error
import urllib.request
from collections.abc import AsyncIterator
from typing import Any

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from vae.otel import decode as limits
from vae.otel.receiver import MAX_BODY, OtlpReceiver
from vae.otel.spans import InSpan

TRACE, SPAN = bytes.fromhex("ab" * 16), bytes.fromhex("cd" * 8)


class Kept:
    def __init__(self) -> None:
        self.spans: list[InSpan] = []

    async def __call__(self, spans: list[InSpan]) -> int:
        self.spans.extend(spans)
        return 0


@pytest.fixture
async def receiver() -> AsyncIterator[tuple[OtlpReceiver, Kept]]:
    kept = Kept()
    server = OtlpReceiver(kept)
    await server.start()
    try:
        yield server, kept
    finally:
        await server.close()


def post(
    address: str, body: bytes, kind: str = "application/x-protobuf", *, path: str = "/v1/traces",
    method: str = "POST", headers: dict[str, str] | None = None,
) -> tuple[int, bytes]:  # fmt: skip
    request = urllib.request.Request(
        f"http://{address}{path}", data=body if method == "POST" else None, method=method,
        headers={"Content-Type": kind, **(headers or {})},
    )  # fmt: skip
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


async def send(
    address: str, body: bytes, kind: str = "application/x-protobuf", **kw: Any
) -> tuple[int, bytes]:
    return await asyncio.to_thread(post, address, body, kind, **kw)


def request(*spans: Span, resource: dict[str, str] | None = None) -> bytes:
    message = ExportTraceServiceRequest()
    rs = message.resource_spans.add()
    for key, value in (resource or {"service.name": "agent"}).items():
        rs.resource.attributes.add(key=key, value=AnyValue(string_value=value))
    rs.scope_spans.add().spans.extend(spans)
    return bytes(message.SerializeToString())


def span(name: str = "llm", **attributes: Any) -> Span:
    now = time.time_ns()
    out = Span(trace_id=TRACE, span_id=SPAN, name=name, start_time_unix_nano=now,
               end_time_unix_nano=now + 1_000_000, kind=Span.SPAN_KIND_CLIENT)  # fmt: skip
    for key, value in attributes.items():
        any_value = AnyValue(int_value=value) if isinstance(value, int) else AnyValue(
            string_value=str(value))  # fmt: skip
        out.attributes.append(KeyValue(key=key, value=any_value))
    return out


async def test_the_sdk_exporter_and_otlp_json_both_arrive_decoded(
    receiver: tuple[OtlpReceiver, Kept],
) -> None:
    server, kept = receiver
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    provider = TracerProvider(resource=Resource.create({"service.name": "my-agent"}))
    exporter = OTLPSpanExporter(endpoint=f"http://{server.address}/v1/traces")
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("test")

    def make() -> None:
        with tracer.start_as_current_span("turn"), tracer.start_as_current_span("llm") as llm:
            llm.set_attribute("gen_ai.usage.input_tokens", 12)
        provider.shutdown()

    await asyncio.to_thread(make)
    assert [s.name for s in kept.spans] == ["llm", "turn"]
    llm, turn = kept.spans
    assert llm.parent_span_id == turn.span_id and llm.trace_id == turn.trace_id
    assert llm.attributes == {"gen_ai.usage.input_tokens": 12}
    assert llm.service == "my-agent"

    document = {"resourceSpans": [{"resource": {"attributes": [
        {"key": "service.name", "value": {"stringValue": "json-agent"}}]},
        "scopeSpans": [{"spans": [{"traceId": "ab" * 16, "spanId": "ef" * 8,
                                   "parentSpanId": "cd" * 8, "name": "tts", "kind": 3,
                                   "startTimeUnixNano": "1700000000000000000",
                                   "endTimeUnixNano": "1700000000500000000",
                                   "attributes": [{"key": "metrics.ttfb", "value":
                                                   {"doubleValue": 0.25}}]}]}]}]}  # fmt: skip
    status, body = await send(server.address, json.dumps(document).encode(), "application/json")
    assert status == 200 and json.loads(body) == {}
    tts = kept.spans[-1]
    assert (tts.name, tts.trace_id, tts.span_id, tts.parent_span_id) == (
        "tts", "ab" * 16, "ef" * 8, "cd" * 8)  # fmt: skip
    assert tts.attributes["metrics.ttfb"] == 0.25 and tts.service == "json-agent"
    assert (tts.end_ns - tts.start_ns) == 500_000_000
    status, _ = await send(server.address, gzip.compress(request(span("gz"))),
                           headers={"Content-Encoding": "gzip"})  # fmt: skip
    assert status == 200 and kept.spans[-1].name == "gz"


async def test_hostile_requests_are_refused_with_a_clear_status(
    receiver: tuple[OtlpReceiver, Kept],
) -> None:
    server, kept = receiver
    cases = [
        (b"\xff\xfe not protobuf at all \x00" * 10, "application/x-protobuf", {}, 400),
        (b"{not json", "application/json", {}, 400),
        (b'{"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "zz"}]}]}]}',
         "application/json", {}, 400),
        (request(span()), "text/plain", {}, 415),
        (request(span()), "application/x-protobuf", {"Content-Encoding": "br"}, 415),
        (b"x" * 1000, "application/x-protobuf", {"Content-Encoding": "gzip"}, 400),
    ]  # fmt: skip
    for body, kind, headers, expected in cases:
        status, message = await send(server.address, body, kind, headers=headers)
        assert status == expected, (status, message)
        assert message  # says why
    assert (await send(server.address, request(span()), path="/v1/metrics"))[0] == 404
    assert (await send(server.address, b"", method="GET"))[0] == 405
    # A body over the limit is refused from its Content-Length, unread; so is a zip bomb.
    status, _ = await send(server.address, b"\0" * (MAX_BODY + 1))
    assert status == 413
    status, _ = await send(server.address, gzip.compress(b"\0" * (MAX_BODY + 10)),
                           headers={"Content-Encoding": "gzip"})  # fmt: skip
    assert status == 413
    assert kept.spans == []
    # Still serving.
    assert (await send(server.address, request(span("after"))))[0] == 200
    assert [s.name for s in kept.spans] == ["after"]


async def test_huge_values_are_cut_and_many_spans_bounded(
    receiver: tuple[OtlpReceiver, Kept],
) -> None:
    server, kept = receiver
    attributes = {f"k{i}": "v" for i in range(limits.MAX_ATTRIBUTES + 50)}
    big = span("<script>alert(1)</script>" * 50, text="x" * 200_000, **attributes)
    status, body = await send(server.address, request(big))
    assert status == 200
    (got,) = kept.spans
    assert len(got.name) <= limits.MAX_NAME
    assert len(got.attributes["text"]) <= limits.MAX_VALUE
    assert len(got.attributes) == limits.MAX_ATTRIBUTES
    many = [span(f"s{i}") for i in range(limits.MAX_SPANS + 25)]
    bad = Span(trace_id=b"\0" * 16, span_id=SPAN, name="zero-trace")  # a malformed id
    status, body = await send(server.address, request(*many, bad))
    assert status == 200
    answer = ExportTraceServiceResponse()
    answer.ParseFromString(body)
    assert answer.partial_success.rejected_spans == 26
    assert answer.partial_success.error_message
    assert len(kept.spans) == 1 + limits.MAX_SPANS
