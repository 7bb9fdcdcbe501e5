"""JUDGE_PASSED and NL_ASSERTION: one judge call per session decides both.

As in the established judge, the NL assertions are judged in the same call as
the overall score. Unlike it, a judge that fails (after retries, or with a
reply that is not the JSON asked for) gives ``unscored`` with the error for
both signals — ``judge_error`` never becomes an agent failure — and an
assertion the judge left without a verdict is unscored, not failed. Scored
with no judge (``--no-judge``), a judge signal is ``unscored`` with the
cause ``no_judge`` whether it gates or not (``not_applicable`` only for
NL_ASSERTION of a scenario without NL assertions: nothing to check); a
judge that cannot be used at all stops the rescore (``JudgeUnusableError``,
raised by the client).
"""

from __future__ import annotations

from typing import Any

from vae.recordings.models import Verdict
from vae.scorer_service import signals
from vae.scorer_service.config import JudgeSettings
from vae.scorer_service.context import ScoringContext
from vae.scorer_service.judge.client import JudgeClient
from vae.scorer_service.judge.need import NO_JUDGE
from vae.scorer_service.judge.prompt import PROMPT_VERSION, build_messages, prompt_hash
from vae.scorer_service.scorer import SignalScore, passed_or_failed

JUDGE_ERROR = "judge_error"
_SIGNALS = (signals.JUDGE_PASSED, signals.NL_ASSERTION)


class JudgeScorer:
    name = "judge"
    version = PROMPT_VERSION
    needs_audio = False

    def __init__(
        self, settings: JudgeSettings, client: JudgeClient | None, *, no_judge: bool = False
    ) -> None:
        self.settings = settings
        self.client = client
        #: Scored without a judge on purpose (``--no-judge``), not merely without one.
        self.no_judge = no_judge

    async def score(self, ctx: ScoringContext) -> list[SignalScore]:
        assertions = ctx.scenario.nl_assertions
        if self.client is None:
            return [self._without_judge(ctx, name) for name in _SIGNALS]
        s = self.settings
        messages = build_messages(ctx, s.prompt_template, s.include_conversation)
        outcome = await self.client.judge(messages)
        base: dict[str, Any] = {
            "model": s.model,
            "prompt_hash": prompt_hash(s.prompt_template),
            "cached": outcome.cached,
            "attempts": outcome.attempts,
        }
        if outcome.usage is not None:  # for cost and vae's trace (recordings/cost)
            base["usage"] = outcome.usage
        if outcome.verdict is None:
            error = f"{JUDGE_ERROR}: {outcome.error}"
            detail = dict(base, raw=outcome.raw[:2000])
            nl = (
                SignalScore(signals.NL_ASSERTION, Verdict.UNSCORED, None, detail, error)
                if assertions
                else SignalScore(signals.NL_ASSERTION, Verdict.NOT_APPLICABLE, None, base)
            )
            return [SignalScore(signals.JUDGE_PASSED, Verdict.UNSCORED, None, detail, error), nl]
        v = outcome.verdict
        judged = dict(base, reason=v.reason, threshold=s.threshold)
        out = [
            SignalScore(
                signals.JUDGE_PASSED, passed_or_failed(v.score >= s.threshold), v.score, judged
            ),
        ]
        out.append(self._assertions(assertions, v.verdicts, base))
        return out

    def _without_judge(self, ctx: ScoringContext, name: str) -> SignalScore:
        """Scored with no judge (``--no-judge``): unscored, gating or not, unless there is
        nothing to check (NL_ASSERTION of a scenario with no NL assertions).

        ``not_applicable`` means "nothing to check" (docs/scoring.md), never "not
        checked": JUDGE_PASSED always has something a judge could decide.
        """
        if name == signals.NL_ASSERTION and not ctx.scenario.nl_assertions:
            na: dict[str, Any] = {"reason": "no NL assertions"}
            return SignalScore(name, Verdict.NOT_APPLICABLE, None, na)
        why = "scored without a judge (--no-judge)" if self.no_judge else "no judge configured"
        detail: dict[str, Any] = {"reason": why}
        error = f"{NO_JUDGE}: no judge was configured for this scoring"
        return SignalScore(name, Verdict.UNSCORED, None, detail, error)

    def _assertions(
        self, assertions: list[str], verdicts: list[Any], base: dict[str, Any]
    ) -> SignalScore:
        if not assertions:
            return SignalScore(
                signals.NL_ASSERTION,
                Verdict.NOT_APPLICABLE,
                None,
                dict(base, reason="no NL assertions"),
            )
        by_index = {v.index: v for v in verdicts}
        rows = []
        for i, text in enumerate(assertions):
            v = by_index.get(i)
            rows.append(
                {
                    "index": i,
                    "assertion": text,
                    "passed": None if v is None else v.passed,
                    "reason": "the judge gave no verdict" if v is None else v.reason,
                }
            )
        missing = [r["index"] for r in rows if r["passed"] is None]
        detail = dict(base, verdicts=rows)
        if missing:
            error = f"{JUDGE_ERROR}: no verdict for assertion(s) {missing}"
            return SignalScore(signals.NL_ASSERTION, Verdict.UNSCORED, None, detail, error)
        passed = sum(1 for r in rows if r["passed"])
        verdict = passed_or_failed(passed == len(rows))
        return SignalScore(signals.NL_ASSERTION, verdict, passed / len(rows), detail)
