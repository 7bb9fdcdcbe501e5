"""A stand-in OTLP/HTTP collector for the tests: decodes with the official classes.

No OpenTelemetry Collector binary is packaged in Debian, PyPI or npm; Arize
Phoenix installs from PyPI but brings a web stack and several LLM SDKs (over
60 packages) into the test environment. So the tests receive vae's trace
with this small server, which parses every request with
``opentelemetry-proto``'s ``ExportTraceServiceRequest`` (independently of
vae's own receiver) and keeps the spans. It can also answer 500 or answer
late, as a failing or slow collector does.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)


@dataclass
class Span:
    trace_id: str
    span_id: str
    parent_span_id: str
    name: str
    kind: int
    start_ns: int
    end_ns: int
    attributes: dict[str, Any]
    events: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    resource: dict[str, Any] = field(default_factory=dict)


def _value(v: Any) -> Any:
    which = v.WhichOneof("value")
    return None if which is None else getattr(v, which)


def _attrs(pairs: Any) -> dict[str, Any]:
    return {kv.key: _value(kv.value) for kv in pairs}


class _Handler(BaseHTTPRequestHandler):
    server: Collector

    def log_message(self, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.server.requests += 1
        if self.server.mode == "500":
            self.send_response(500)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if self.server.mode == "slow":
            self.server.release.wait(10)
        request = ExportTraceServiceRequest()
        request.ParseFromString(body)
        with self.server.lock:
            for rs in request.resource_spans:
                resource = _attrs(rs.resource.attributes)
                for ss in rs.scope_spans:
                    for s in ss.spans:
                        self.server.spans.append(
                            Span(s.trace_id.hex(), s.span_id.hex(), s.parent_span_id.hex(),
                                 s.name, s.kind, s.start_time_unix_nano, s.end_time_unix_nano,
                                 _attrs(s.attributes),
                                 [(e.name, _attrs(e.attributes)) for e in s.events], resource)
                        )  # fmt: skip
        reply = ExportTraceServiceResponse().SerializeToString()
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)


class Collector(ThreadingHTTPServer):
    """``with Collector(mode) as c: c.endpoint``; mode ``ok``, ``500`` or ``slow``."""

    daemon_threads = True

    def __init__(self, mode: str = "ok") -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.mode = mode
        self.spans: list[Span] = []
        self.requests = 0
        self.lock = threading.Lock()
        self.release = threading.Event()
        self._thread = threading.Thread(target=self.serve_forever, daemon=True)

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that gave up on a slow answer: nothing to report

    def __enter__(self) -> Collector:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release.set()
        self.shutdown()
        self.server_close()
