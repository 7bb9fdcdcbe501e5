"""Whose words count: each side's from its bot or from the transcription, and what was heard.

Why one place: NL assertions and the judge read the conversation, and
HEARD_CORRECTLY compares what the caller said with what the agent heard; all
of them must agree on where each side's words come from, and on what happens
when a transcription failed. ``--transcripts`` chooses (``config.transcripts``):

- ``bots`` (default): what each side's bot reported saying (SPOKEN); the
  transcription fills only a side whose bot reported nothing;
- ``asr``: the transcription of each side's recorded channel only;
- ``prefer-asr``: the transcription where every turn of that side succeeded,
  else what the bot reported.

What a listener heard is its own HEARD report; when it reported nothing and a
transcription ran, the transcription of the audio the bridge delivered to it
(``to_agent``) stands in, labelled as such. A side whose words depend on a
turn that could not be transcribed carries that turn in ``errors``: what
depends on it is ``unscored`` (``asr_error``), never read as silence.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from vae.recordings.models import TranscriptRecord
from vae.scorer_service.context import ScoringContext, TranscriptLine

ASR_ERROR = "asr_error"
#: The channel holding what a side said, and what the bridge delivered to a listener.
SAID_CHANNEL = {"user": "user", "agent": "agent"}
HEARD_CHANNEL = {"user": "to_user", "agent": "to_agent"}


@dataclass(frozen=True)
class Words:
    """One side's lines, where they came from ("bots", "asr" or "" for nowhere), failures.

    A transcription that found no words is a source with no lines (nothing was
    heard), unlike no source at all (nobody knows).
    """

    lines: list[TranscriptLine] = field(default_factory=list)
    source: str = ""
    errors: list[str] = field(default_factory=list)


def _turns(ctx: ScoringContext, channel: str) -> list[TranscriptRecord]:
    return [t for t in ctx.asr if t.channel == channel]


def _from_asr(ctx: ScoringContext, channel: str, side: str) -> Words:
    turns = _turns(ctx, channel)
    lines = [TranscriptLine(side, t.start_s, t.text) for t in turns if not t.error and t.text]
    errors = [
        f"{channel} turn {t.turn + 1} ({t.start_s:.1f}–{t.end_s:.1f} s): {t.error}"
        for t in turns
        if t.error
    ]
    return Words(lines, "asr", errors)


def spoken(ctx: ScoringContext, side: str, mode: str) -> Words:
    """What ``side`` said, by the rule above."""
    bots = Words([t for t in ctx.bot_transcripts if t.side == side and t.text.strip()], "bots")
    channel = SAID_CHANNEL[side]
    if channel not in ctx.asr_channels:
        return bots if bots.lines else Words()
    asr = _from_asr(ctx, channel, side)
    if mode == "asr":
        return asr
    if mode == "prefer-asr":
        return asr if not asr.errors or not bots.lines else bots
    return bots if bots.lines else asr


def heard(ctx: ScoringContext, listener: str) -> Words:
    """What ``listener`` heard: its own reports, else a transcription of what reached it."""
    own = [t for t in ctx.heard if t.side == listener and t.text.strip()]
    if own:
        return Words(own, "bots")
    channel = HEARD_CHANNEL[listener]
    if channel not in ctx.asr_channels:
        return Words()
    return _from_asr(ctx, channel, listener)


def rebuild_conversation(ctx: ScoringContext, mode: str) -> list[str]:
    """Set ``ctx.transcripts`` from each side's words (and ``ctx.conversation_errors``:
    the failed turns they depend on, also returned)."""
    if not ctx.asr_channels:
        return []
    lines: list[TranscriptLine] = []
    errors: list[str] = []
    for side in ("user", "agent"):
        words = spoken(ctx, side, mode)
        lines += words.lines
        errors += words.errors
    ctx.transcripts = sorted(lines, key=lambda t: t.t_s)
    ctx.conversation_errors = errors
    return errors
