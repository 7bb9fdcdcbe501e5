"""`vae demo --modality text` and `--clock virtual`: the example suite, the same verdicts.

The whole example suite (``examples/suite``) runs three times through the real
demo — audio on the real clock (the one whole-suite run on wall time the
tests keep: the reference), text turns (on the virtual clock, which
``--clock auto``, text's default, takes with the reference bots), audio on
the virtual clock — with
the scripted reference bots, the scorer and the stand-in judge. Every
scenario must end the same way in each tier (stop reason, verdict, the
gating signals that fail), the suite's own tags must hold (``expect-pass``
passes, ``expect-fail`` fails), and the tiers must be what they claim: no
audio and no audio-only verdicts in text, the virtual run much faster than
its calls. Counts come from the suite's files, never from a constant.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner

from vae.cli.main import vae
from vae.recordings.models import Channel, Verdict
from vae.recordings.read.reader import RecordingReader

SUITE = Path(__file__).resolve().parents[3] / "examples" / "suite"


def expected() -> dict[str, str]:
    """Scenario name -> "expect-pass" or "expect-fail", from the suite's own tags."""
    out = {}
    for path in sorted(SUITE.glob("*.yaml")):
        doc = yaml.safe_load(path.read_text())
        tags = set(doc.get("tags", []))
        (tag,) = tags & {"expect-pass", "expect-fail"}
        out[doc["name"]] = tag
    return out


def demo(db: Path, *extra: str) -> dict[str, Any]:
    result = CliRunner().invoke(vae, ["demo", "--db", str(db), "--json", *extra])
    assert result.exit_code == 0, result.output
    doc: dict[str, Any] = json.loads(result.stdout)
    assert doc["run_status"] == "completed", doc["run_error"]
    return doc


def outcome(doc: dict[str, Any]) -> dict[str, tuple[str, str, tuple[str, ...]]]:
    return {
        s["scenario"]: (s["verdict"], s["stop_reason"], tuple(sorted(s["failing"])))
        for s in doc["sessions"]
    }


def test_every_tier_gives_the_example_suite_the_same_verdicts(tmp_path: Path) -> None:
    tags = expected()
    audio = demo(tmp_path / "audio.db")
    text = demo(tmp_path / "text.db", "--modality", "text")
    virtual = demo(tmp_path / "virtual.db", "--clock", "virtual")
    assert (text["modality"], text["clock"]) == ("text", "auto")
    assert {s["clock"] for s in text["sessions"]} == {"virtual"}, "both bots declare it"
    assert (virtual["modality"], virtual["clock"]) == ("audio", "virtual")

    reference = outcome(audio)
    assert set(reference) == set(tags)
    for name, tag in tags.items():
        assert reference[name][0] == ("passed" if tag == "expect-pass" else "failed"), name
    assert outcome(text) == reference, "text: the same ends, verdicts and failing signals"
    assert outcome(virtual) == reference, "virtual clock: the same as real time"
    built_to_fail = [n for n, t in tags.items() if t == "expect-fail"]
    assert len(built_to_fail) >= 5 and all(reference[n][2] for n in built_to_fail)

    # Text: no audio was recorded, and the audio-only signals are not applicable — never
    # passed or failed, never with a value that would describe silence.
    with RecordingReader(tmp_path / "text.db") as reader:
        run_id = str(text["run_id"])
        (scoring,) = reader.scorings(run_id)
        for s in reader.sessions(run_id):
            mode = reader.session_mode(s.session_id)
            assert (mode.modality, mode.clock) == ("text", "virtual")
            for channel in Channel:
                assert reader.segments(s.session_id, channel) == []
        timing = [r for r in reader.scores(scoring.scoring_id) if r.signal.startswith("timing.")]
        assert timing and all(
            r.verdict is Verdict.NOT_APPLICABLE
            and r.value is None
            and r.detail["modality"] == "text"
            for r in timing
        )
        assert "latency" not in text["summary"] or text["summary"]["latency"].get("p50_s") is None
        report = Path(str(text["report"])).read_text()
        assert "text on the virtual clock (auto)" in report and "<audio" not in report

    # The virtual clock: the same kind of recording, far faster than its calls took.
    with RecordingReader(tmp_path / "virtual.db") as reader:
        run_id = str(virtual["run_id"])
        sessions = reader.sessions(run_id)
        calls = sum(s.duration_s for s in sessions)
        for s in sessions:
            assert reader.session_mode(s.session_id).clock == "virtual"
            audio_in = reader.read_channel(s.session_id, Channel.TO_AGENT)
            # Every channel spans the call on the sample clock, as on the real clock.
            assert abs(len(audio_in.samples) / audio_in.sample_rate - s.duration_s) < 0.1
    assert calls > 3 * float(virtual["seconds"]), (calls, virtual["seconds"])
    report = Path(str(virtual["report"])).read_text()
    assert "audio on the virtual clock" in report and "<audio" in report
