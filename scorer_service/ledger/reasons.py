"""Why a score came out as it did, in a line or two a reader can act on.

Each signal stores its evidence in ``detail`` (see :mod:`vae.scorer_service.signals`);
this turns it into short sentences: the judge's reason, the assertion verdicts
that failed, the first DB differences, the stop reason. A failure traced to
a mishearing (``detail["misheard"]``, :mod:`vae.scorer_service.heard.attribution`)
says so before anything else: :func:`signal_line` is the one-line form every
session reason uses (CLI, JSON, report, comparison).
"""

from __future__ import annotations

import json
from typing import Any

from vae.recordings.models import ScoreRecord, Verdict
from vae.scorer_service import signals
from vae.scorer_service.heard.compare import mismatch_text

MAX_LINES = 6


def _short(value: Any, limit: int = 80) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _rows(detail: dict[str, Any], key: str) -> list[dict[str, Any]]:
    value = detail.get(key)
    return [r for r in value if isinstance(r, dict)] if isinstance(value, list) else []


def _action_mismatch(d: dict[str, Any]) -> str:
    """The keys where the reference and the last recorded action differ, else both in full."""
    reason = str(d.get("reason") or "no match")
    ref, pred = d.get("reference"), d.get("prediction")
    if not pred:
        return reason
    last = pred[-1] if isinstance(pred, list) and pred else pred
    if isinstance(ref, dict) and isinstance(last, dict):
        wrong = [k for k in ref if str(ref[k]).lower() != str(last.get(k, "")).lower()]
        if wrong:
            parts = ", ".join(
                f"{k}: expected {_short(ref[k], 30)}, recorded {_short(last.get(k, '<none>'), 30)}"
                for k in wrong[:3]
            )
            return f"{reason} — {parts}"
    return f"{reason}: expected {_short(ref, 60)}, recorded {_short(pred, 60)}"


def misheard(score: ScoreRecord | None) -> str:
    """The mishearing that explains this failure ("" when none does)."""
    found = score.detail.get("misheard") if score is not None else None
    return str(found.get("text") or "") if isinstance(found, dict) else ""


def reason_line(signal: str, found: list[str], heard: str, fallback: str = "failed") -> str:
    """``SIGNAL: first reason`` from a signal's reasons, after its mishearing (``heard``)."""
    rest = [r for r in found if r != heard]
    line = f"{signal}: {rest[0] if rest else fallback}"
    return f"{heard}; {line}" if heard else line


def signal_line(signal: str, score: ScoreRecord | None, fallback: str = "failed") -> str:
    """``SIGNAL: first reason``, after the mishearing that explains it when there is one."""
    found = reasons(score) if score is not None else []
    return reason_line(signal, found, misheard(score), fallback)


def _heard(d: dict[str, Any], verdict: Verdict) -> list[str]:
    out = []
    if d.get("wer") is not None:
        out.append(f"WER {float(d['wer']):.0%} over {d.get('words', 0)} words")
    for m in _rows(d, "mismatches")[:3]:
        out.append(mismatch_text(m))
    if verdict is Verdict.PASSED and not out[1:]:
        out.append("no critical mismatch")
    return out


def reasons(score: ScoreRecord) -> list[str]:
    """Explanations for one score (most useful for failed and unscored ones)."""
    d = score.detail
    out: list[str] = []
    heard = misheard(score)
    if heard:
        out.append(heard)
    if score.error:
        out.append(f"error: {score.error}")
    if score.signal == signals.ACTION_MATCH:
        if score.verdict is Verdict.FAILED:
            out.append(_action_mismatch(d))
        elif d.get("reason"):
            out.append(str(d["reason"]))
    elif score.signal == signals.DB_STATE_MATCH:
        sides = d.get("sides")
        for side, info in (sides if isinstance(sides, dict) else {}).items():
            if not isinstance(info, dict) or info.get("match"):
                continue
            for row in _rows(info, "diff"):
                out.append(
                    f"{side} DB {row.get('path', '')}: expected {_short(row.get('expected'), 40)}"
                    f", got {_short(row.get('actual'), 40)}"
                )
            if info.get("reason"):
                out.append(f"{side}: {info['reason']}")
    elif score.signal == signals.DB_STATE_ASSERTION:
        for row in _rows(d, "verdicts"):
            if row.get("passed"):
                continue
            what = row.get("path") or row.get("func_name") or f"#{row.get('index')}"
            text = f"{what} {row.get('op', '')} {_short(row.get('expected'), 40)}"
            if row.get("error"):
                text += f" — error: {row['error']}"
            else:
                text += f" — actual {_short(row.get('actual'), 40)}"
            out.append(text)
    elif score.signal == signals.NL_ASSERTION:
        for row in _rows(d, "verdicts"):
            if not row.get("passed"):
                out.append(f"“{row.get('assertion', '')}”: {row.get('reason', '')}")
    elif score.signal == signals.JUDGE_PASSED:
        if score.value is not None:
            out.append(f"score {score.value:.2f} (threshold {d.get('threshold', '?')})")
        if d.get("reason"):
            out.append(str(d["reason"]))
    elif score.signal == signals.CLEAN_EXIT:
        out.append(f"stop reason: {d.get('stop_reason') or 'none'}")
        if d.get("end_policy"):
            out.append(f"end policy: {d['end_policy']}")
    elif score.signal == signals.TOOL_CALLS and score.verdict is Verdict.FAILED:
        for row in _rows(d, "expectations"):
            if not row.get("passed"):
                out.append(str(row.get("reason") or f"{row.get('tool')}: {row.get('kind')}"))
    elif score.signal == signals.CLAIMED_NOT_DONE and score.verdict is Verdict.FAILED:
        out += [str(r["reason"]) for r in _rows(d, "claims") if r.get("reason")]
    elif score.signal == signals.HEARD_CORRECTLY and not score.error:
        out += _heard(d, score.verdict)
    elif score.signal == signals.STALLED and score.verdict is Verdict.FAILED:
        out.append(str(d.get("reason") or "the agent answered too few times"))
    elif d.get("reason"):
        out.append(str(d["reason"]))
    return out[:MAX_LINES]


def session_reason(outcome: Any) -> str:
    """A failed or unscored session's one-line reason ("" otherwise).

    The first failing gating signal (one a mishearing explains before any
    other, with the mishearing first), else the first unscored one with its
    cause. ``outcome`` is a :class:`vae.scorer_service.ledger.aggregate.SessionOutcome`.
    """
    succ = outcome.get(signals.IS_SUCCESSFUL)
    if succ is None or succ.verdict not in (Verdict.FAILED, Verdict.UNSCORED):
        return ""
    gating = succ.detail.get("gating")
    gates = [str(g) for g in gating] if isinstance(gating, list) else []
    order = [*(s for s in signals.SUCCESS_SIGNALS if s in gates), signals.STALLED]
    scores = [(name, outcome.get(name)) for name in order]
    failed = [(n, s) for n, s in scores if s is not None and s.verdict is Verdict.FAILED]
    if succ.verdict is Verdict.FAILED and failed:
        name, score = next(((n, s) for n, s in failed if misheard(s)), failed[0])
        return signal_line(name, score)
    if succ.verdict is Verdict.FAILED:
        return str(succ.detail.get("reason") or "failed")
    for name, score in scores:
        if score is not None and score.verdict is Verdict.UNSCORED:
            return signal_line(name, score, "unscored")
    return f"unscored: {succ.error or 'a gating signal could not be decided'}"
