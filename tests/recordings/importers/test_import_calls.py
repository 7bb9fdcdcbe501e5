"""``vae import calls``: real-call recordings into the store, and hostile input refused."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import soundfile as sf

from tests.recordings.calls_fixture import (
    RATE,
    call_channels,
    scenario_doc,
    write_pair,
    write_sidecars,
    write_stereo,
)
from vae.recordings.errors import StorageError
from vae.recordings.importers import calls
from vae.recordings.importers.calls import PartialImportError, import_calls
from vae.recordings.importers.nemo.layout import ImportSourceError
from vae.recordings.models import Channel, EventKind, Side
from vae.recordings.read.reader import RecordingReader
from vae.recordings.read.replay_script import Gate, load_script
from vae.recordings.write.writer import open_writer


async def test_stereo_and_mono_pair_with_and_without_sidecars(
    tmp_path: Path, db_path: Path
) -> None:
    calls = tmp_path / "calls"
    calls.mkdir()
    write_stereo(calls / "plain.wav")
    write_pair(calls, "paired")
    write_sidecars(calls, "paired")
    report = await import_calls(db_path, [calls], run_id="june")
    assert report.run_id == "june"
    by_name = {c.name: c for c in report.calls}
    assert set(by_name) == {"plain", "paired"}
    assert (by_name["plain"].scenario, by_name["paired"].scenario) == ("none", "own")
    assert by_name["plain"].transcript_lines == 0
    assert by_name["paired"].transcript_lines == 5
    user, agent, _ = call_channels()
    with RecordingReader(db_path) as reader:
        run = reader.get_run("june")
        assert run is not None and run.source == "import:calls"
        assert run.options["lacks"] == ["tool_calls", "final_state", "llm_context", "end_reason"]
        frozen = {s.scenario_name: s.scenario for s in reader.run_scenarios("june")}
        assert frozen["paired"]["reference_answer"] == scenario_doc()["reference_answer"]
        for call in report.calls:
            s = reader.session(call.session_id)
            assert s is not None and (s.user_turns, s.agent_turns) == (2, 3)
            got_user = reader.read_channel(call.session_id, Channel.USER).samples
            got_agent = reader.read_channel(call.session_id, Channel.AGENT).samples
            assert np.array_equal(got_user, user) and np.array_equal(got_agent, agent)
            script = load_script(reader, call.session_id)
            assert [t.gate for t in script.turns] == [Gate.AFTER_AGENT, Gate.AFTER_AGENT]
            assert script.reply_expected
        texts = [
            (e.side, e.payload["text"])
            for e in reader.events(by_name["paired"].session_id, [EventKind.TRANSCRIPT])
        ]
        assert texts[1] == (Side.USER, "Move booking one to March twenty.")
        script = load_script(reader, by_name["paired"].session_id)
        assert [t.transcripts[0]["text"] for t in script.turns] == [
            "Move booking one to March twenty.",
            "Thanks, bye.",
        ]


async def test_caller_on_the_right_and_one_scenario_for_all(tmp_path: Path, db_path: Path) -> None:
    write_stereo(tmp_path / "a.flac", caller_right=True, fmt="FLAC")
    report = await import_calls(
        db_path, [tmp_path / "a.flac"], caller_channel="right", scenario=scenario_doc()
    )
    user, _, _ = call_channels()
    with RecordingReader(db_path) as reader:
        sid = report.calls[0].session_id
        assert np.array_equal(reader.read_channel(sid, Channel.USER).samples, user)
        frozen = reader.run_scenarios(report.run_id)[0]
        assert frozen.scenario_name == "a" and frozen.domain == "airline"
    assert report.calls[0].scenario == "shared"


def _nothing_written(db: Path) -> bool:
    if not db.exists():
        return True
    with RecordingReader(db) as reader:
        return reader.run_ids() == []


def _bad(tmp_path: Path, name: str, write) -> Path:  # type: ignore[no-untyped-def]
    path = tmp_path / name
    write(path)
    return path


@pytest.mark.parametrize(
    ("name", "write", "expected"),
    [
        ("text.wav", lambda p: p.write_text("not audio at all"), "not a readable WAV/FLAC"),
        ("empty.wav", lambda p: p.write_bytes(b""), "empty file"),
        ("mono.wav", lambda p: sf.write(str(p), np.zeros(RATE, "int16"), RATE), "expected stereo"),
        (
            "three.wav",
            lambda p: sf.write(str(p), np.zeros((RATE, 3), "int16"), RATE),
            "expected stereo",
        ),
        (
            "slow.wav",
            lambda p: sf.write(str(p), np.zeros((4000, 2), "int16"), 4000),
            "4000 Hz; supported rates",
        ),
        ("notes.txt", lambda p: p.write_text("hello"), "not a .wav or .flac file"),
        ("lonely.user.wav", lambda p: sf.write(str(p), np.zeros(RATE, "int16"), RATE), "missing"),
    ],
)
async def test_hostile_files_are_refused_and_nothing_is_written(
    tmp_path: Path,
    db_path: Path,
    name: str,
    write,
    expected: str,  # type: ignore[no-untyped-def]
) -> None:
    path = _bad(tmp_path, name, write)
    with pytest.raises(ImportSourceError, match=expected):
        await import_calls(db_path, [path])
    assert _nothing_written(db_path)


@pytest.mark.parametrize(
    ("segments", "expected"),
    [
        ("{]", "not valid JSON"),
        (json.dumps({"oops": 1}), "expected a list of segments"),
        (json.dumps([{"speaker": "bot", "text": "x", "start": 0, "end": 1}]), r"speaker"),
        (json.dumps([{"speaker": "agent", "text": 5, "start": 0, "end": 1}]), r"\.text"),
        (json.dumps([{"speaker": "agent", "text": "x", "start": "0", "end": 1}]), "finite"),
        ('[{"speaker": "agent", "text": "x", "start": NaN, "end": 1}]', "finite"),
        (json.dumps([{"speaker": "agent", "text": "x", "start": 2, "end": 1}]), "before start"),
        (json.dumps([{"speaker": "agent", "text": "x", "start": -1, "end": 1}]), "negative"),
    ],
)
async def test_a_bad_transcript_sidecar_names_the_entry(
    tmp_path: Path, db_path: Path, segments: str, expected: str
) -> None:
    write_stereo(tmp_path / "c.wav")
    (tmp_path / "c.transcript.json").write_text(segments)
    with pytest.raises(ImportSourceError, match=expected):
        await import_calls(db_path, [tmp_path])
    assert _nothing_written(db_path)


async def test_a_bad_scenario_sidecar_names_the_field(tmp_path: Path, db_path: Path) -> None:
    write_stereo(tmp_path / "c.wav")
    (tmp_path / "c.scenario.json").write_text(json.dumps({"success_signals": ["FAST"]}))
    with pytest.raises(ImportSourceError, match="success_signals"):
        await import_calls(db_path, [tmp_path / "c.wav"])
    with pytest.raises(ImportSourceError, match="no such file"):
        await import_calls(db_path, [tmp_path / "missing.wav"])


async def test_audio_broken_past_its_header_fails_the_run_and_keeps_the_rest(
    tmp_path: Path, db_path: Path
) -> None:
    write_stereo(tmp_path / "a_good.wav")
    write_stereo(tmp_path / "b_cut.flac", fmt="FLAC")
    blob = (tmp_path / "b_cut.flac").read_bytes()
    (tmp_path / "b_cut.flac").write_bytes(blob[: len(blob) // 2])  # header intact, data cut
    # Not an ImportSourceError (nothing written, exit 2): the run exists, and is named.
    with pytest.raises(PartialImportError, match=r"b_cut\.flac: cannot decode.*run half") as err:
        await import_calls(db_path, [tmp_path], run_id="half")
    assert not isinstance(err.value, ImportSourceError) and err.value.run_id == "half"
    with RecordingReader(db_path) as reader:
        run = reader.get_run("half")
        assert run is not None and str(run.status) == "failed"
        assert [s.scenario_name for s in reader.sessions("half")] == ["a_good"]


async def test_a_store_failing_mid_import_fails_the_run(
    tmp_path: Path, db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A real lock held beyond the writer's timeout: never ``completed``, the import stops."""
    for name in ("a", "b", "c"):
        write_stereo(tmp_path / f"{name}.wav")
    holder = sqlite3.connect(db_path, isolation_level=None, timeout=10)
    original = calls._write_call

    async def locking(writer: Any, rid: str, ordinal: int, call: Any) -> None:
        if ordinal == 1:  # the run and the first call are stored; then the lock is taken
            await writer.flush()
            holder.execute("BEGIN IMMEDIATE")
        await original(writer, rid, ordinal, call)

    monkeypatch.setattr(calls, "_write_call", locking)
    # The import shares this process's writer for the file: one with a short lock timeout.
    async with open_writer(
        db_path, flush_interval_s=0.01, lock_timeout_s=1.0, busy_timeout_ms=200
    ) as writer:
        with pytest.raises(StorageError):
            await asyncio.wait_for(import_calls(db_path, [tmp_path], run_id="cut"), 30)
        assert writer.failed.is_set() and writer.pending == 0
        holder.execute("ROLLBACK")  # room again: the kept status is salvaged at close
    holder.close()
    with RecordingReader(db_path) as reader:
        run = reader.get_run("cut")
        assert run is not None and str(run.status) == "failed", run
        assert "stayed locked" in run.error
