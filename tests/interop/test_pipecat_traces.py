"""pipecat's own tracing, exported to vae during real runs of the pipecat example.

Three example bots (pipecat-ai with its tracing extra and the OTLP/HTTP
exporter, in the pipecat venv) serve three sessions at once. Each sends its
spans to the bridge's OTLP receiver; vae ties every span to its session:

- when the bot adopts the ``vae-trace-context`` vae sends (the example does),
  by the trace context: its conversation span is a child of the session's span;
- when it does not (stock pipecat), by the session's time window and the
  ``vae.endpoint`` resource attribute each bot sets in ``OTEL_RESOURCE_ATTRIBUTES``.

The first test uses the bridge's receiver (``vae bridge serve --otlp-receiver``),
the second the run's own (``vae run --otlp-receiver``). The report's per-turn
waterfall then shows the agent's STT, LLM and TTS spans beside the latency vae
measured on the wire, and says how they were matched.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path

import grpc
import pytest

from tests.helpers import free_port
from tests.interop.conftest import (
    PIPECAT_BOT,
    SETTINGS,
    require_pipecat_venv,
    start_run,
    subprocess_until_ready,
    watch_until_done,
)
from vae.bots.brains.scripted import play_script
from vae.bots.runner import BotConfig, run_bots
from vae.bridge.v1 import bridge_pb2, bridge_pb2_grpc
from vae.bridge_service.server import BridgeServer
from vae.recordings.read.reader import RecordingReader
from vae.recordings.read.trace_reads import agent_spans
from vae.recordings.traces import ids
from vae.scorer_service.config import ScoringConfig
from vae.scorer_service.report import render_html
from vae.scorer_service.scoring.rescore import rescore

pytestmark = pytest.mark.timeout(150)


def scenario(name: str) -> dict[str, object]:
    return {
        "name": name,
        "domain": "restaurant",
        "max_duration": 30,
        "user": {
            "persona": {"name": "Ann"},
            "task": {"goal": "book a table"},
            "speaks_first": True,
            "script": [{"say": "Hello, I would like to book a table for two people tonight."}],
        },
        "agent": {"resources": {"tools": {"book_table": {"confirmed": "whether it is booked"}}}},
        "initial_state": {"bookings": []},
        "success_signals": ["CLEAN_EXIT"],
    }


@contextlib.asynccontextmanager
async def traced_bots(
    tmp_path: Path, receiver: str, *, ignore_context: bool
) -> AsyncIterator[list[str]]:
    """Three example bots exporting their spans to ``receiver`` (HOST:PORT)."""
    python = require_pipecat_venv()
    async with contextlib.AsyncExitStack() as stack:
        starting = []
        urls = []
        for i in range(3):
            port = free_port()
            url = f"ws://127.0.0.1:{port}"
            env = [
                f"OTEL_EXPORTER_OTLP_ENDPOINT=http://{receiver}",
                "OTEL_BSP_SCHEDULE_DELAY=200",
                f"OTEL_RESOURCE_ATTRIBUTES=vae.endpoint={url}",
            ]
            ignore = ["--ignore-trace-context"] if ignore_context else []
            args = ["env", *env, str(python), str(PIPECAT_BOT), "--port", str(port), "--trace",
                    "--think-s", "0.3", *ignore]  # fmt: skip
            starting.append(subprocess_until_ready(args, "READY", tmp_path / f"bot{i}.log"))
            urls.append(url)
        await asyncio.gather(*(stack.enter_async_context(s) for s in starting))
        yield urls


async def run_three(
    tmp_path: Path, db_path: Path, ignore_context: bool, per_run: bool = False
) -> tuple[str, BridgeServer]:
    """Three sessions at once; the receiver is the bridge's (``vae bridge serve
    --otlp-receiver``), or with ``per_run`` the run's own (``vae run --otlp-receiver``)."""
    receiver = f"127.0.0.1:{free_port()}"
    settings = SETTINGS if per_run else replace(SETTINGS, otlp_receiver=receiver)
    bridge = BridgeServer(db_path, settings)
    await bridge.start()
    try:
        async with traced_bots(tmp_path, receiver, ignore_context=ignore_context) as urls:
            connector = bridge_pb2.ConnectorConfig(kind="pipecat", url=urls[0], pool_urls=urls[1:])
            async with grpc.aio.insecure_channel(bridge.address) as channel:
                stub = bridge_pb2_grpc.BridgeServiceStub(channel)
                docs = [scenario(f"booking_{i}") for i in range(3)]
                more = {"otlp_receiver": receiver} if per_run else {}
                run_id = await start_run(stub, docs, agent_connector=connector, concurrency=3,
                                         **more)  # fmt: skip
                user = BotConfig(bridge.address, "user", lambda: play_script, run_filter=run_id,
                                 concurrency=3, max_sessions=3)  # fmt: skip
                async with asyncio.timeout(90):
                    await asyncio.gather(watch_until_done(stub, run_id),
                                         run_bots(user, asyncio.Event()))  # fmt: skip
                    # Each session's conversation span ends as the session does; wait for them.
                    assert bridge.traces is not None
                    while not _all_conversations(db_path, run_id):
                        await asyncio.sleep(0.2)
                        await bridge.writer.flush()  # type: ignore[union-attr]
    finally:
        await bridge.stop()
    return run_id, bridge


def _all_conversations(db_path: Path, run_id: str) -> bool:
    with RecordingReader(db_path) as r:
        names = [(s.session_id, s.name) for s in agent_spans(r, run_id) if s.session_id]
    done = {sid for sid, name in names if name == "conversation"}
    return len(done) == 3 and sum(1 for _, n in names if n == "tts") >= 3


async def check_report(db_path: Path, run_id: str, method: str) -> str:
    result = await rescore(db_path, run_id, ScoringConfig())
    with RecordingReader(db_path) as reader:
        html = render_html(reader, run_id, result.scoring.scoring_id)
    assert "Agent spans per turn" in html
    assert method in html
    for name in ("stt", "llm", "tts"):  # a row per span, named with the agent's service
        assert html.count(f">{name} · pipecat-example-bot</text>") == 3
    return html


async def test_pipecat_tracing_tied_by_trace_context_at_concurrency_3(
    tmp_path: Path, db_path: Path
) -> None:
    started = time.monotonic()
    run_id, _ = await run_three(tmp_path, db_path, ignore_context=False)
    with RecordingReader(db_path) as r:
        sessions = {s.session_id: s for s in r.sessions(run_id)}
        assert len(sessions) == 3
        spans = agent_spans(r, run_id)
    by_session: dict[str, list[str]] = {}
    for span in spans:
        assert span.session_id in sessions, span  # none unmatched
        assert span.service == "pipecat-example-bot"
        if span.trace_id != ids.run_trace_id(run_id):
            # What the bot's pipeline opened on connecting, before vae's context arrived:
            # its own trace, tied by the session's window and the bot's vae.endpoint.
            assert (span.name, span.matched_by) in {("conversation", "window+endpoint"),
                                                    ("turn", "window+endpoint")}, span  # fmt: skip
            continue
        by_session.setdefault(span.session_id, []).append(span.name)
        assert span.matched_by == "traceparent"
        if span.name == "conversation":
            # pipecat's conversation span is the child of vae's session span, and names it
            assert span.parent_span_id == ids.session_span_id(span.session_id)
            assert span.attributes["conversation.id"] == span.session_id
    for session_id, names in by_session.items():
        assert {"conversation", "stt", "llm", "tts"} <= set(names), (session_id, names)
        assert names.count("conversation") == 1
    llm = [s for s in spans if s.name == "llm"]
    assert all(s.attributes["gen_ai.usage.output_tokens"] == 7 for s in llm)
    assert all(s.attributes["gen_ai.request.model"] == "tone-1" for s in llm)
    await check_report(db_path, run_id, "trace context")
    print(f"traced run of 3 sessions: {time.monotonic() - started:.1f} s")


async def test_pipecat_tracing_without_context_tied_by_window_and_endpoint_per_run(
    tmp_path: Path, db_path: Path
) -> None:
    run_id, _ = await run_three(tmp_path, db_path, ignore_context=True, per_run=True)
    with RecordingReader(db_path) as r:
        sessions = {s.session_id: s for s in r.sessions(run_id)}
        endpoint_of = {sid: s.agent_bot["labels"]["url"] for sid, s in sessions.items()}  # type: ignore[index]
        spans = agent_spans(r, run_id)
    tied = [s for s in spans if s.session_id is not None]
    assert {s.session_id for s in tied} == set(sessions)
    for span in tied:
        assert span.trace_id != ids.run_trace_id(run_id)  # the bot started its own traces
        assert span.matched_by == "window+endpoint"
        assert span.resource["vae.endpoint"] == endpoint_of[span.session_id]  # type: ignore[index]
    await check_report(db_path, run_id, "time window and vae.endpoint")
