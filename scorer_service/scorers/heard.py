"""HEARD_CORRECTLY: did the agent hear what the caller said?

The caller's words (its bot's SPOKEN transcript, or the transcription stage's,
:mod:`vae.scorer_service.transcription.words`) are aligned with what the agent
reported hearing (its HEARD transcript — pipecat's ``user-transcription`` —
or, with a transcription stage and no report, a transcription of the audio
the bridge delivered to it), after normalising case, punctuation and numbers
(:mod:`vae.scorer_service.heard`). The value is 1 − WER over the session; the
verdict is ``failed`` when any critical mismatch exists (a date, number, code
or name said one way and heard another, or not heard), else ``passed``.
Non-gating by default; a scenario may list it in ``success_signals``.

Undecidable, never passed: ``unscored`` with ``no_heard_transcript`` when the
agent reported nothing it heard and no transcription ran (or none could stand
in), ``no_said_transcript`` when the caller's words are unknown, and
``asr_error`` when the words it needs come from a turn that could not be
transcribed. ``not_applicable`` when the caller said nothing at all.
"""

from __future__ import annotations

from typing import Any

from vae.recordings.models import Verdict
from vae.scorer_service import signals
from vae.scorer_service.context import ScoringContext
from vae.scorer_service.heard.align import score_from
from vae.scorer_service.heard.compare import MAX_TURNS, Line, compare, mismatch_text
from vae.scorer_service.scorer import SignalScore, passed_or_failed
from vae.scorer_service.transcription.words import ASR_ERROR, heard, spoken

NO_HEARD = "no_heard_transcript"
NO_SAID = "no_said_transcript"
SPEAKER, LISTENER = "user", "agent"


def _unscored(cause: str, message: str, detail: dict[str, Any]) -> SignalScore:
    return SignalScore(
        signals.HEARD_CORRECTLY, Verdict.UNSCORED, None, detail, f"{cause}: {message}"
    )


class HeardScorer:
    name = "heard"
    version = "1"
    needs_audio = False

    def __init__(self, transcripts: str = "bots") -> None:
        self.transcripts = transcripts

    async def score(self, ctx: ScoringContext) -> list[SignalScore]:
        said = spoken(ctx, SPEAKER, self.transcripts)
        got = heard(ctx, LISTENER)
        base: dict[str, Any] = {
            "speaker": SPEAKER,
            "listener": LISTENER,
            "said_source": said.source,
            "heard_source": got.source,
        }
        if not got.source:
            if not ctx.asr_channels:
                why = (
                    "the agent reported nothing it heard, and no transcription ran "
                    "(vae rescore --transcribe ENGINE)"
                )
            else:
                why = (
                    "the agent reported nothing it heard, and the recording holds no audio "
                    "delivered to it to transcribe"
                )
            return [_unscored(NO_HEARD, why, base)]
        if not said.source:
            if ctx.session.user_turns == 0:
                na = dict(base, reason="the caller said nothing")
                return [SignalScore(signals.HEARD_CORRECTLY, Verdict.NOT_APPLICABLE, None, na)]
            why = (
                "the caller's bot reported no transcript of what it said, and no transcription ran"
            )
            return [_unscored(NO_SAID, why, base)]
        errors = said.errors + got.errors
        if errors:
            detail = dict(base, failed_turns=errors[:20])
            return [
                _unscored(
                    ASR_ERROR,
                    f"{len(errors)} turn(s) could not be transcribed: {errors[0]}",
                    detail,
                )
            ]
        result = compare(
            [Line(t.t_s, t.text) for t in said.lines], [Line(t.t_s, t.text) for t in got.lines]
        )
        a = result.alignment
        detail = dict(
            base,
            wer=round(a.wer, 4),
            words=a.ref_words,
            substitutions=a.substitutions,
            deletions=a.deletions,
            insertions=a.insertions,
            mismatches=[m.as_dict() for m in result.mismatches],
            turns=[
                {
                    "t_s": round(t.t_s, 3), "said": t.said, "heard": t.heard,
                    "said_marks": t.said_marks, "heard_marks": t.heard_marks,
                    "words": t.words, "errors": t.errors,
                }
                for t in result.turns[:MAX_TURNS]
            ],
        )  # fmt: skip
        if result.mismatches:
            first = result.mismatches[0]
            detail["reason"] = mismatch_text(first.as_dict())
        verdict = passed_or_failed(not result.mismatches)
        return [SignalScore(signals.HEARD_CORRECTLY, verdict, score_from(a.wer), detail)]
