"""``vae export`` files read back with soundfile: channels, rate, duration, content."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
from click.testing import CliRunner

from tests.factories import SessionSpec, Turn, scenario, write_run_sync
from vae.cli.main import vae

RATE = 16000


@pytest.fixture
def recorded(tmp_path: Path) -> tuple[Path, str]:
    """One 6 s session: agent speaks 0.5–2.0 s, user 3.0–4.5 s, continuous senders."""
    spec = SessionSpec(
        "export_me",
        turns=[Turn("agent", 0.5, 2.0, "Hello there."), Turn("user", 3.0, 4.5, "Hi, a table.")],
        continuous_audio=True,
        duration_s=6.0,
        sample_rate=RATE,
    )
    db = tmp_path / "vae.db"
    info = write_run_sync(db, [scenario("export_me")], [spec])
    return db, info.run_id


def export(db: Path, run_id: str, fmt: str, out: Path) -> list[Path]:
    result = CliRunner().invoke(
        vae, ["export", run_id, "--format", fmt, "-o", str(out), "--db", str(db), "--json"]
    )
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output[result.output.index("{") :])
    return [Path(p) for p in doc["files"]]


def loud(samples: np.ndarray, t: float) -> float:
    i = int(t * RATE)
    return float(np.abs(samples[i - 400 : i + 400]).max())


@pytest.mark.parametrize("fmt", ["wav", "flac"])
def test_stereo_and_mono_files_have_the_right_channels_rate_and_duration(
    recorded: tuple[Path, str], tmp_path: Path, fmt: str
) -> None:
    db, run_id = recorded
    files = {p.name.split(".")[-2]: p for p in export(db, run_id, fmt, tmp_path / "out")}
    assert set(files) == {"stereo", "user", "agent"}
    stereo, rate = sf.read(files["stereo"], dtype="int16")
    assert rate == RATE and stereo.ndim == 2 and stereo.shape[1] == 2
    assert len(stereo) / rate == pytest.approx(6.0, abs=0.03)
    # user on the left, agent on the right, each where it spoke on the bridge clock
    assert loud(stereo[:, 1], 1.0) > 5000 and loud(stereo[:, 0], 1.0) == 0
    assert loud(stereo[:, 0], 3.7) > 5000 and loud(stereo[:, 1], 3.7) == 0
    for side in ("user", "agent"):
        mono, mono_rate = sf.read(files[side], dtype="int16")
        info = sf.info(files[side])
        assert info.channels == 1 and mono_rate == RATE
        assert info.format == fmt.upper()
        assert len(mono) / mono_rate == pytest.approx(6.0, abs=0.03)
    assert np.array_equal(sf.read(files["agent"], dtype="int16")[0], stereo[:, 1])


def test_json_export_holds_the_transcript_in_order(
    recorded: tuple[Path, str], tmp_path: Path
) -> None:
    db, run_id = recorded
    (path,) = export(db, run_id, "json", tmp_path / "out")
    doc = json.loads(path.read_text())
    assert [(t["side"], t["text"]) for t in doc["transcript"]] == [
        ("agent", "Hello there."),
        ("user", "Hi, a table."),
    ]
    assert doc["session"]["scenario_name"] == "export_me"


def test_an_unknown_session_is_a_usage_error(recorded: tuple[Path, str], tmp_path: Path) -> None:
    db, run_id = recorded
    result = CliRunner().invoke(
        vae, ["export", run_id, "--session", "nope", "-o", str(tmp_path), "--db", str(db)]
    )
    assert result.exit_code == 2
    assert "no session 'nope'" in result.output
