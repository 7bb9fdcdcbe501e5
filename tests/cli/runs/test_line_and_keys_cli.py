"""The line and the keypad from the command line: validate, run --line, runs show, report."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from click.testing import CliRunner

from tests.factories import write_run_sync
from tests.scorer_service.conftest import standard_sessions
from vae.cli.main import vae
from vae.recordings.read.reader import RecordingReader
from vae.recordings.write.writer import open_writer

BAD = """\
name: bad_line_and_keys
user:
  line:
    codec: mulaw8k
    packet_loss: 1.5
  script:
    - say: hello
    - dtmf: "12x#"
agent:
  script:
    - say: hi
      dtmf: "1"
"""


def test_validate_refuses_packet_loss_out_of_range_and_bad_keys_with_positions(
    tmp_path: Path,
) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(BAD)
    result = CliRunner().invoke(vae, ["validate", str(path)])
    assert result.exit_code == 1, result.output
    lines = result.stdout.splitlines()
    assert f"{path}:5:18: user.line.packet_loss: must be at most 1.0, got 1.5" in lines
    assert (
        f"{path}:8:13: user.script[1].dtmf: 'x' at character 3 is not a keypad key "
        "(0-9, *, #, A-D)" in lines
    )
    assert lines[-1].endswith("2 problems in 1 file")


def test_validate_refuses_negative_loss_an_unknown_codec_and_keys_on_the_agent(
    tmp_path: Path,
) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(
        "name: x\nuser:\n  line: {codec: gsm, packet_loss: -0.1}\n"
        "agent:\n  line: {gain_db: 3}\n  script:\n    - {say: hi, dtmf: '1'}\n"
    )
    result = CliRunner().invoke(vae, ["validate", str(path)])
    assert result.exit_code == 1
    out = result.stdout
    assert "user.line.codec: 'gsm' is not one of: pcm, mulaw8k" in out
    assert "user.line.packet_loss: must be at least 0.0, got -0.1" in out


def test_validate_refuses_the_line_and_keys_on_the_agents_side(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(
        "name: x\nagent:\n  line: {gain_db: 3}\n  script:\n    - {say: hi, dtmf: '1'}\n"
    )
    result = CliRunner().invoke(vae, ["validate", str(path)])
    assert result.exit_code == 1
    assert "agent.line: the line is the caller's (put it under user.line)" in result.stdout
    assert "agent.script[0].dtmf: only the caller presses keys (a user step)" in result.stdout


def test_validate_refuses_a_burst_too_short_for_the_loss_rate(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("name: x\nuser:\n  line: {packet_loss: 0.8, packet_loss_burst: 1}\n")
    result = CliRunner().invoke(vae, ["validate", str(path)])
    assert result.exit_code == 1
    assert "user.line.packet_loss_burst: a mean burst of 1 packets cannot give" in result.stdout


def test_run_line_option_is_checked_before_the_bridge_is_asked(tmp_path: Path) -> None:
    for value, problem in [
        ("packet_loss=1.5", "packet_loss: must be 0..1, got 1.5"),
        ("codec=opus", "codec: 'opus' is not one of: pcm, mulaw8k"),
        ("jitter=3", "jitter: unknown field"),
    ]:
        result = CliRunner().invoke(
            vae, ["run", "examples/suite", "--line", value, "--bridge", "127.0.0.1:1"]
        )
        assert result.exit_code == 2, result.output
        assert problem in result.output and "Traceback" not in result.output


def test_runs_show_and_the_report_show_each_sessions_line(tmp_path: Path) -> None:
    db = tmp_path / "vae.db"
    write_run_sync(db, *standard_sessions())
    with RecordingReader(db) as reader:
        run_id = reader.list_runs("", 0)[0].run_id
        first, *rest = reader.sessions(run_id)
    line = {"codec": "mulaw8k", "packet_loss": 0.1, "packet_loss_burst": None, "jitter_ms": 0,
            "gain_db": 0, "clipping": None, "white_noise_db": None, "seed": 5,
            "packets": 200, "lost": 19, "late": 0}  # fmt: skip

    async def record() -> None:
        async with open_writer(db) as writer:
            await writer.put_session_line(first.session_id, line)

    asyncio.run(record())
    result = CliRunner().invoke(vae, ["runs", "show", run_id, "--db", str(db)])
    assert result.exit_code == 0, result.output
    rows = result.stdout.splitlines()
    row = next(r for r in rows if r.startswith(first.session_id))
    assert "mulaw8k loss 10% , 19/200 packets lost" not in row
    assert "mulaw8k loss 10%, 19/200 packets lost" in row
    assert all("clean" in next(r for r in rows if r.startswith(s.session_id)) for s in rest)
    shown = CliRunner().invoke(vae, ["runs", "show", run_id, "--db", str(db), "--json"])
    by_id = {s["session_id"]: s["line"] for s in json.loads(shown.stdout)["sessions"]}
    assert by_id[first.session_id] == line
    assert all(by_id[s.session_id] is None for s in rest)
    scored = CliRunner().invoke(vae, ["rescore", "--run", run_id, "--db", str(db), "--no-judge"])
    assert scored.exit_code in (0, 1), scored.output
    out = tmp_path / "report.html"
    report = CliRunner().invoke(vae, ["report", run_id, "--db", str(db), "-o", str(out)])
    assert report.exit_code == 0, report.output
    assert "line: mulaw8k loss 10%, 19/200 packets lost" in out.read_text()
