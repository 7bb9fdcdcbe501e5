"""The bridge's OpenTelemetry: each run exported when it ends, a run's own receiver.

A real bridge (``vae bridge serve --otel-endpoint``) exports a text run's trace
to a collector decoding with the official classes, and records what it sent.
The run asked for its own receiver (``vae run --otlp-receiver``): it is still
open after the run ended, and a span naming the session, sent then, is tied
to it — within the 10 s grace.
"""

from __future__ import annotations

import asyncio
import json
import time
import urllib.request
from typing import Any

import grpc

from tests.bridge_service.conftest import scenario, start_run, watch
from tests.bridge_service.lockstep_bots import StepBot
from tests.helpers import free_port
from tests.otlp_collector import Collector
from vae.bridge.v1 import bridge_pb2_grpc
from vae.common.v1 import common_pb2
from vae.recordings.read.reader import RecordingReader
from vae.recordings.read.trace_reads import agent_spans, otel_exports
from vae.recordings.traces import ids


def post_json(address: str, document: dict[str, Any]) -> int:
    request = urllib.request.Request(
        f"http://{address}/v1/traces", data=json.dumps(document).encode(), method="POST",
        headers={"Content-Type": "application/json"},
    )  # fmt: skip
    with urllib.request.urlopen(request, timeout=10) as response:
        return int(response.status)


async def test_a_run_is_exported_when_it_ends_and_its_receiver_outlives_it(
    make_bridge: Any,
) -> None:
    with Collector("ok") as collector:
        bridge = await make_bridge(settings={"otel_endpoint": f"{collector.endpoint}/v1/traces"})
        receiver = f"127.0.0.1:{free_port()}"
        async with grpc.aio.insecure_channel(bridge.address) as channel:
            stub = bridge_pb2_grpc.BridgeServiceStub(channel)
            run_id = await start_run(stub, [scenario()], modality=common_pb2.MODALITY_TEXT,
                                     inactivity_timeout_s=1, max_auto_retries=0,
                                     otlp_receiver=receiver)  # fmt: skip
            agent = StepBot(bridge.address, common_pb2.ROLE_AGENT, run_id, turns={0: "Hello."})
            user = StepBot(bridge.address, common_pb2.ROLE_USER, run_id, reply="A table, please.")
            await asyncio.gather(agent.run(), user.run(), watch(stub, run_id, 30))
            run_task = bridge.runs.runs[run_id].task
            await asyncio.wait_for(asyncio.shield(run_task), 10)  # it exports as it ends
        spans = list(collector.spans)
        names = sorted(s.name for s in spans)
        assert names[:2] == ["vae.run", "vae.session"] and set(names[2:]) == {"vae.turn"}
        assert {s.trace_id for s in spans} == {ids.run_trace_id(run_id)}

        await bridge.writer.flush()
        with RecordingReader(bridge.db_path) as reader:
            (session,) = reader.sessions(run_id)
            (export,) = otel_exports(reader, run_id)
        assert (export["spans"], export["dropped"]) == (len(spans), 0)
        # After the run: its receiver is still there, and the session still takes spans.
        now = time.time_ns()
        document = {"resourceSpans": [{"resource": {"attributes": [
            {"key": "vae.session_id", "value": {"stringValue": session.session_id}}]},
            "scopeSpans": [{"spans": [{"traceId": "12" * 16, "spanId": "34" * 8, "name": "llm",
                                       "startTimeUnixNano": str(now - 10**9),
                                       "endTimeUnixNano": str(now)}]}]}]}  # fmt: skip
        assert await asyncio.to_thread(post_json, receiver, document) == 200
        await bridge.writer.flush()
        with RecordingReader(bridge.db_path) as reader:
            (late,) = agent_spans(reader, run_id)
        assert (late.session_id, late.matched_by, late.name) == (session.session_id,
                                                                 "session_id", "llm")  # fmt: skip
