"""What runs on a session's scores once every scorer has: the passes that read them all.

Why apart from the scorers: each of these needs the other signals' results —
an imported recording's missing inputs (:mod:`vae.scorer_service.scoring.lacking`), a
text session's audio-only signals (:mod:`vae.scorer_service.scoring.modality`), a
conversation with turns the transcription could not read
(:mod:`vae.scorer_service.transcription.stage`), a failure traced to a mishearing
(:mod:`vae.scorer_service.heard.attribution`) — and the composites come last, from
the final verdicts (:mod:`vae.scorer_service.scoring.composite`). The order is the rule:
a signal is unscored for what the recording lacks before anything is
attributed, and attribution never changes a verdict.
"""

from __future__ import annotations

from vae.scorer_service.context import ScoringContext
from vae.scorer_service.heard.attribution import attribute
from vae.scorer_service.scorer import SignalScore
from vae.scorer_service.scoring.composite import composites
from vae.scorer_service.scoring.lacking import mark_lacking
from vae.scorer_service.scoring.modality import mark_modality
from vae.scorer_service.transcription.stage import mark_asr_errors, wer_score


def finish(
    results: list[SignalScore],
    ctx: ScoringContext,
    lacks: set[str],
    *,
    reads_conversation: bool,
) -> list[SignalScore]:
    """``results`` after every pass, with the composites appended."""
    out = mark_lacking(results, lacks, ctx, judge_reads_conversation=reads_conversation)
    # A text session has no audio to measure (vae.scorer_service.scoring.modality).
    out = mark_modality(out, ctx.mode, {str(s) for s in ctx.scenario.success_signals})
    out = mark_asr_errors(out, ctx, judge_reads_conversation=reads_conversation)
    wer = wer_score(ctx)
    if wer is not None:
        out.append(wer)
    out = attribute(out, ctx)
    return [*out, *composites(ctx, out)]
