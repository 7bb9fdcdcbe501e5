"""`vae import calls`, `vae run --replay` and `vae runs show` from the command line."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import yaml

from tests.bridge_service.replay.helpers import agent_script, with_script
from tests.helpers import cli
from tests.recordings.calls_fixture import scenario_doc, write_stereo
from vae.bots.runner import BotConfig, run_bots
from vae.bots.sound.speech import BuzzSynthesiser
from vae.bridge_service.server import BridgeServer
from vae.recordings.read.reader import RecordingReader


async def test_import_calls_then_replay_and_show(bridge: BridgeServer, tmp_path: Path) -> None:
    db = str(bridge.db_path)
    write_stereo(tmp_path / "call1.wav")
    (tmp_path / "booking.yaml").write_text(yaml.safe_dump(scenario_doc()))
    code, out, err = await cli(
        "import", "calls", str(tmp_path), "--scenario", str(tmp_path / "booking.yaml"),
        "--run-id", "june", "--db", db, "--json",
    )  # fmt: skip
    assert code == 0, err
    imported = json.loads(out)
    assert imported["run_id"] == "june" and imported["calls"][0]["scenario"] == "shared"
    # The documented chain: `vae rescore --run june --no-judge --allow-unscored && vae run
    # --replay june`. What a recording lacks is unscored, so without --allow-unscored the
    # rescore exits 1 and a `&&` chain would never reach the replay.
    code, _, err = await cli("rescore", "--run", "june", "--db", db, "--no-judge")
    assert code == 1 and "unscored" in err, err
    code, _, err = await cli(
        "rescore", "--run", "june", "--db", db, "--no-judge", "--allow-unscored"
    )
    assert code == 0, err

    stop = asyncio.Event()
    agent = BotConfig(
        bridge.address, "agent", with_script(agent_script("2026-03-20")),
        synth=BuzzSynthesiser(), run_filter="june-v2",
    )  # fmt: skip
    bots = asyncio.create_task(run_bots(agent, stop))
    try:
        code, out, err = await cli(
            "run", "--replay", "june", "--run-id", "june-v2", "--gate-silence", "0.4",
            "--inactivity-timeout", "6", "--bridge", bridge.address, "--json",
        )  # fmt: skip
    finally:
        stop.set()
        await bots
    assert code == 0, err
    summary = json.loads(out)
    assert [s["stop_reason"] for s in summary["sessions"]] == ["end_tool"]

    code, out, err = await cli("runs", "show", "june-v2", "--db", db, "--json")
    assert code == 0, err
    shown = json.loads(out)
    assert shown["replayed_from"]["run"] == "june"
    source = imported["calls"][0]["session_id"]
    assert list(shown["replayed_from"]["sessions"].values()) == [source]
    assert shown["options"]["replay_gate_silence_s"] == 0.4
    code, out, _ = await cli("runs", "show", "june-v2", "--db", db)
    assert "replayed from run june" in out


async def test_replay_usage_errors(bridge: BridgeServer, tmp_path: Path) -> None:
    code, _, err = await cli("run", "--replay-scenario", "x", "--bridge", bridge.address)
    assert code == 2 and "need --replay" in err
    code, _, err = await cli("run", "--replay", "nope", "--bridge", bridge.address)
    assert code == 2 and "nope" in err
    code, _, err = await cli("run", "x.yaml", "--replay", "r", "--bridge", bridge.address)
    assert code == 2 and "give no SCENARIOS" in err
    code, _, err = await cli("import", "calls", str(tmp_path / "none.wav"), "--db", "x.db")
    assert code == 2 and "no such file" in err


async def test_import_calls_exit_codes(tmp_path: Path) -> None:
    """Exit 2 when nothing was written; exit 1 naming the run when a run was written."""
    db = tmp_path / "calls.db"
    write_stereo(tmp_path / "a_good.wav")
    code, _, err = await cli(
        "import", "calls", str(tmp_path), "--run-id", "../june", "--db", str(db)
    )
    assert code == 2 and "--run-id" in err, err
    assert not db.exists()
    write_stereo(tmp_path / "b_cut.flac", fmt="FLAC")
    blob = (tmp_path / "b_cut.flac").read_bytes()
    (tmp_path / "b_cut.flac").write_bytes(blob[: len(blob) // 2])  # header intact, data cut
    code, out, err = await cli(
        "import", "calls", str(tmp_path), "--run-id", "half", "--db", str(db)
    )
    assert code == 1, (out, err)
    assert "b_cut.flac" in err and "run half" in err and "failed" in err, err
    with RecordingReader(db) as reader:
        run = reader.get_run("half")
        assert run is not None and str(run.status) == "failed"
