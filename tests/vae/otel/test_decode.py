"""The official opentelemetry-proto classes run on the protobuf vae pins (7.x), and decode
what the SDK's own encoder produces; where vae exports comes from the standard variables."""

from __future__ import annotations

import time

import google.protobuf
import pytest
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import SpanContext, TraceFlags

from vae.otel.decode import DecodeError, decode
from vae.otel.endpoint import resolve, traces_url


def test_opentelemetry_proto_decodes_under_vaes_protobuf() -> None:
    assert int(google.protobuf.__version__.split(".")[0]) >= 7  # vae's floor
    now = time.time_ns()
    context = SpanContext(0xAB, 0xCD, False, TraceFlags(TraceFlags.SAMPLED))
    span = ReadableSpan(name="stt", context=context, resource=Resource.create({"a": "b"}),
                        attributes={"gen_ai.request.model": "m"}, start_time=now,
                        end_time=now + 5)  # fmt: skip
    body = encode_spans([span]).SerializeToString()
    (got,) = decode(body, "application/x-protobuf").spans
    assert (got.name, got.trace_id, got.span_id) == ("stt", f"{0xAB:032x}", f"{0xCD:016x}")
    assert got.attributes == {"gen_ai.request.model": "m"} and got.resource["a"] == "b"
    with pytest.raises(DecodeError):
        decode(b"\x0a\xff\xff\xff\xff\x0f", "application/x-protobuf")


def test_the_endpoint_comes_from_the_option_else_the_standard_variables() -> None:
    assert resolve(None, {}) is None  # off by default
    assert resolve("http://c:4318", {}) == "http://c:4318/v1/traces"
    assert resolve("http://c:4318/v1/traces/", {}) == "http://c:4318/v1/traces"
    base = {"OTEL_EXPORTER_OTLP_ENDPOINT": "https://collector:4318/"}
    assert resolve(None, base) == "https://collector:4318/v1/traces"
    signal = {**base, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://t:9/custom"}
    assert resolve(None, signal) == "http://t:9/custom"  # used as it is
    assert resolve(None, {**base, "OTEL_SDK_DISABLED": "true"}) is None
    assert resolve(None, {**base, "OTEL_TRACES_EXPORTER": "none"}) is None
    assert (
        resolve("http://mine:1", {**base, "OTEL_SDK_DISABLED": "true"}) == "http://mine:1/v1/traces"
    )
    for bad in ("collector:4318", "ftp://x", "http://"):
        with pytest.raises(ValueError, match="not an http"):
            traces_url(bad)
