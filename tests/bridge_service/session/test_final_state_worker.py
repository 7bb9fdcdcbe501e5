"""Large final states are parsed, hashed and stored by a worker process, not on the loop."""

from __future__ import annotations

import glob
import json
import os
import tempfile
from pathlib import Path
from typing import Any

import grpc
import pytest

from tests.bridge_service.bots import TestBot, tone
from tests.bridge_service.conftest import run_pair
from tests.recordings.helpers import add_run, add_session
from vae.bridge.v1 import bridge_pb2_grpc
from vae.bridge_service.connectors.base import FinalStatePart, JsonPiece
from vae.bridge_service.session.final_state import INLINE_BYTES, SPOOL_BYTES, FinalStateCollector
from vae.bridge_service.session.final_state_worker import store_final_state
from vae.common.v1 import common_pb2
from vae.recordings.canonical import state_hash
from vae.recordings.models import EventKind, Side
from vae.recordings.read.reader import RecordingReader
from vae.recordings.write.writer import open_writer


async def _collect(doc: bytes, context: bytes = b"", step: int = 300_000) -> FinalStateCollector:
    c = FinalStateCollector(64 << 20)
    for name, data in (("state", doc), ("context", context)):
        for off in range(0, len(data), step):
            piece = JsonPiece(off, data[off : off + step], off + step >= len(data))
            await c.add(FinalStatePart(**{name: piece}))
    await c.add(FinalStatePart(done=True))
    return c


def _spools() -> set[str]:
    return set(glob.glob(os.path.join(tempfile.gettempdir(), "vae-final-state-*")))


async def test_a_large_state_goes_through_the_worker_and_matches_the_inline_result(
    db_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # spool into a folder of this test's own: other tests (other xdist workers)
    # create and remove spool files in the shared temporary folder meanwhile
    (tmp_path / "spool").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "spool"))
    state = {"rows": [{"id": i, "tags": ["b", "a"], "text": "é" * 40} for i in range(30_000)]}
    doc = json.dumps(state, ensure_ascii=False).encode()
    assert len(doc) > SPOOL_BYTES > INLINE_BYTES
    before = _spools()
    async with open_writer(db_path) as w:
        await add_run(w, "r", ["s"])
        sid = await add_session(w, "r", "s", ended=False)
        big = await _collect(doc, b'[{"role": "user"}]')
        assert big.large and _spools() - before  # spooled to a file piece by piece
        problems = await store_final_state(
            big, w, session_id=sid, side=Side.AGENT, received_ns=5, order_independent=["rows"]
        )
        small = await _collect(b'{"ok": true, "cut": ', step=7)  # cut short: not JSON
        problems += await store_final_state(
            small, w, session_id=sid, side=Side.USER, received_ns=6, order_independent=[]
        )
    assert _spools() == before  # spool files are removed
    assert len(problems) == 1 and problems[0].startswith("final_state.state: not valid JSON")
    with RecordingReader(db_path) as reader:
        finals = reader.final_states(sid)
        assert finals[Side.AGENT].state == state
        assert finals[Side.AGENT].context == [{"role": "user"}]
        assert finals[Side.AGENT].state_hash == state_hash(state, order_independent=["rows"])
        assert Side.USER not in finals or finals[Side.USER].state is None  # not JSON: not kept
        assert not reader.events(sid, [EventKind.MALFORMED_EVENT])  # the session records them


async def test_a_stored_collector_stores_nothing_the_second_time(
    db_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After ``discard`` a collector is empty: a second store blames the bot for nothing."""
    (tmp_path / "spool").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "spool"))
    doc = json.dumps({"text": "x" * (SPOOL_BYTES + 10)}).encode()
    async with open_writer(db_path) as w:
        await add_run(w, "r", ["s"])
        sid = await add_session(w, "r", "s", ended=False)
        for data in (doc, b'{"ok": true}'):
            collector = await _collect(data)
            first = await store_final_state(
                collector, w, session_id=sid, side=Side.AGENT, received_ns=5, order_independent=[]
            )
            assert first == [] and collector.empty
            again = await store_final_state(
                collector, w, session_id=sid, side=Side.AGENT, received_ns=6, order_independent=[]
            )
            assert again == []  # not "final_state.state: not valid JSON"
    assert not _spools()


async def test_a_final_state_over_the_limit_leaves_no_spool_file(
    make_bridge: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bot over max_final_state_bytes is refused; what it spooled to disk is deleted."""
    (tmp_path / "spool").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "spool"))
    limit = 2_000_000
    bridge = await make_bridge(settings={"max_final_state_bytes": limit})
    big = {"text": "x" * (limit + 100_000)}
    async with grpc.aio.insecure_channel(bridge.address) as channel:
        stub = bridge_pb2_grpc.BridgeServiceStub(channel)
        _, got_a, _, run_id = await run_pair(
            bridge,
            stub,
            speak,
            end_tool,
            agent_kwargs={"final_state": big, "final_chunk": 512 * 1024},
        )
    assert "max_final_state_bytes" in got_a.details
    assert not _spools()  # the spooled part (over SPOOL_BYTES) was deleted
    with RecordingReader(bridge.db_path) as reader:
        (s,) = reader.sessions(run_id)
        errors = reader.events(s.session_id, [EventKind.SESSION_ERROR])
        malformed = reader.events(s.session_id, [EventKind.MALFORMED_EVENT])
        finals = reader.final_states(s.session_id)
    assert any("max_final_state_bytes" in str(e.payload) for e in errors)
    assert not malformed and Side.AGENT not in finals  # none of it kept, nothing else blamed


async def speak(bot: TestBot) -> None:
    await bot.speak(tone(0.3, bot.send_rate))


async def end_tool(bot: TestBot) -> None:
    await bot.speak(tone(0.3, bot.send_rate))
    await bot.end(common_pb2.END_KIND_AGENT_END_TOOL)
