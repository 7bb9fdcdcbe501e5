"""An OTLP ``ExportTraceServiceRequest`` (protobuf or JSON) into bounded :class:`InSpan` s.

Decoded with the official ``opentelemetry-proto`` classes. Their generated
code carries no runtime-version check and runs on vae's protobuf 7 (the
package allows ``protobuf<8``); ``tests/otel/test_decode.py`` decodes with
them under the protobuf vae pins, so a release that breaks this fails there.

OTLP/JSON differs from protobuf's own JSON mapping in one place: trace and
span ids are hex, not base64. They are turned into base64 before
``json_format`` reads the document, so one decoder serves both encodings.

A sender is never trusted: names, keys and values are cut to fixed sizes, a
span keeps at most :data:`MAX_ATTRIBUTES` attributes, a request yields at
most :data:`MAX_SPANS` spans (the rest are counted as rejected), and a span
with a malformed id or no name is rejected, not guessed.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass
from typing import Any

from vae.otel.spans import Attributes, InSpan

#: Spans one request may carry; more are rejected (counted, not stored).
MAX_SPANS = 2000
#: Attributes kept per span (and per resource); the rest are dropped.
MAX_ATTRIBUTES = 64
#: Characters kept of a string value, a span name and an attribute key.
MAX_VALUE = 1024
MAX_NAME = 200
MAX_KEY = 128
#: Items kept of an array value.
MAX_ITEMS = 16
_KINDS = {0: "", 1: "internal", 2: "server", 3: "client", 4: "producer", 5: "consumer"}
_STATUS = {0: "", 1: "ok", 2: "error"}


class DecodeError(ValueError):
    """The body is not an OTLP trace request (the receiver answers 400)."""


@dataclass(frozen=True)
class Decoded:
    spans: list[InSpan]
    #: Spans refused (malformed ids, over :data:`MAX_SPANS`), reported as partial success.
    rejected: int
    why: str = ""


def _cut(text: str, size: int) -> str:
    return text if len(text) <= size else text[: size - 1] + "…"


def _value(v: Any, depth: int = 0) -> Any:
    which = v.WhichOneof("value")
    if which is None:
        return None
    if which == "string_value":
        return _cut(v.string_value, MAX_VALUE)
    if which in ("bool_value", "int_value", "double_value"):
        return getattr(v, which)
    if which == "bytes_value":
        return _cut(v.bytes_value.hex(), MAX_VALUE)
    if depth >= 2:
        return "…"
    if which == "array_value":
        return [_value(x, depth + 1) for x in list(v.array_value.values)[:MAX_ITEMS]]
    items = list(v.kvlist_value.values)[:MAX_ITEMS]
    text = json.dumps({_cut(kv.key, MAX_KEY): _value(kv.value, depth + 1) for kv in items})
    return _cut(text, MAX_VALUE)


def attributes(pairs: Any) -> Attributes:
    out: Attributes = {}
    for kv in list(pairs)[:MAX_ATTRIBUTES]:
        out[_cut(kv.key, MAX_KEY)] = _value(kv.value)
    return out


def _hex(raw: bytes, size: int) -> str | None:
    if len(raw) != size or not any(raw):
        return None
    return raw.hex()


def _b64_ids(node: Any) -> None:
    """OTLP/JSON's hex ids -> base64, in place, so ``json_format`` reads them."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("traceId", "spanId", "parentSpanId") and isinstance(value, str):
                try:
                    node[key] = base64.b64encode(bytes.fromhex(value)).decode()
                except ValueError:
                    raise DecodeError(f"{key} {value[:40]!r} is not hex") from None
            else:
                _b64_ids(value)
    elif isinstance(node, list):
        for item in node:
            _b64_ids(item)


def parse(body: bytes, content_type: str) -> Any:
    """The request message of ``body``; :class:`DecodeError` when it is none."""
    from google.protobuf import json_format
    from google.protobuf.message import DecodeError as ProtoDecodeError
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    request = ExportTraceServiceRequest()
    if content_type == "application/json":
        try:
            document = json.loads(body.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError) as exc:
            raise DecodeError(f"the body is not JSON: {str(exc)[:200]}") from None
        if not isinstance(document, dict):
            raise DecodeError("the body is not an OTLP/JSON object")
        _b64_ids(document)
        try:
            json_format.ParseDict(document, request, ignore_unknown_fields=True)
        except (json_format.ParseError, binascii.Error, ValueError, RecursionError) as exc:
            raise DecodeError(f"not an OTLP trace request: {str(exc)[:200]}") from None
        return request
    try:
        request.ParseFromString(body)
    except (ProtoDecodeError, RecursionError, ValueError) as exc:
        raise DecodeError(f"the body is not an OTLP protobuf message: {str(exc)[:200]}") from None
    return request


def decode(body: bytes, content_type: str) -> Decoded:
    """Every span of the request, bounded; at most :data:`MAX_SPANS`."""
    request = parse(body, content_type)
    spans: list[InSpan] = []
    rejected = 0
    why = ""
    for rs in request.resource_spans:
        resource = attributes(rs.resource.attributes)
        for ss in rs.scope_spans:
            for s in ss.spans:
                if len(spans) >= MAX_SPANS:
                    rejected += 1
                    why = f"more than {MAX_SPANS} spans in one request"
                    continue
                trace_id, span_id = _hex(s.trace_id, 16), _hex(s.span_id, 8)
                parent = _hex(s.parent_span_id, 8) if s.parent_span_id else ""
                if trace_id is None or span_id is None or parent is None or not s.name:
                    rejected += 1
                    why = "a span had a malformed trace, span or parent id, or no name"
                    continue
                spans.append(
                    InSpan(
                        trace_id=trace_id,
                        span_id=span_id,
                        parent_span_id=parent,
                        name=_cut(s.name, MAX_NAME),
                        kind=_KINDS.get(s.kind, ""),
                        start_ns=int(s.start_time_unix_nano),
                        end_ns=max(int(s.end_time_unix_nano), int(s.start_time_unix_nano)),
                        status=_STATUS.get(s.status.code, ""),
                        attributes=attributes(s.attributes),
                        resource=resource,
                    )
                )
    return Decoded(spans, rejected, why)


def response(rejected: int, why: str, content_type: str) -> bytes:
    """The ``ExportTraceServiceResponse`` body (with partial success when spans were refused)."""
    from google.protobuf import json_format
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceResponse,
    )

    message = ExportTraceServiceResponse()
    if rejected:
        message.partial_success.rejected_spans = rejected
        message.partial_success.error_message = why
    if content_type == "application/json":
        return json.dumps(json_format.MessageToDict(message)).encode()
    return bytes(message.SerializeToString())
