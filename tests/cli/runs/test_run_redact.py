"""``vae run --redact``: the values never reach the store, which scans of it during the run show."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path

import numpy as np
import yaml

from tests.bridge_service.bots import TestBot, tone
from tests.bridge_service.conftest import scenario
from tests.helpers import cli, wait_until
from tests.redaction_calls import scan
from vae.bots.sound.speech import default_synthesiser
from vae.bridge_service.server import BridgeServer
from vae.common.v1 import common_pb2
from vae.recordings.models import Channel
from vae.recordings.read.reader import RecordingReader
from vae.recordings.redact import ledger
from vae.speech.stt import to_rate

CARD = "4111111111111111"
LINE = "my card is four one one one, one one one one, one one one one, one one one one"


def _rows(db: Path, kind: str) -> int:
    try:
        with sqlite3.connect(db) as conn:
            sql = "SELECT COUNT(*) FROM events WHERE kind = ?"
            return int(conn.execute(sql, (kind,)).fetchone()[0])
    except sqlite3.Error:
        return 0


async def test_a_redacted_run_never_writes_the_values(bridge: BridgeServer, tmp_path: Path) -> None:
    synth = default_synthesiser("espeak")
    voice = to_rate(synth.synthesise(LINE), synth.sample_rate, 16000)
    doc = scenario("pay", user={"persona": {"name": "Ann", "background": f"Your card is {CARD}."},
                                "task": {"goal": "pay"}})  # fmt: skip
    path = tmp_path / "pay.yaml"
    path.write_text(yaml.safe_dump(doc))
    user_done = asyncio.Event()

    async def user(bot: TestBot) -> None:
        await bot.speak(tone(0.3, 16000) * 0)
        first = bot._offset
        await bot.speak(voice)
        await bot.event(transcript=common_pb2.Transcript(
            kind=common_pb2.TRANSCRIPT_KIND_SPOKEN, text=LINE, is_final=True,
            start_sample_offset=first, end_sample_offset=bot._offset))  # fmt: skip
        user_done.set()

    async def agent(bot: TestBot) -> None:
        await bot.event(tool_call=common_pb2.ToolCall(
            call_id="c1", name="pay", arguments_json=json.dumps({"card_number": int(CARD)}),
            result_json=json.dumps({"charged": CARD}), side=common_pb2.ROLE_AGENT,
            is_write=True))  # fmt: skip
        await user_done.wait()
        await bot.speak(tone(1.5, 16000))
        await bot.end(common_pb2.END_KIND_AGENT_END_TOOL)

    bots = [
        TestBot(bridge.address, common_pb2.ROLE_USER, user,
                final_state={"card": CARD}, context_history=[{"content": f"card {CARD}"}]),
        TestBot(bridge.address, common_pb2.ROLE_AGENT, agent, final_state={"cards": [CARD]}),
    ]  # fmt: skip
    db = Path(bridge.db_path)
    files = [db, Path(f"{db}-wal")]
    scans: list[dict[str, list[str]]] = []

    async def watch() -> None:
        # While the session runs: once the tool call is stored, once the transcript is.
        await wait_until(lambda: _rows(db, "tool_call") > 0, 30)
        scans.append(scan(files))
        await wait_until(lambda: _rows(db, "transcript") > 0, 30)
        scans.append(scan(files))

    (code, _, err), *_ = await asyncio.gather(
        cli("run", str(path), "--bridge", bridge.address, "--run-id", "paid", "--redact",
            "--json"),
        watch(),
        *(b.run() for b in bots),
    )  # fmt: skip
    assert code == 0, err
    assert scans == [{}, {}]
    assert scan(files) == {}
    with RecordingReader(db) as reader:
        (session,) = reader.sessions("paid")
        frozen = reader.run_scenarios("paid")[0].scenario
        assert "<CREDIT_CARD>" in json.dumps(frozen)
        sent = reader.read_channel(session.session_id, Channel.USER).samples
        entries = [e for e in ledger.entries(reader.conn, "paid") if e.location == "audio"]
    by_channel = {e.channel: e for e in entries}
    assert set(by_channel) == {"user", "to_agent"}
    assert by_channel["user"].method == "turn"
    assert "sample offsets" in by_channel["user"].note
    # The spoken card number is the tone now, the recording as long as what was sent.
    start = round(float(by_channel["user"].start_s or 0) * 16000) + 3200
    piece = sent[start : start + 16000].astype(np.float64)
    peak = np.argmax(np.abs(np.fft.rfft(piece * np.hanning(len(piece))))) * 16000 / len(piece)
    assert abs(peak - 1000) < 15
    assert len(sent) >= len(voice)
