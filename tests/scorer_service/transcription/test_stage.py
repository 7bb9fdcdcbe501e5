"""``vae rescore --transcribe``: a transcription stage of the scoring, for real.

An imported call with no transcript sidecar has nothing for the judge to read;
transcribed through the real ``openai`` client against a loopback server that
speaks ``/v1/audio/transcriptions``, its NL assertion becomes decided. The
transcripts are a layer tied to the scoring (the recording is untouched),
cached (a second rescore makes no calls), and a turn that cannot be
transcribed — refused, 5xx, a timeout, garbage — leaves what depends on it
unscored (``asr_error``), never read as silence.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.helpers import closed_port, count
from tests.recordings.calls_fixture import RATE, TURNS, call_channels, write_pair
from tests.stt_server import ByDuration, Reply, TranscriptionServer
from vae.bots.stand_in.offline_judge import MODEL, offline_judge_server
from vae.cli.main import vae
from vae.recordings.importers.calls import import_calls
from vae.recordings.models import EventKind, Verdict
from vae.recordings.read.reader import RecordingReader
from vae.recordings.vad import spurts
from vae.scorer_service.config import JudgeSettings, ScoringConfig
from vae.scorer_service.edge.convert import config_from_proto, config_to_proto
from vae.scorer_service.scoring.rescore import rescore
from vae.speech.stt_settings import TranscriptionSettings

ASSERTION = 'The agent says "it is moved".'


def perfect_ears() -> ByDuration:
    """A recogniser that knows this call: each turn's text by its length, as it will hear it."""
    ears = ByDuration({})
    user, agent, _ = call_channels()
    for side, samples in (("user", user), ("agent", agent)):
        texts = [text for s, _, text in TURNS if s == side]
        for spurt, text in zip(spurts(samples, RATE), texts, strict=True):
            ears.texts[ears.measure(samples[spurt.start : spurt.end], RATE)] = text
    assert len(ears.texts) == len(TURNS), "every turn has a length of its own"
    return ears


def write_call(folder: Path) -> None:
    """A call with no transcript sidecar, gated on an NL assertion."""
    write_pair(folder, "call", fmt="WAV")
    scenario = {"nl_assertions": [ASSERTION], "success_signals": ["NL_ASSERTION"]}
    (folder / "call.scenario.json").write_text(json.dumps(scenario))


def run_cli(*args: str, code: int = 0) -> Any:
    result = CliRunner().invoke(vae, [*args, "--json"], catch_exceptions=False)
    assert result.exit_code == code, result.output
    return json.loads(result.stdout)


def scores_of(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    (session,) = doc["sessions"]
    return {s["signal"]: s for s in session["scores"]}


def test_an_imported_call_without_transcripts_becomes_decided(tmp_path: Path) -> None:
    calls, db = tmp_path / "calls", str(tmp_path / "vae.db")
    calls.mkdir()
    write_call(calls)
    run_cli("import", "calls", str(calls), "--run-id", "june", "--db", db)
    with offline_judge_server() as judge, TranscriptionServer(perfect_ears()) as stt:
        j = ["--judge-base-url", judge.base_url, "--judge-model", MODEL,
             "--judge-include-conversation", "--db", db]  # fmt: skip
        before = run_cli("rescore", "--run", "june", *j, code=1)
        asr = ["--transcribe", "openai", "--asr-base-url", stt.base_url,
               "--asr-model", "whisper-1"]  # fmt: skip
        first = run_cli("rescore", "--run", "june", *j, *asr)
        calls_made = stt.calls
        second = run_cli("rescore", "--run", "june", *j, *asr)
        assert stt.calls == calls_made, "the second rescore asks the engine nothing"
        # A judge that does not read the conversation cannot use the transcripts: said so.
        blind = CliRunner().invoke(vae, ["rescore", "--run", "june", *j[:4], *j[5:], *asr])
        assert blind.exit_code == 1
        assert "without --judge-include-conversation" in blind.stderr
    # Without a transcription: nothing to judge from, unscored (never passed).
    assert scores_of(before)["is_successful"]["verdict"] == "unscored"
    # With one: the judge read the transcribed conversation and decided.
    got = scores_of(first)
    assert got["NL_ASSERTION"]["verdict"] == "passed", got["NL_ASSERTION"]
    assert got["is_successful"]["verdict"] == "passed"
    summary = first["summary"]["transcription"]
    turns = len(TURNS)
    assert (summary["turns"], summary["requests"], summary["errors"]) == (turns, turns, 0)
    assert summary["engine"] == {
        "engine": "openai", "base_url": stt.base_url, "model": "whisper-1", "language": "",
        "temperature": 0.0, "response_format": "json",
    }  # fmt: skip
    assert first["versions"]["transcriber"]["engine"] == "openai"
    assert "api_key" not in first["config"]["transcription"]
    again = second["summary"]["transcription"]
    assert (again["requests"], again["cache_hits"]) == (0, turns)
    assert scores_of(second)["NL_ASSERTION"]["verdict"] == "passed"
    # The layer is tied to each scoring; the recording itself has no transcript events.
    with RecordingReader(db) as reader:
        (session,) = reader.sessions("june")
        assert reader.events(session.session_id, [EventKind.TRANSCRIPT]) == []
        layer = reader.transcripts(first["scoring_id"])
        assert reader.transcripts(second["scoring_id"]) != []
        assert reader.transcripts(before["scoring_id"]) == []
    assert sorted(r.text for r in layer) == sorted(text for _, _, text in TURNS)
    said = {(r.channel, r.text) for r in layer}
    assert ("agent", "Done, it is moved.") in said and ("user", "Thanks, bye.") in said
    assert all(not r.error and not r.cached for r in layer)


FAILURES = {
    "refused": None,
    "5xx": Reply(status=500, body=b'{"error": {"message": "boom"}}'),
    "timeout": Reply(delay_s=3.0),
    "garbage": Reply(body=b"not json at all", content_type="text/plain"),
}


@pytest.mark.parametrize("failure", sorted(FAILURES))
async def test_a_transcription_that_fails_leaves_what_depends_on_it_unscored(
    tmp_path: Path, db_path: Path, failure: str
) -> None:
    write_call(tmp_path)
    report = await import_calls(db_path, [tmp_path], run_id="june")
    reply = FAILURES[failure]

    async def score(url: str) -> Any:
        settings = TranscriptionSettings(
            "openai", url, "whisper-1", timeout_s=0.5, max_retries=1, backoff_s=0.01
        )
        config = ScoringConfig(judge=judge, transcription=settings)
        return await rescore(db_path, report.run_id, config)

    with offline_judge_server() as judge_server:
        judge = JudgeSettings(judge_server.base_url, MODEL, include_conversation=True)
        if reply is None:
            with closed_port() as port:
                result = await score(f"http://127.0.0.1:{port}/v1")
        else:
            with TranscriptionServer(lambda _u: reply) as stt:
                result = await score(stt.base_url)
    scores = {s.signal: s for s in result.sessions[0].scores}
    for signal in ("NL_ASSERTION", "JUDGE_PASSED"):
        assert scores[signal].verdict is Verdict.UNSCORED, (signal, scores[signal])
        assert scores[signal].error.startswith("asr_error: "), scores[signal].error
    assert scores["is_successful"].verdict is Verdict.UNSCORED
    assert scores["is_successful"].detail["causes"] == ["asr_error"]
    assert result.scoring.summary["transcription"]["errors"] == len(TURNS)
    assert result.scoring.summary["unscored"]["causes"] == {"asr_error": 1}
    with RecordingReader(db_path) as reader:
        layer = reader.transcripts(result.scoring.scoring_id)
    # Each failed turn keeps its error and no text: never an empty "said nothing".
    assert len(layer) == len(TURNS) and all(r.error and r.text == "" for r in layer)
    # Failures are not cached: the next rescore asks again.
    assert count(db_path, "SELECT COUNT(*) FROM transcription_cache") == 0


def test_transcription_options_are_checked_before_anything_is_written(tmp_path: Path) -> None:
    db = str(tmp_path / "vae.db")
    calls = tmp_path / "calls"
    calls.mkdir()
    write_call(calls)
    run_cli("import", "calls", str(calls), "--run-id", "june", "--db", db)
    cases = [
        (["--transcribe", "openai"], "--asr-base-url and --asr-model"),
        (["--transcripts", "asr"], "needs a transcription (--transcribe)"),
        (["--transcribe", "whisperx"], "Invalid value for '--transcribe'"),
        (
            [
                "--transcribe",
                "openai",
                "--asr-base-url",
                "http://x/v1",
                "--asr-model",
                "m",
                "--asr-retries",
                "-1",
            ],
            "Invalid value for '--asr-retries'",
        ),
    ]
    for extra, message in cases:
        result = CliRunner().invoke(vae, ["rescore", "--run", "june", "--db", db, "--no-judge",
                                          *extra])  # fmt: skip
        assert result.exit_code == 2, (extra, result.output)
        assert message in result.output, (extra, result.output)
    with RecordingReader(db) as reader:
        assert reader.scorings("june") == [], "nothing was scored"


def test_the_transcription_config_crosses_the_wire() -> None:
    settings = TranscriptionSettings(
        "openai", "http://127.0.0.1:9/v1", "whisper-1", api_key="secret", language="en",
        timeout_s=5.0, max_retries=1, concurrency=3, transcripts="prefer-asr", no_cache=True,
    )  # fmt: skip
    config = ScoringConfig(no_judge=True, transcription=settings)
    pb = config_to_proto(config.to_dict())
    assert pb.transcription.api_key == "", "a stored config never holds the key"
    pb.transcription.api_key = "secret"  # what the wire client adds
    back = config_from_proto(pb).transcription
    assert back == settings
    assert config_from_proto(config_to_proto(ScoringConfig().to_dict())).transcription.engine == ""


async def test_the_scorer_service_transcribes_with_the_key_it_was_sent(
    tmp_path: Path, db_path: Path
) -> None:
    """``vae rescore --scorer ADDR --transcribe openai``: the stage runs in the service,
    the API key reaches the endpoint as a bearer token and is stored nowhere."""
    from vae.scorer_service.edge.server import start_scorer
    from vae.scorer_service.edge.wire_client import remote_rescore

    write_call(tmp_path)
    report = await import_calls(db_path, [tmp_path], run_id="june")
    server = await start_scorer(db_path, "127.0.0.1:0")
    try:
        with offline_judge_server() as judge, TranscriptionServer(perfect_ears()) as stt:
            settings = TranscriptionSettings("openai", stt.base_url, "whisper-1", api_key="s3cret")
            config = ScoringConfig(
                judge=JudgeSettings(judge.base_url, MODEL, include_conversation=True),
                transcription=settings,
            )
            scoring, outcomes = await remote_rescore(
                f"127.0.0.1:{server.port}", report.run_id, config
            )
            auth = stt.authorizations
    finally:
        await server.stop(1.0)
    verdicts = {s.signal: s.verdict for s in outcomes[0].scores}
    assert verdicts["NL_ASSERTION"] is Verdict.PASSED
    assert scoring.summary["transcription"]["requests"] == len(TURNS)
    assert auth and set(auth) == {"Bearer s3cret"}
    with RecordingReader(db_path) as reader:
        stored = reader.scoring(scoring.scoring_id)
    assert stored is not None and "s3cret" not in json.dumps(stored.config)
