"""DTMF_RECEIVED: did the agent get the keypad digits the caller keyed?

The caller's keys are recorded as the user's DTMF events (with how the
bridge carried them: in-band tones, Twilio ``dtmf`` messages, or a text
session's message); what the agent got is what it reported itself (the
reference agent detects tones with Goertzel and reports the digits,
``bots/brains/keypad.py``). The digits are compared in order, all presses joined.

Honest verdicts: a caller that keyed nothing makes the signal
``not_applicable``; an agent that reported no digits at all is ``unscored``
(``no_dtmf_report``: an agent that does not report what it heard cannot be
judged on it, and silence is not evidence of a miss); keys the bridge could
not carry are ``unscored`` (``not_delivered``). Otherwise passed when the
digits are the same, failed when not; the value is the share of keyed digits
heard in place.
"""

from __future__ import annotations

from typing import Any

from vae.recordings.models import Verdict
from vae.scorer_service import signals
from vae.scorer_service.context import ScoringContext
from vae.scorer_service.scorer import SignalScore, passed_or_failed


class KeypadScorer:
    name = "keypad"
    version = "1"
    needs_audio = False

    async def score(self, ctx: ScoringContext) -> list[SignalScore]:
        sent = [k for k in ctx.keys if k.side == "user"]
        heard = [k for k in ctx.keys if k.side == "agent"]
        detail: dict[str, Any] = {
            "sent": "".join(k.digits for k in sent),
            "heard": "".join(k.digits for k in heard),
            "carried_as": sorted({k.carried_as for k in sent if k.carried_as}),
            "presses": [{"side": k.side, "digits": k.digits, "t_s": k.t_s} for k in ctx.keys],
        }
        name = signals.DTMF_RECEIVED
        if not sent:
            detail["reason"] = "the caller keyed no digits"
            return [SignalScore(name, Verdict.NOT_APPLICABLE, None, detail)]
        missing = [k for k in sent if k.not_delivered]
        if missing:
            detail["reason"] = f"the bridge could not carry {missing[0].digits!r}: " + (
                missing[0].not_delivered
            )
            return [SignalScore(name, Verdict.UNSCORED, None, detail, "not_delivered")]
        if not heard:
            detail["reason"] = "the agent reported no digits (it may not report what it hears)"
            return [SignalScore(name, Verdict.UNSCORED, None, detail, "no_dtmf_report")]
        want, got = detail["sent"], detail["heard"]
        in_place = sum(1 for a, b in zip(want, got, strict=False) if a == b)
        ok = want == got
        detail["reason"] = (
            f"the agent heard {got!r}, as keyed"
            if ok
            else f"the caller keyed {want!r}, the agent heard {got!r}"
        )
        return [SignalScore(name, passed_or_failed(ok), in_place / len(want), detail)]
