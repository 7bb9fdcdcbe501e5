"""The modality rule: a text session is never scored on what only audio can show."""

from __future__ import annotations

from vae.recordings.models import SessionMode, Verdict
from vae.scorer_service.scorer import SignalScore, info
from vae.scorer_service.scoring.composite import cause_of
from vae.scorer_service.scoring.modality import mark_modality, needs_audio

RESULTS = [
    SignalScore("ACTION_MATCH", Verdict.PASSED, None, {"reason": "ok"}),
    info("timing.response_latency_p50_s", 0.8, {"latencies": [0.8]}),
    info("timing.mutual_silence_s", 23.4),
    info("bot.agent.llm_latency", 0.2),
]


def test_an_audio_session_keeps_every_figure() -> None:
    assert mark_modality(RESULTS, SessionMode(), set()) == RESULTS


def test_a_text_session_has_no_audio_figures() -> None:
    out = {r.signal: r for r in mark_modality(RESULTS, SessionMode("text", "virtual"), set())}
    for signal in ("timing.response_latency_p50_s", "timing.mutual_silence_s"):
        r = out[signal]
        assert (r.verdict, r.value, r.error) == (Verdict.NOT_APPLICABLE, None, "")
        assert r.detail == {
            "modality": "text",
            "clock": "virtual",
            "reason": f"a text session has no audio: {signal} is measured from audio",
        }
    assert out["ACTION_MATCH"] == RESULTS[0], "everything else is scored as in audio"
    assert out["bot.agent.llm_latency"] == RESULTS[3], "bot-reported metrics are not audio"


def test_a_gating_audio_signal_is_unscored_with_cause_modality() -> None:
    gated = "timing.response_latency_p50_s"
    (r,) = [
        r
        for r in mark_modality(RESULTS, SessionMode("text"), {gated, "ACTION_MATCH"})
        if r.signal == gated
    ]
    assert r.verdict is Verdict.UNSCORED and r.value is None
    assert cause_of(r) == "modality"  # never passed: its composite is unscored too
    assert needs_audio(gated) and not needs_audio("NL_ASSERTION")
