"""Every connector that can carry it gives the agent the session's W3C trace context.

The context is the run's trace and the session's span (``vae.recordings.traces.ids``),
the same ids vae's exported trace uses. gRPC: ``SessionStart.trace_context``;
pipecat (WebSocket and WebRTC): the RTVI client message ``vae-trace-context``, the
first message of the session; Twilio: custom parameters; SIP: a ``traceparent``
header; LiveKit: the agent process's environment.
"""

from __future__ import annotations

from tests.factories import scenario
from vae.bridge_service.config import BridgeSettings, RunSettings
from vae.bridge_service.connectors.base import ConnectorConfig
from vae.bridge_service.connectors.pipecat.messages import Requests, start_messages
from vae.bridge_service.connectors.pipecat.options import parse_options
from vae.bridge_service.connectors.sip.outbound import session_headers
from vae.bridge_service.connectors.trace_context import (
    process_environment,
    twilio_parameters,
)
from vae.bridge_service.edge.convert_out import bridge_message
from vae.bridge_service.runs.dial import dial_for
from vae.bridge_service.session.plan import SessionPlan, start_info
from vae.recordings.models import Side
from vae.recordings.scenarios.parse import scenario_from_dict
from vae.recordings.traces import ids


def plan() -> SessionPlan:
    sc = scenario_from_dict(scenario("book"), "test")
    return SessionPlan("run-7", "run-7_book_a1", sc, 1, RunSettings(), BridgeSettings())


def test_the_session_start_carries_the_trace_context_everywhere() -> None:
    p = plan()
    expected = ids.traceparent("run-7", "run-7_book_a1")
    assert expected == (f"00-{ids.run_trace_id('run-7')}-"
                        f"{ids.session_span_id('run-7_book_a1')}-01")  # fmt: skip
    assert ids.parse_traceparent(expected) == (ids.run_trace_id("run-7"),
                                                ids.session_span_id("run-7_book_a1"))  # fmt: skip
    info = start_info(p, Side.AGENT, 16000)
    assert info.traceparent == expected

    grpc = bridge_message(info).session_start
    assert (grpc.trace_context.traceparent, grpc.session.session_id) == (expected, info.session_id)

    messages = start_messages(info, parse_options({}), Requests())
    first = messages[0]  # before the prompt, before any audio
    assert first["type"] == "client-message" and first["data"]["t"] == "vae-trace-context"
    assert first["data"]["d"] == {"traceparent": expected, "tracestate": "",
                                  "session_id": "run-7_book_a1"}  # fmt: skip
    assert twilio_parameters(info) == {"traceparent": expected}

    dialled = dial_for(ConnectorConfig("sip", "sip:agent@127.0.0.1"), p)
    assert dialled.session is not None and dialled.session.traceparent == expected
    assert ("traceparent", expected) in session_headers(dialled, [])
    assert process_environment(dialled.session.session_id, dialled.session.traceparent) == {
        "VAE_SESSION_ID": "run-7_book_a1", "TRACEPARENT": expected}  # fmt: skip
    assert ids.parse_traceparent("00-" + "0" * 32 + "-" + "1" * 16 + "-01") is None
    assert ids.parse_traceparent("garbage") is None
