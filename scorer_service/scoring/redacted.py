"""Scoring on redacted text (``vae rescore --redact``), and verdicts that needed a redacted value.

Why: a judge is a third party; a team that may not show it a caller's card
number can still score the call if the judge reads ``<CREDIT_CARD>`` instead.
With ``config.redaction`` set, :func:`redact_context` replaces, in each
session's context before any scorer reads it, every text a scorer or the
judge sees — the conversation, what each side heard, the transcription
stage's turns, tool calls (arguments, results, errors), final states, LLM
contexts, keys pressed, bot errors and the scenario itself (reference answer,
expected DBs, assertions) — with its redacted form (:mod:`vae.redaction`).
Expected and recorded values are redacted alike, so a comparison of two
equal card numbers compares two equal placeholders.

A comparison can still need the value itself (an assertion that the card
starts with 4). :func:`note_redaction` makes such a verdict say so: a
deterministic signal that failed on a placeholder becomes ``unscored``
(``redacted_value``), never a silent failure; a judge's verdict that mentions
one keeps its verdict with a note; a pass on placeholders says what it
compared. The scoring's summary records that it was judged on redacted text
(:func:`redaction_summary`), and ``vae scores show --json`` shows it.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import replace
from typing import Any

from vae.recordings.models import Verdict
from vae.recordings.scenarios.parse import scenario_from_dict
from vae.scorer_service import signals
from vae.scorer_service.config import ConfigError, ScoringConfig
from vae.scorer_service.context import ScoringContext, TranscriptLine
from vae.scorer_service.scorer import SignalScore

REDACTED_VALUE = "redacted_value"
_PLACEHOLDER = re.compile(r"<[A-Z][A-Z0-9_]{0,39}>")
#: Signals that compare values: a failure on a placeholder cannot be decided.
_COMPARING = (signals.ACTION_MATCH, signals.DB_STATE_MATCH, signals.DB_STATE_ASSERTION,
              signals.HEARD_CORRECTLY, signals.DTMF_RECEIVED)  # fmt: skip
_JUDGED = (signals.NL_ASSERTION, signals.JUDGE_PASSED)


@functools.lru_cache(maxsize=4)
def _redactor(config_json: str) -> Any:
    """One redactor per configuration per process (building one imports presidio)."""
    from vae.redaction.config import RedactionConfigError, RedactionUnavailable, config_from_dict
    from vae.redaction.redactor import make_redactor

    try:
        return make_redactor(config_from_dict(json.loads(config_json)))
    except (RedactionConfigError, RedactionUnavailable) as exc:
        raise ConfigError(f"redaction: {exc}") from exc


def redactor_for(config: ScoringConfig) -> Any:
    """The redactor ``config.redaction`` asks for (None: no ``--redact``)."""
    if config.redaction is None:
        return None
    return _redactor(json.dumps(config.redaction, sort_keys=True))


def redact_context(ctx: ScoringContext, config: ScoringConfig) -> ScoringContext:
    """``ctx`` with every text a scorer reads redacted (unchanged without ``--redact``)."""
    redactor = redactor_for(config)
    if redactor is None:
        return ctx

    def text(value: str) -> str:
        return str(redactor.text(value)[0])

    def value(v: Any) -> Any:
        return redactor.value(v)[0]

    def lines(items: list[TranscriptLine]) -> list[TranscriptLine]:
        return [replace(t, text=text(t.text)) for t in items]

    ctx.transcripts = lines(ctx.transcripts)
    ctx.bot_transcripts = lines(ctx.bot_transcripts)
    ctx.heard = lines(ctx.heard)
    ctx.asr = [replace(t, text=text(t.text)) for t in ctx.asr]
    ctx.tool_calls = [
        replace(c, arguments=value(c.arguments), result=value(c.result), error=text(c.error),
                action=value(c.action))
        for c in ctx.tool_calls
    ]  # fmt: skip
    ctx.final_states = {
        side: replace(fs, state=value(fs.state), context=value(fs.context))
        for side, fs in ctx.final_states.items()
    }
    ctx.keys = [replace(k, digits=text(k.digits)) for k in ctx.keys]
    ctx.bot_errors = [text(e) for e in ctx.bot_errors]
    doc = value(ctx.scenario.to_dict())
    ctx.scenario = scenario_from_dict(doc, f"scenario {ctx.scenario.name} (redacted)")
    return ctx


def note_redaction(results: list[SignalScore]) -> list[SignalScore]:
    """Verdicts that involved a placeholder say so (see the module docstring)."""
    out = []
    for r in results:
        shown = _PLACEHOLDER.findall(json.dumps(r.detail, default=str) + r.error)
        if not shown:
            out.append(r)
            continue
        names = ", ".join(sorted(set(shown)))
        if r.signal in _COMPARING and r.verdict is Verdict.FAILED:
            detail = {**r.detail, "verdict_without_redaction": "unknown",
                      "redaction": f"the comparison met redacted values ({names})"}  # fmt: skip
            error = (f"{REDACTED_VALUE}: {r.signal} needed a value that was redacted ({names}); "
                     "score the unredacted run, or drop the check that reads it")  # fmt: skip
            r = replace(r, verdict=Verdict.UNSCORED, value=None, detail=detail, error=error)
        elif r.signal in _JUDGED and r.verdict is Verdict.FAILED:
            note = (f"the judge read redacted text ({names}); a verdict that needed the "
                    "value itself cannot be trusted")  # fmt: skip
            r = replace(r, detail={**r.detail, "redaction": note})
        elif r.verdict is Verdict.PASSED:
            r = replace(r, detail={**r.detail, "redaction": f"compared redacted values ({names})"})
        out.append(r)
    return out


def redaction_summary(config: ScoringConfig, run_options: dict[str, Any]) -> dict[str, Any] | None:
    """The summary's ``redaction`` block: on what text the scoring was judged (None: original)."""
    recorded = run_options.get("redacted")
    if config.redaction is not None:
        return {"judged_on_redacted_text": True, "by": "rescore --redact",
                "fingerprint": _fingerprint(config.redaction)}  # fmt: skip
    if isinstance(recorded, dict):
        return {"judged_on_redacted_text": True, "by": f"run redacted ({recorded.get('mode')})",
                "fingerprint": recorded.get("fingerprint", "")}  # fmt: skip
    return None


def _fingerprint(doc: dict[str, Any]) -> str:
    from vae.redaction.config import config_from_dict

    return config_from_dict(doc).fingerprint()
