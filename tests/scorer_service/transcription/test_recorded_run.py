"""``--transcribe pocketsphinx`` on a run recorded through the bridge.

The embedded recogniser transcribes every turn of the recorded channels; the
layer is stored per turn, the scoring carries a WER figure against the bots'
own transcripts, and what the agent heard is decided from a transcription of
the audio the bridge delivered to it when the agent reported nothing itself.
Quality is not asserted here (pocketsphinx on a synthetic voice is poor: the
measured figure is in docs/benchmarks.md); that it runs and stores is.
"""

from __future__ import annotations

from pathlib import Path

from tests.bots.conftest import run_with_bots
from tests.vae.speech.test_stt import require_pocketsphinx
from vae.bridge_service.config import BridgeSettings
from vae.bridge_service.server import BridgeServer
from vae.recordings.models import Verdict
from vae.recordings.read.reader import RecordingReader
from vae.recordings.vad import spurts
from vae.scorer_service.config import ScoringConfig
from vae.scorer_service.scoring.rescore import rescore
from vae.speech.stt_settings import TranscriptionSettings

SCENARIO = {
    "name": "asr_booking",
    "max_duration": 40,
    "user": {"script": ["I would like a table for two.", {"say": "Thanks, bye.", "end": True}]},
    "agent": {"script": ["Hello, Luigi's.", "Sure, booked for two."]},
    "success_signals": ["CLEAN_EXIT"],
}


async def test_pocketsphinx_transcribes_a_recorded_run_turn_by_turn(tmp_path: Path) -> None:
    require_pocketsphinx()
    settings = BridgeSettings(address="127.0.0.1:0", wait_timeout_s=30)
    async with BridgeServer(tmp_path / "vae.db", settings) as bridge:
        run_id = await run_with_bots(bridge, [SCENARIO])
    db = bridge.db_path
    asr = TranscriptionSettings("pocketsphinx")
    result = await rescore(db, run_id, ScoringConfig(transcription=asr))
    (outcome,) = result.sessions
    scores = {s.signal: s for s in outcome.scores}
    with RecordingReader(db) as reader:
        layer = reader.transcripts(result.scoring.scoring_id)
        expected = {
            channel: len(spurts(audio.samples, audio.sample_rate))
            for channel in ("user", "agent", "to_agent")
            if len((audio := reader.read_channel(outcome.session_id, channel)).samples)
        }
    # One stored row per turn found on each channel; the agent reported nothing it heard,
    # so what reached it (to_agent) was transcribed as well.
    found = {c: sum(1 for r in layer if r.channel == c) for c in expected}
    assert found == expected and expected["user"] >= 2 and expected["agent"] >= 2
    assert all(r.error == "" and isinstance(r.text, str) for r in layer)
    # A WER figure against what the bots reported saying, per session and for the run.
    wer = scores["transcription.wer"]
    assert wer.verdict is Verdict.NOT_APPLICABLE and wer.value is not None and wer.value >= 0
    assert wer.detail["engine"]["engine"] == "pocketsphinx" and wer.detail["words"] > 0
    summary = result.scoring.summary["transcription"]
    assert summary["wer"] == round(wer.value, 4) and summary["turns"] == len(layer)
    assert summary["requests"] == len(layer) and summary["busy_s"] > 0
    print(f"pocketsphinx on the buzz voice: WER {summary['wer']:.0%}, "
          f"{summary['audio_s'] / summary['busy_s']:.1f}x real time")  # fmt: skip
    # What the agent heard: from the delivered audio, labelled as such, decided.
    heard = scores["HEARD_CORRECTLY"]
    assert heard.verdict in (Verdict.PASSED, Verdict.FAILED), heard.error
    assert (heard.detail["said_source"], heard.detail["heard_source"]) == ("bots", "asr")
    # --transcripts asr: the caller's words from the transcription too (cached: no calls).
    again = await rescore(
        db,
        run_id,
        ScoringConfig(transcription=TranscriptionSettings("pocketsphinx", transcripts="asr")),
    )
    assert again.scoring.summary["transcription"]["requests"] == 0
    heard_asr = next(s for s in again.sessions[0].scores if s.signal == "HEARD_CORRECTLY")
    assert heard_asr.detail.get("said_source") == "asr"
