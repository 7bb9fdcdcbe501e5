"""``vae import calls --redact``: nothing personal is written, text or audio, each type either form.

The calls are spoken by eSpeak NG word by word (tests/redaction_calls.py), so
the times of each value are known: the audio there must be the mask (a 1 kHz
tone), the audio around it the voice as recorded, and the recording as long
as the file imported.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from tests.helpers import cli
from tests.redaction_calls import LINES, Said, caller_lines, scan, value_span, write_call
from vae.recordings.models import Channel
from vae.recordings.read.reader import RecordingReader
from vae.recordings.redact import ledger


def _peak_hz(samples: np.ndarray, rate: int) -> float:
    spectrum = np.abs(np.fft.rfft(samples.astype(np.float64) * np.hanning(len(samples))))
    return float(np.argmax(spectrum) * rate / len(samples))


def _rms(samples: np.ndarray) -> float:
    return float(np.sqrt(np.mean(samples.astype(np.float64) ** 2))) if len(samples) else 0.0


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, list[Said]]]:
    folder = tmp_path_factory.mktemp("calls")
    said = {
        "written": write_call(folder, "written", caller_lines("written")),
        "spoken": write_call(folder, "spoken", caller_lines("spoken")),
        "nowords": write_call(folder, "nowords", caller_lines("spoken")[:3], words=False),
    }
    db = folder / "vae.db"
    import asyncio

    code, _, err = asyncio.run(
        cli("import", "calls", str(folder), "--redact", "--db", str(db), "--run-id", "calls")
    )
    assert code == 0, err
    return db, said


def test_nothing_personal_reaches_the_file_or_its_wal(
    imported: tuple[Path, dict[str, list[Said]]],
) -> None:
    db, _ = imported
    assert scan([db, Path(f"{db}-wal")]) == {}
    with RecordingReader(db) as reader:
        run = reader.get_run("calls")
        assert run is not None and run.options["redacted"]["mode"] == "import"


@pytest.mark.parametrize("form", ["written", "spoken"])
def test_each_value_is_masked_where_it_was_said(
    imported: tuple[Path, dict[str, list[Said]]], form: str
) -> None:
    db, said = imported
    original, rate = sf.read(str(db.parent / f"{form}.wav"), dtype="int16", always_2d=True)
    with RecordingReader(db) as reader:
        session = next(s for s in reader.sessions("calls") if s.scenario_name == form)
        user = reader.read_channel(session.session_id, Channel.USER)
        agent = reader.read_channel(session.session_id, Channel.AGENT)
    # The recording keeps its length on both channels, and the agent's voice is untouched.
    assert len(user.samples) == len(agent.samples) == len(original)
    assert np.array_equal(agent.samples, original[:, 1])
    lines = [s for s in said[form] if s.side == "user"]
    for (entity, parts), line in zip(LINES.items(), lines, strict=True):
        value = parts[2] if form == "written" else parts[3]
        start, end = value_span(line, value)
        a, b = int((start + 0.02) * rate), int((end - 0.02) * rate)
        before = original[a:b, 0]
        after = user.samples[a:b]
        assert _rms(before) > 300, entity  # there was a voice there ...
        assert abs(_peak_hz(after, rate) - 1000) < 15, entity  # ... and now the tone
        assert not np.array_equal(before, after)
        # The first word of the line ("My", "Call", ...) is kept as spoken.
        w = line.words[0]
        x, y = int(w["start"] * rate), int(w["end"] * rate)
        assert np.array_equal(user.samples[x:y], original[x:y, 0]), entity


def test_without_word_timings_the_whole_turn_is_masked_and_the_ledger_says_so(
    imported: tuple[Path, dict[str, list[Said]]],
) -> None:
    db, said = imported
    original, rate = sf.read(str(db.parent / "nowords.wav"), dtype="int16", always_2d=True)
    card = said["nowords"][1]
    with RecordingReader(db) as reader:
        session = next(s for s in reader.sessions("calls") if s.scenario_name == "nowords")
        user = reader.read_channel(session.session_id, Channel.USER).samples
        entries = [e for e in ledger.entries(reader.conn, "calls")
                   if e.session_id == session.session_id and e.location == "audio"]  # fmt: skip
    (entry,) = entries
    assert (entry.entity, entry.method, entry.channel) == ("CREDIT_CARD", "turn", "user")
    assert "no word timings" in entry.note
    assert entry.start_s is not None and entry.start_s <= card.start
    # The whole turn, "My card number is" included, is the tone now.
    a, b = int((card.start + 0.05) * rate), int((card.end - 0.1) * rate)
    assert abs(_peak_hz(user[a:b], rate) - 1000) < 15
    assert _rms(original[a:b, 0]) > 300


def test_the_report_plays_the_masked_audio_and_shows_the_ledger(
    imported: tuple[Path, dict[str, list[Said]]], tmp_path: Path
) -> None:
    import asyncio
    import base64
    import io
    import re

    db, said = imported
    report = tmp_path / "report.html"
    code, _, err = asyncio.run(cli("report", "calls", "--db", str(db), "-o", str(report)))
    assert code == 0, err
    html = report.read_text()
    assert "&lt;CREDIT_CARD&gt;" in html and 'id="redaction"' in html
    original, file_rate = sf.read(str(db.parent / "spoken.wav"), always_2d=True)
    start, end = value_span(said["spoken"][1], LINES["CREDIT_CARD"][3])
    players = []
    for uri in re.findall(r"data:audio/[a-z]+;base64,([A-Za-z0-9+/=]+)", html):
        stereo, rate = sf.read(io.BytesIO(base64.b64decode(uri)), always_2d=True)
        players.append((stereo, rate))
    # The spoken call's player (the one as long as its file): the card number is the tone.
    ((stereo, rate),) = [
        (x, r) for x, r in players if abs(len(x) / r - len(original) / file_rate) < 0.2
    ]
    caller = stereo[int((start + 0.05) * rate) : int((end - 0.05) * rate), 0]
    assert abs(_peak_hz(caller, rate) - 1000) < 15
