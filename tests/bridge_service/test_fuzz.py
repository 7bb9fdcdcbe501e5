"""Property-based fuzzing of a live bridge (Hypothesis), bounded for CI.

A real bridge runs in its own thread and event loop. Beside it, one
well-behaved session (a user and an agent :class:`TestBot`) talks for the
whole fuzzing time. Hypothesis then opens Converse streams with generated
sequences — raw bytes, and BotMessages of every kind with hostile values
(bad roles and rates, run filters, sequences and offsets going anywhere,
odd-sized and empty PCM, malformed JSON, final-state chunks out of order) —
half of them as a user and an agent stream at once, joining a fuzz run and
sending their generated messages after SessionStart, so sessions really start
between two fuzzing streams.

Invariants: the bridge stays up (ListRuns answers after every example); no
stream ever ends with INTERNAL or UNKNOWN; every session recorded ends with a
stop reason; the good session's audio is recorded exactly as sent and is
delivered to its peer without a gap (consecutive frame sequence numbers).

Budget: ``VAE_FUZZ_SECONDS`` (default 20 s of fuzzing here) and
``VAE_FUZZ_EXAMPLES`` (default 400, whichever ends first); for a long local
run: ``VAE_FUZZ_SECONDS=600 VAE_FUZZ_EXAMPLES=100000 python -m pytest
tests/bridge_service/test_fuzz.py``. The test prints how long it fuzzed and
how many examples ran.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import os
import threading
import time
from collections.abc import Coroutine, Iterator
from pathlib import Path
from typing import Any, TypeVar

import grpc
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.bridge_service.bots import TestBot, fmt, tone
from tests.bridge_service.conftest import TEST_SETTINGS, inline, scenario
from vae.bridge.v1 import bridge_pb2, bridge_pb2_grpc
from vae.bridge_service.server import BridgeServer
from vae.common.v1 import common_pb2
from vae.recordings.read.reader import RecordingReader

# Real-time delivery beside a load of its own: not beside other tests (see the Makefile).
pytestmark = pytest.mark.serial

T = TypeVar("T")
SECONDS = float(os.environ.get("VAE_FUZZ_SECONDS", "20"))
EXAMPLES = int(os.environ.get("VAE_FUZZ_EXAMPLES", "400"))
CONVERSE = "/vae.bridge.v1.BridgeService/Converse"
FUZZ_RUN = "fuzz-run"


class LiveBridge:
    """A bridge in a thread of its own, so synchronous Hypothesis tests can drive it."""

    def __init__(self, db: Path) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.server = BridgeServer(db, TEST_SETTINGS)
        self.run(self.server.start())

    def run(self, coro: Coroutine[Any, Any, T], timeout: float = 60) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def spawn(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def close(self) -> None:
        self.run(self.server.stop())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


@pytest.fixture
def live(tmp_path: Path) -> Iterator[LiveBridge]:
    bridge = LiveBridge(tmp_path / "vae.db")
    try:
        yield bridge
    finally:
        bridge.close()


# ------------------------------------------------------------------ strategies
roles = st.sampled_from([0, 1, 2, 7])
rates = st.sampled_from([0, 8000, 16000, 44100, 96000])
filters = st.sampled_from([FUZZ_RUN, FUZZ_RUN, "", "../x", "a b", "x" * 200])
u64 = st.integers(min_value=0, max_value=2**64 - 1)
i64 = st.integers(min_value=-(2**63), max_value=2**63 - 1)
json_text = st.one_of(
    st.text(max_size=40),
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=10),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner),
        max_leaves=8,
    ).map(json.dumps),
)


def join_msg(role: int, send: int, receive: int, run_filter: str) -> bytes:
    return bridge_pb2.BotMessage(
        join=bridge_pb2.Join(
            role=role,  # type: ignore[arg-type]
            send_format=fmt(send),
            receive_format=fmt(receive),
            run_filter=run_filter,
        )
    ).SerializeToString()


good_join = st.builds(join_msg, st.sampled_from([1, 2]), st.just(16000), st.just(16000),
                      st.just(FUZZ_RUN))  # fmt: skip
any_join = st.builds(join_msg, roles, rates, rates, filters)
audio = st.builds(
    lambda seq, off, pcm: bridge_pb2.BotMessage(
        audio=common_pb2.AudioChunk(sequence=seq, sample_offset=off, pcm=pcm)
    ).SerializeToString(),
    st.one_of(st.integers(0, 5), u64),
    st.one_of(st.integers(0, 2000), i64),
    st.one_of(st.binary(max_size=700), st.just(bytes(640)), st.just(bytes(30_000))),
)
event = st.builds(
    lambda name, args, result, text: bridge_pb2.BotMessage(
        event=common_pb2.BotEvent(
            tool_call=common_pb2.ToolCall(
                call_id=name, name=name, arguments_json=args, result_json=result
            )
        )
        if text is None
        else common_pb2.BotEvent(transcript=common_pb2.Transcript(text=text, is_final=True))
    ).SerializeToString(),
    st.text(max_size=8),
    json_text,
    json_text,
    st.none() | st.text(max_size=30),
)
final = st.builds(
    lambda off, data, last, done: bridge_pb2.BotMessage(
        final_state=bridge_pb2.FinalState(
            state=common_pb2.JsonChunk(offset=off, data=data, last=last), done=done
        )
    ).SerializeToString(),
    st.one_of(st.just(0), u64),
    st.one_of(json_text.map(str.encode), st.binary(max_size=64)),
    st.booleans(),
    st.booleans(),
)
raw = st.binary(max_size=200)
stream = st.tuples(
    st.one_of(good_join, good_join, any_join, raw),
    st.lists(st.one_of(audio, audio, event, final, any_join, raw,
                       st.just(bridge_pb2.BotMessage().SerializeToString())), max_size=12),
)  # fmt: skip


def converse(
    address: str, first: bytes, rest: list[bytes], wait_for_start: bool = False
) -> grpc.StatusCode:
    """One stream: ``first``, then ``rest`` (after SessionStart when asked), then half-close."""
    started = threading.Event()

    def requests() -> Iterator[bytes]:
        yield first
        if wait_for_start:
            started.wait(3.0)
        yield from rest

    with grpc.insecure_channel(address) as channel:
        call = channel.stream_stream(
            CONVERSE,
            request_serializer=lambda b: b,
            response_deserializer=bridge_pb2.BridgeMessage.FromString,
        )(requests(), timeout=6.0)
        try:
            for msg in call:
                if msg.WhichOneof("message") == "session_start":
                    started.set()
        except grpc.RpcError as exc:
            return exc.code()  # type: ignore[no-any-return]
        return grpc.StatusCode.OK


def converse_pair(address: str, user: list[bytes], agent: list[bytes]) -> list[grpc.StatusCode]:
    """A user and an agent stream at once, so a fuzz-run session starts between them."""
    joins = [join_msg(1, 16000, 16000, FUZZ_RUN), join_msg(2, 16000, 16000, FUZZ_RUN)]
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        futures = [
            pool.submit(converse, address, j, msgs, True)
            for j, msgs in zip(joins, (user, agent), strict=True)
        ]
        return [f.result() for f in futures]


async def _talk_until(bot: TestBot, done: asyncio.Event, end: bool) -> None:
    while not done.is_set() and not bot.ending.is_set():
        await bot.speak(tone(0.5, 16000, 300 if end else 500))
    if end:
        await bot.end(common_pb2.END_KIND_AGENT_END_TOOL)


async def _start_runs(bridge: BridgeServer) -> str:
    async with grpc.aio.insecure_channel(bridge.address) as channel:
        stub = bridge_pb2_grpc.BridgeServiceStub(channel)
        good = await stub.StartRun(
            bridge_pb2.StartRunRequest(
                sources=inline(scenario("good", max_duration=SECONDS + 60)),
                options=bridge_pb2.RunOptions(max_auto_retries=0, inactivity_timeout_s=60),
                run_id="good-run",
            )
        )
        docs = [scenario(f"f{i}", max_duration=2) for i in range(400)]
        await stub.StartRun(
            bridge_pb2.StartRunRequest(
                sources=inline(*docs),
                run_id=FUZZ_RUN,
                options=bridge_pb2.RunOptions(
                    max_auto_retries=0, concurrency=4, pairing_timeout_s=1,
                    inactivity_timeout_s=1,
                ),
            )
        )  # fmt: skip
        return good.run.run_id


async def _list_runs(address: str) -> int:
    async with grpc.aio.insecure_channel(address) as channel:
        stub = bridge_pb2_grpc.BridgeServiceStub(channel)
        return len((await stub.ListRuns(bridge_pb2.ListRunsRequest())).runs)


async def _cancel(address: str) -> None:
    async with grpc.aio.insecure_channel(address) as channel:
        stub = bridge_pb2_grpc.BridgeServiceStub(channel)
        await stub.CancelRun(bridge_pb2.CancelRunRequest(run_id=FUZZ_RUN))


def test_fuzz_a_live_bridge_beside_a_good_session(live: LiveBridge) -> None:
    server = live.server
    good_run = live.run(_start_runs(server))
    done = live.run(_make_event())
    user = TestBot(server.address, common_pb2.ROLE_USER, None, run_filter=good_run)
    agent = TestBot(server.address, common_pb2.ROLE_AGENT, None, run_filter=good_run)
    user.behaviour = lambda b: _talk_until(b, done, False)
    agent.behaviour = lambda b: _talk_until(b, done, True)
    bots = [live.spawn(user.run()), live.spawn(agent.run())]
    live.run(asyncio.wait_for(user.started.wait(), 20))
    live.run(asyncio.wait_for(agent.started.wait(), 20))

    codes: dict[str, int] = {}
    count = 0
    deadline = time.monotonic() + SECONDS
    t0 = time.monotonic()

    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(stream, st.booleans())
    def fuzz(case: tuple[bytes, list[bytes]], paired: bool) -> None:
        nonlocal count
        if time.monotonic() > deadline:
            return
        count += 1
        if paired:
            got = converse_pair(server.address, case[1], case[1][::-1])
        else:
            got = [converse(server.address, case[0], case[1])]
        for code in got:
            codes[code.name] = codes.get(code.name, 0) + 1
            assert code not in (grpc.StatusCode.INTERNAL, grpc.StatusCode.UNKNOWN), case
        assert live.run(_list_runs(server.address)) >= 2  # the bridge is up

    fuzz()
    fuzzed = time.monotonic() - t0
    with RecordingReader(server.db_path) as reader:
        # Unpaired attempts (pairing timeouts) are recorded with no bots.
        started = sum(1 for x in reader.sessions(FUZZ_RUN) if x.user_bot)
    print(
        f"\nfuzzed the bridge for {fuzzed:.1f} s with {count} examples "
        f"({started} fuzz sessions paired); statuses {codes}"
    )
    assert count > 0

    live.loop.call_soon_threadsafe(done.set)
    got_user, got_agent = (f.result(30) for f in bots)
    live.run(_cancel(server.address))
    assert got_agent.status == grpc.StatusCode.OK and got_user.status == grpc.StatusCode.OK
    for got in (got_user, got_agent):
        seqs = [f.sequence for f in got.frames]
        assert seqs == list(range(seqs[0], seqs[0] + len(seqs))), "a gap in delivered audio"
    with RecordingReader(server.db_path) as reader:
        (good,) = reader.sessions(good_run)
        assert good.stop_reason == "end_tool"
        recorded = b"".join(s.pcm for s in reader.segments(good.session_id, "user"))
        assert recorded == bytes(user.sent_pcm)
        live.run(_wait_finished(server))
        unfinished = [s for s in reader.sessions(FUZZ_RUN) if not s.stop_reason]
        assert not unfinished, unfinished[:3]


async def _make_event() -> asyncio.Event:
    return asyncio.Event()


async def _wait_finished(server: BridgeServer) -> None:
    assert server.runs is not None
    run = server.runs.runs.get(FUZZ_RUN)
    if run is not None and run.task is not None:
        await asyncio.wait_for(asyncio.shield(run.task), 30)
    assert server.writer is not None
    await server.writer.flush()
