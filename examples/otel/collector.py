"""A minimal OTLP/HTTP collector that prints the spans it receives, as a tree.

To see what vae exports without running Jaeger, Grafana Tempo, Langfuse or
Arize Phoenix: it serves ``POST /v1/traces`` (protobuf, as vae's exporter
sends), decodes each request with the official ``opentelemetry-proto``
classes (``pip install 'vae[otel]'``) and appends one line per span to
``--out`` (a JSON object: trace, span, parent, name, attributes, events).
``--tree`` prints such a file as an indented tree.

    python examples/otel/collector.py --port 4318 --out spans.jsonl --ready ready.txt
    python examples/otel/collector.py --tree spans.jsonl

It prints ``READY <port>`` (and writes the ``--ready`` file) once it listens;
it stops on SIGINT/SIGTERM.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import signal
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)


def _value(v: Any) -> Any:
    which = v.WhichOneof("value")
    return None if which is None else getattr(v, which)


def _attrs(pairs: Any) -> dict[str, Any]:
    return {kv.key: _value(kv.value) for kv in pairs}


class Handler(BaseHTTPRequestHandler):
    out: Path
    lock = threading.Lock()

    def log_message(self, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        request = ExportTraceServiceRequest()
        request.ParseFromString(body)
        lines = []
        for rs in request.resource_spans:
            service = _attrs(rs.resource.attributes).get("service.name", "")
            for ss in rs.scope_spans:
                for s in ss.spans:
                    lines.append(json.dumps({
                        "trace": s.trace_id.hex(), "span": s.span_id.hex(),
                        "parent": s.parent_span_id.hex(), "name": s.name, "service": service,
                        "attributes": _attrs(s.attributes),
                        "events": [{"name": e.name, "attributes": _attrs(e.attributes)}
                                   for e in s.events],
                    }))  # fmt: skip
        with self.lock, self.out.open("a", encoding="utf-8") as f:
            f.writelines(line + "\n" for line in lines)
        reply = ExportTraceServiceResponse().SerializeToString()
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)


def tree(path: Path) -> None:
    spans = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    children: dict[str, list[dict[str, Any]]] = {}
    ids = {s["span"] for s in spans}
    for s in spans:
        children.setdefault(s["parent"] if s["parent"] in ids else "", []).append(s)

    def show(span: dict[str, Any], depth: int) -> None:
        label = span["attributes"].get("vae.scenario") or span["attributes"].get(
            "gen_ai.evaluation.name", "")  # fmt: skip
        events = f" ({len(span['events'])} events)" if span["events"] else ""
        print(f"{'  ' * depth}{span['name']} {label}{events}".rstrip())
        for child in children.get(span["span"], []):
            show(child, depth + 1)

    for root in children.get("", []):
        show(root, 0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=4318)
    parser.add_argument("--out", type=Path, default=Path("spans.jsonl"))
    parser.add_argument("--ready", type=Path, default=None, help="write this file once listening")
    parser.add_argument("--tree", type=Path, default=None, help="print this file as a tree")
    args = parser.parse_args()
    if args.tree:
        tree(args.tree)
        return
    Handler.out = args.out
    server = ThreadingHTTPServer((args.host, args.port), Handler)
    signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=server.shutdown).start())
    port = server.server_address[1]
    print(f"READY {port}", flush=True)
    if args.ready:
        args.ready.write_text(f"{port}\n")
    with contextlib.suppress(KeyboardInterrupt):
        server.serve_forever()
    server.server_close()
    sys.exit(0)


if __name__ == "__main__":
    main()
