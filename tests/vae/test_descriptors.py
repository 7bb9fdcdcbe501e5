"""The contract's services and methods exist with the documented streaming shapes."""

from __future__ import annotations

import pytest
from google.protobuf.descriptor import FieldDescriptor

from vae.bridge.v1 import bridge_pb2
from vae.common.v1 import common_pb2
from vae.scorer.v1 import scorer_pb2

# method -> (client streaming, server streaming)
BRIDGE = {
    "Converse": (True, True),
    "StartRun": (False, False),
    "WatchRun": (False, True),
    "GetRun": (False, False),
    "ListRuns": (False, False),
    "CancelRun": (False, False),
}
SCORER = {
    "Rescore": (False, True),
    "GetScoring": (False, False),
    "ListScorings": (False, False),
    "CompareScorings": (False, False),
    "GetReport": (False, False),
}


@pytest.mark.parametrize(
    ("module", "service", "methods"),
    [
        (bridge_pb2, "vae.bridge.v1.BridgeService", BRIDGE),
        (scorer_pb2, "vae.scorer.v1.ScorerService", SCORER),
    ],
)
def test_service_methods_and_shapes(
    module: object, service: str, methods: dict[str, tuple[bool, bool]]
) -> None:
    desc = module.DESCRIPTOR.services_by_name[service.rsplit(".", 1)[1]]  # type: ignore[attr-defined]
    assert desc.full_name == service
    got = {m.name: (m.client_streaming, m.server_streaming) for m in desc.methods}
    assert got == methods
    for m in desc.methods:
        # buf STANDARD: XRequest -> XResponse, or the documented stream message types
        if m.name != "Converse":
            assert m.input_type.name == f"{m.name}Request"
            assert m.output_type.name == f"{m.name}Response"


def test_converse_message_types() -> None:
    method = bridge_pb2.DESCRIPTOR.services_by_name["BridgeService"].methods_by_name["Converse"]
    assert method.input_type.name == "BotMessage"
    assert method.output_type.name == "BridgeMessage"
    bot = {f.name for f in bridge_pb2.BotMessage.DESCRIPTOR.oneofs_by_name["message"].fields}
    assert bot == {"join", "audio", "event", "final_state", "text", "clock_ack"}
    bridge = {f.name for f in bridge_pb2.BridgeMessage.DESCRIPTOR.oneofs_by_name["message"].fields}
    assert {"joined", "session_start", "audio", "state_sync", "session_ending", "session_ended",
            "peer_event", "wait_timeout", "text", "clock_tick"} <= bridge  # fmt: skip


def test_session_start_carries_each_side_needs() -> None:
    fields = set(bridge_pb2.SessionStart.DESCRIPTOR.fields_by_name)
    assert {"system_prompt", "tools_json", "initial_state_json",
            "initialization_actions_json", "side_config_json", "session"} <= fields  # fmt: skip


def test_final_state_is_chunked() -> None:
    fs = bridge_pb2.FinalState.DESCRIPTOR.fields_by_name
    assert fs["state"].message_type.name == "JsonChunk"
    assert fs["context"].message_type.name == "JsonChunk"
    chunk = common_pb2.JsonChunk.DESCRIPTOR.fields_by_name
    assert chunk["data"].type == FieldDescriptor.TYPE_BYTES and "last" in chunk


def test_audio_chunk_uses_integer_clocks() -> None:
    f = common_pb2.AudioChunk.DESCRIPTOR.fields_by_name
    assert f["sent_unix_nanos"].type == FieldDescriptor.TYPE_INT64
    assert f["sample_offset"].type == FieldDescriptor.TYPE_INT64
    assert f["sequence"].type == FieldDescriptor.TYPE_UINT64


def test_bot_events_cover_the_contract() -> None:
    events = {f.name for f in common_pb2.BotEvent.DESCRIPTOR.oneofs_by_name["event"].fields}
    assert events == {"transcript", "tool_call", "token_usage", "speech_started",
                      "speech_stopped", "metric", "end_conversation", "log", "dtmf"}  # fmt: skip


@pytest.mark.parametrize("module", [common_pb2, bridge_pb2, scorer_pb2])
def test_enums_start_unspecified(module: object) -> None:
    for enum in module.DESCRIPTOR.enum_types_by_name.values():  # type: ignore[attr-defined]
        zero = enum.values_by_number[0].name
        assert zero.endswith("_UNSPECIFIED"), enum.name
