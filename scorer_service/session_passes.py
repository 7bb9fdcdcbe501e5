"""What runs on a session's scores once every scorer has: the passes that read them all.

Why apart from the scorers: each of these needs the other signals' results —
an imported recording's missing inputs (:mod:`scorer_service.lacking`), a
text session's audio-only signals (:mod:`scorer_service.modality`), a
conversation with turns the transcription could not read
(:mod:`scorer_service.transcription.stage`), a failure traced to a mishearing
(:mod:`scorer_service.heard.attribution`) — and the composites come last, from
the final verdicts (:mod:`scorer_service.composite`). The order is the rule:
a signal is unscored for what the recording lacks before anything is
attributed, and attribution never changes a verdict.
"""

from __future__ import annotations

from scorer_service.composite import composites
from scorer_service.context import ScoringContext
from scorer_service.heard.attribution import attribute
from scorer_service.lacking import mark_lacking
from scorer_service.modality import mark_modality
from scorer_service.scorers.base import SignalScore
from scorer_service.transcription.stage import mark_asr_errors, wer_score


def finish(
    results: list[SignalScore],
    ctx: ScoringContext,
    lacks: set[str],
    *,
    reads_conversation: bool,
) -> list[SignalScore]:
    """``results`` after every pass, with the composites appended."""
    out = mark_lacking(results, lacks, ctx, judge_reads_conversation=reads_conversation)
    # A text session has no audio to measure (scorer_service.modality).
    out = mark_modality(out, ctx.mode, {str(s) for s in ctx.scenario.success_signals})
    out = mark_asr_errors(out, ctx, judge_reads_conversation=reads_conversation)
    wer = wer_score(ctx)
    if wer is not None:
        out.append(wer)
    out = attribute(out, ctx)
    return [*out, *composites(ctx, out)]
