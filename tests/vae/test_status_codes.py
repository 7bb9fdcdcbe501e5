"""Every RPC of both services × each class of bad input → the documented status.

The table here is the one in ``docs/errors.md``: a client mistake gets a
specific code naming what was wrong, never INTERNAL or UNKNOWN. Both servers
run for real on loopback, with a bearer token, over one SQLite file holding
two runs (so ``2024-06-01`` is an ambiguous prefix) and a scoring of each.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import grpc
import pytest

from tests.bridge_service.conftest import TEST_SETTINGS
from tests.factories import SessionSpec, conversation, scenario, write_run
from vae.bridge.v1 import bridge_pb2, bridge_pb2_grpc
from vae.bridge_service.server import BridgeServer
from vae.common.v1 import common_pb2
from vae.scorer.v1 import scorer_pb2, scorer_pb2_grpc
from vae.scorer_service.config import ScoringConfig
from vae.scorer_service.edge.server import start_scorer
from vae.scorer_service.scoring.rescore import rescore

TOKEN = "s3cret-token"
RUN_A, RUN_B = "2024-06-01T10-00-00", "2024-06-01T11-00-00"
C = grpc.StatusCode
BIG = "x" * (5 * 1024 * 1024)


class World:
    def __init__(self, bridge: BridgeServer, scorer_address: str, scorings: dict[str, str]):
        self.bridge = bridge
        self.scorer_address = scorer_address
        self.scorings = scorings


@pytest.fixture
async def world(tmp_path: Path) -> AsyncIterator[World]:
    db = tmp_path / "vae.db"
    scorings: dict[str, str] = {}
    for run_id in (RUN_A, RUN_B):
        await write_run(db, [scenario("s1")], [SessionSpec("s1", turns=conversation(1))],
                        run_id=run_id)  # fmt: skip
        scorings[run_id] = (await rescore(db, run_id, ScoringConfig())).scoring.scoring_id
    bridge = BridgeServer(db, replace(TEST_SETTINGS), token=TOKEN)
    await bridge.start()
    scorer = await start_scorer(db, token=TOKEN)
    try:
        yield World(bridge, f"127.0.0.1:{scorer.port}", scorings)
    finally:
        await scorer.stop(0.5)
        await bridge.stop()


AUTH = (("authorization", f"Bearer {TOKEN}"),)
B = bridge_pb2
S = scorer_pb2
SRC = [B.ScenarioSource(inline='{"name": "ok"}')]

#: (rpc, case, request factory (gets the World), expected code, words in the details)
Case = tuple[str, str, Callable[[World], Any], grpc.StatusCode, str]
BRIDGE: list[Case] = [
    ("StartRun", "bad-id", lambda w: B.StartRunRequest(sources=SRC, run_id="../evil-x"),
     C.INVALID_ARGUMENT, "run_id"),
    ("StartRun", "bad-tag", lambda w: B.StartRunRequest(
        sources=SRC, options=B.RunOptions(tags=["a b"])), C.INVALID_ARGUMENT, "tags[0]"),
    ("StartRun", "bad-scenario", lambda w: B.StartRunRequest(
        sources=[B.ScenarioSource(inline='{"name": "../up"}')]), C.INVALID_ARGUMENT, "name"),
    ("StartRun", "bad-option", lambda w: B.StartRunRequest(
        sources=SRC, options=B.RunOptions(frame_ms=1)), C.INVALID_ARGUMENT, "frame_ms"),
    ("StartRun", "taken-id", lambda w: B.StartRunRequest(sources=SRC, run_id=RUN_A),
     C.ALREADY_EXISTS, RUN_A),
    ("StartRun", "unknown-resume", lambda w: B.StartRunRequest(resume="1999"),
     C.NOT_FOUND, "1999"),
    ("StartRun", "ambiguous-resume", lambda w: B.StartRunRequest(resume="2024-06-01"),
     C.INVALID_ARGUMENT, "matches 2 runs"),
    ("StartRun", "oversized", lambda w: B.StartRunRequest(sources=SRC, run_id=BIG),
     C.RESOURCE_EXHAUSTED, ""),
    ("WatchRun", "bad-id", lambda w: B.WatchRunRequest(run_id="../x"), C.INVALID_ARGUMENT, "run"),
    ("WatchRun", "unknown", lambda w: B.WatchRunRequest(run_id="1999"), C.NOT_FOUND, "1999"),
    ("WatchRun", "ambiguous", lambda w: B.WatchRunRequest(run_id="2024-06-01"),
     C.INVALID_ARGUMENT, "matches 2 runs"),
    ("GetRun", "bad-id", lambda w: B.GetRunRequest(run_id="a b"), C.INVALID_ARGUMENT, "run"),
    ("GetRun", "unknown", lambda w: B.GetRunRequest(run_id="1999"), C.NOT_FOUND, "1999"),
    ("GetRun", "ambiguous", lambda w: B.GetRunRequest(run_id="2024"), C.INVALID_ARGUMENT,
     "matches 2 runs"),
    ("ListRuns", "bad-prefix", lambda w: B.ListRunsRequest(prefix="../"), C.INVALID_ARGUMENT,
     "prefix"),
    ("CancelRun", "bad-id", lambda w: B.CancelRunRequest(run_id="ünï"), C.INVALID_ARGUMENT, "run"),
    ("CancelRun", "unknown", lambda w: B.CancelRunRequest(run_id="1999"), C.NOT_FOUND, "1999"),
    ("CancelRun", "empty", lambda w: B.CancelRunRequest(), C.NOT_FOUND, ""),
]  # fmt: skip
SCORER: list[Case] = [
    ("Rescore", "bad-id", lambda w: S.RescoreRequest(run="../x"), C.INVALID_ARGUMENT, "run"),
    ("Rescore", "unknown", lambda w: S.RescoreRequest(run="1999"), C.NOT_FOUND, "1999"),
    ("Rescore", "ambiguous", lambda w: S.RescoreRequest(run="2024-06-01"), C.INVALID_ARGUMENT,
     "matches 2 runs"),
    ("Rescore", "bad-config", lambda w: S.RescoreRequest(
        run=RUN_A, config=S.ScoringConfig(judge=S.JudgeConfig(threshold=3))),
     C.INVALID_ARGUMENT, "threshold"),
    ("Rescore", "bad-overrides", lambda w: S.RescoreRequest(
        run=RUN_A, config=S.ScoringConfig(overrides_json="[1]")), C.INVALID_ARGUMENT, "object"),
    ("Rescore", "oversized", lambda w: S.RescoreRequest(run=BIG), C.RESOURCE_EXHAUSTED, ""),
    ("GetScoring", "unknown", lambda w: S.GetScoringRequest(scoring_id="nope"), C.NOT_FOUND,
     "nope"),
    ("ListScorings", "bad-id", lambda w: S.ListScoringsRequest(run="../x"), C.INVALID_ARGUMENT,
     "run"),
    ("ListScorings", "unknown", lambda w: S.ListScoringsRequest(run="1999"), C.NOT_FOUND, "1999"),
    ("CompareScorings", "unknown", lambda w: S.CompareScoringsRequest(
        scoring_a="nope", scoring_b="nope2"), C.NOT_FOUND, "nope"),
    ("GetReport", "bad-id", lambda w: S.GetReportRequest(run="a/b"), C.INVALID_ARGUMENT, "run"),
    ("GetReport", "unknown", lambda w: S.GetReportRequest(run="1999"), C.NOT_FOUND, "1999"),
    ("GetReport", "other-runs-scoring", lambda w: S.GetReportRequest(
        run=RUN_A, scoring_id=w.scorings[RUN_B]), C.INVALID_ARGUMENT, "belongs to run"),
    ("GetReport", "unknown-scoring", lambda w: S.GetReportRequest(run=RUN_A, scoring_id="nope"),
     C.NOT_FOUND, "nope"),
]  # fmt: skip
STREAMING = {"WatchRun", "Rescore"}


async def call(address: str, stub_cls: Any, rpc: str, request: Any, metadata: Any) -> Any:
    async with grpc.aio.insecure_channel(address) as channel:
        method = getattr(stub_cls(channel), rpc)
        if rpc in STREAMING:
            return [r async for r in method(request, metadata=metadata)]
        return await method(request, metadata=metadata)


def _cases() -> list[Any]:
    out = []
    for service, table in (("bridge", BRIDGE), ("scorer", SCORER)):
        for rpc, case, make, code, words in table:
            out.append(pytest.param(service, rpc, make, code, words, id=f"{service}-{rpc}-{case}"))
    return out


@pytest.mark.parametrize(("service", "rpc", "make", "code", "words"), _cases())
async def test_bad_input_gets_the_documented_code(
    world: World, service: str, rpc: str, make: Any, code: grpc.StatusCode, words: str
) -> None:
    address = world.bridge.address if service == "bridge" else world.scorer_address
    stub = bridge_pb2_grpc.BridgeServiceStub if service == "bridge" else (
        scorer_pb2_grpc.ScorerServiceStub)  # fmt: skip
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await call(address, stub, rpc, make(world), AUTH)
    assert info.value.code() == code, info.value.details()
    assert words in (info.value.details() or "")


ALL_RPCS = [
    ("bridge", rpc) for rpc in ("StartRun", "WatchRun", "GetRun", "ListRuns", "CancelRun")
] + [
    ("scorer", rpc)
    for rpc in ("Rescore", "GetScoring", "ListScorings", "CompareScorings", "GetReport")
]
EMPTY = {
    "StartRun": B.StartRunRequest, "WatchRun": B.WatchRunRequest, "GetRun": B.GetRunRequest,
    "ListRuns": B.ListRunsRequest, "CancelRun": B.CancelRunRequest,
    "Rescore": S.RescoreRequest, "GetScoring": S.GetScoringRequest,
    "ListScorings": S.ListScoringsRequest, "CompareScorings": S.CompareScoringsRequest,
    "GetReport": S.GetReportRequest,
}  # fmt: skip


@pytest.mark.parametrize(("service", "rpc"), ALL_RPCS, ids=[f"{s}-{r}" for s, r in ALL_RPCS])
@pytest.mark.parametrize("token", [None, "wrong"], ids=["no-token", "wrong-token"])
async def test_every_rpc_needs_the_token(
    world: World, service: str, rpc: str, token: str | None
) -> None:
    address = world.bridge.address if service == "bridge" else world.scorer_address
    stub = bridge_pb2_grpc.BridgeServiceStub if service == "bridge" else (
        scorer_pb2_grpc.ScorerServiceStub)  # fmt: skip
    metadata = None if token is None else (("authorization", f"Bearer {token}"),)
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await call(address, stub, rpc, EMPTY[rpc](), metadata)
    assert info.value.code() == C.UNAUTHENTICATED


async def test_converse_bad_input_codes(world: World) -> None:
    async def converse(messages: list[Any], metadata: Any) -> grpc.aio.AioRpcError:
        async with grpc.aio.insecure_channel(world.bridge.address) as channel:
            stub = bridge_pb2_grpc.BridgeServiceStub(channel)

            async def gen() -> AsyncIterator[Any]:
                for m in messages:
                    yield m

            with pytest.raises(grpc.aio.AioRpcError) as info:
                async for _ in stub.Converse(gen(), metadata=metadata):
                    pass
            return info.value

    audio = B.BotMessage(audio=common_pb2.AudioChunk(pcm=b"\0\0"))
    assert (await converse([audio], None)).code() == C.UNAUTHENTICATED
    assert (await converse([audio], AUTH)).code() == C.INVALID_ARGUMENT
    bad_role = B.BotMessage(join=B.Join(role=7))  # type: ignore[arg-type]
    assert (await converse([bad_role], AUTH)).code() == C.INVALID_ARGUMENT
    huge = B.BotMessage(audio=common_pb2.AudioChunk(pcm=bytes(5 * 1024 * 1024)))
    assert (await converse([huge], AUTH)).code() == C.RESOURCE_EXHAUSTED


async def test_a_bug_is_internal_with_an_error_id_logged_once(
    world: World, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from vae.scorer_service.ledger import scorings as ledger

    def broken(*_args: Any) -> Any:
        raise KeyError("simulated bug")

    monkeypatch.setattr(ledger, "list_scorings", broken)
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await call(world.scorer_address, scorer_pb2_grpc.ScorerServiceStub, "ListScorings",
                   S.ListScoringsRequest(run=RUN_A), AUTH)  # fmt: skip
    assert info.value.code() == C.INTERNAL
    details = info.value.details() or ""
    error_id = details.split()[2]
    assert error_id.startswith("E") and "the server log has the details" in details
    logged = [r for r in caplog.records if error_id in r.getMessage()]
    assert len(logged) == 1 and logged[0].exc_info is not None
