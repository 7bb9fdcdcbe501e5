"""Other languages: a Node.js agent bot and scorer client, and generic gRPC clients.

The Node programs (examples/node) load protos/ with @grpc/proto-loader — no
generated code. A full session runs with the Node bot as agent and the Python
reference bot as user through a real bridge; then Node calls Rescore and
ListScorings on a real scorer. Health and reflection are checked with clients
that contain no vae code at all.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import grpc
from google.protobuf import descriptor_pool, message_factory
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc
from grpc_reflection.v1alpha.proto_reflection_descriptor_database import (
    ProtoReflectionDescriptorDatabase,
)

from tests.conftest import require_tool
from tests.interop.conftest import NODE_DIR, require_path, start_run, watch_until_done
from vae.bots.brains.scripted import play_script
from vae.bots.runner import BotConfig, run_bots
from vae.bridge.v1 import bridge_pb2, bridge_pb2_grpc
from vae.bridge_service.server import BridgeServer
from vae.recordings.models import EventKind, Side
from vae.recordings.read.reader import RecordingReader
from vae.serving import RunningServer

SCENARIO = {
    "name": "node_change_booking",
    "domain": "restaurant",
    "max_duration": 30,
    "user": {
        "persona": {"name": "Bo"},
        "script": [{"say": "Hi, please move my booking to Friday."}],
    },
    "agent": {
        "persona": {"role": "host"},
        "resources": {"tools": {"change_booking": {"day": "the new day"}}},
        "node_bot": {
            "answers": 1,
            "tool": {"name": "change_booking", "arguments": {"day": "friday"}},
        },
    },
    "initial_state": {"booking": {"day": "monday"}},
    "reference_answer": {"tool": "change_booking", "day": "Friday"},
    "ignore_capitalization": True,
    "success_signals": ["ACTION_MATCH", "CLEAN_EXIT"],
}


def node_ready() -> str:
    node = require_tool("node", "apt-get install -y nodejs npm")
    require_path(NODE_DIR / "node_modules" / "@grpc" / "grpc-js", "scripts/ci_setup_node.sh")
    return node


async def run_node(node: str, script: str, *args: str, log: Path) -> tuple[int, str]:
    with log.open("wb") as err:
        proc = await asyncio.create_subprocess_exec(
            node, str(NODE_DIR / script), *args, stdout=asyncio.subprocess.PIPE, stderr=err
        )
        out, _ = await proc.communicate()
    return int(proc.returncode or 0), out.decode()


async def test_node_agent_session_then_node_scorer_calls(
    bridge: BridgeServer,
    bridge_stub: bridge_pb2_grpc.BridgeServiceStub,
    scorer: RunningServer,
    db_path: Path,
    tmp_path: Path,
) -> None:
    node = node_ready()
    run_id = await start_run(bridge_stub, [SCENARIO])
    user = BotConfig(bridge.address, "user", lambda: play_script, run_filter=run_id, max_sessions=1)
    async with asyncio.timeout(60):
        events, (code, out), outcomes = await asyncio.gather(
            watch_until_done(bridge_stub, run_id),
            run_node(
                node,
                "bot.js",
                "--bridge",
                bridge.address,
                "--run",
                run_id,
                "--sessions",
                "1",
                log=tmp_path / "node_bot.log",
            ),
            run_bots(user, asyncio.Event()),
        )
    assert code == 0, (tmp_path / "node_bot.log").read_text()
    ((outcome),) = json.loads(out)["sessions"]
    assert (outcome["reason"], outcome["clean_exit"]) == ("STOP_REASON_END_TOOL", True)
    assert events[-1].kind == bridge_pb2.RUN_EVENT_KIND_RUN_FINISHED and len(outcomes) == 1

    with RecordingReader(db_path) as r:
        (session,) = r.sessions(run_id)
        assert session.agent_bot["name"] == "node-example-agent"
        assert (session.stop_reason, session.clean_exit) == ("end_tool", True)
        assert session.agent_turns == 2  # the greeting and the answer
        evs = [e for e in r.events(session.session_id) if e.side is Side.AGENT]
        calls = [e.payload for e in evs if e.kind is EventKind.TOOL_CALL]
        assert len(calls) == 1 and calls[0]["name"] == "change_booking"
        assert [e.kind for e in evs].count(EventKind.TOKEN_USAGE) == 2
        final = r.final_states(session.session_id)[Side.AGENT]
        assert final.state == {
            "booking": {"day": "monday"},
            "node_bot": {"change_booking": {"day": "friday"}},
        }
        assert final.context[0]["role"] == "system"

    address = f"127.0.0.1:{scorer.port}"
    code, out = await run_node(
        node,
        "scorer_client.js",
        "--scorer",
        address,
        "--run",
        run_id,
        log=tmp_path / "node_scorer.log",
    )
    assert code == 0, (tmp_path / "node_scorer.log").read_text()
    result = json.loads(out)
    assert result["scoring"]["status"] == "complete"
    assert [p["session_id"] for p in result["progress"]] == [session.session_id]
    assert result["progress"][0]["is_successful"] == "VERDICT_PASSED"
    assert result["summary"]["success_rate"] == 1.0
    assert result["scoring"]["scoring_id"] in [s["scoring_id"] for s in result["scorings"]]

    code, _ = await run_node(
        node,
        "scorer_client.js",
        "--scorer",
        address,
        "--run",
        "nope",
        log=tmp_path / "node_err.log",
    )
    assert code == 1 and "NOT_FOUND" in (tmp_path / "node_err.log").read_text()


async def test_health_and_reflection_with_generic_clients(
    bridge: BridgeServer, scorer: RunningServer
) -> None:
    for address, service in (
        (bridge.address, "vae.bridge.v1.BridgeService"),
        (f"127.0.0.1:{scorer.port}", "vae.scorer.v1.ScorerService"),
    ):
        async with grpc.aio.insecure_channel(address) as channel:
            health = health_pb2_grpc.HealthStub(channel)
            reply = await health.Check(health_pb2.HealthCheckRequest(service=service))
            assert reply.status == health_pb2.HealthCheckResponse.SERVING
            reflect = reflection_pb2_grpc.ServerReflectionStub(channel)
            request = reflection_pb2.ServerReflectionRequest(list_services="")
            responses = [r async for r in reflect.ServerReflectionInfo(iter([request]))]
            names = {s.name for s in responses[0].list_services_response.service}
            assert {service, "grpc.health.v1.Health"} <= names

    # A client built only from what reflection serves (blocking: off the server's loop).
    reply = await asyncio.to_thread(list_runs_by_reflection, bridge.address)
    assert reply == []


def list_runs_by_reflection(address: str) -> list[object]:
    """Call BridgeService.ListRuns with descriptors fetched by reflection, no vae stubs."""
    with grpc.insecure_channel(address) as channel:
        pool = descriptor_pool.DescriptorPool(ProtoReflectionDescriptorDatabase(channel))
        method = pool.FindServiceByName("vae.bridge.v1.BridgeService").methods_by_name["ListRuns"]
        request_cls = message_factory.GetMessageClass(method.input_type)
        response_cls = message_factory.GetMessageClass(method.output_type)
        call = channel.unary_unary(
            "/vae.bridge.v1.BridgeService/ListRuns",
            request_serializer=lambda m: m.SerializeToString(),
            response_deserializer=response_cls.FromString,
        )
        return list(call(request_cls(limit=5), timeout=10).runs)
