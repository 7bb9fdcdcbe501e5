"""Which scenarios need a judge, and the refusal when none is configured.

Why: NL_ASSERTION and JUDGE_PASSED can only be decided by a judge. Scoring a
scenario that gates on them (or lists NL assertions) without one used to turn
them into ``not_applicable`` silently, so the composite passed on the other
signals. Now a rescore without a judge is refused, naming the scenarios and
the options to set, unless the user opts out explicitly (``--no-judge``,
``ScoringConfig.no_judge``); the signals are then ``unscored`` with the cause
``no_judge``, never passed.
"""

from __future__ import annotations

from collections.abc import Iterable

from vae.recordings.scenarios.model import Scenario
from vae.scorer_service import signals
from vae.scorer_service.config import ConfigError, ScoringConfig

#: The cause recorded on a judge signal scored with ``no_judge``.
NO_JUDGE = "no_judge"

_JUDGE_SIGNALS = (signals.NL_ASSERTION, signals.JUDGE_PASSED)


class JudgeRequiredError(ConfigError):
    """Scenarios need a judge and none is configured (a usage error)."""


def needs_judge(scenario: Scenario) -> bool:
    """True when the scenario lists NL assertions or gates on a judge signal."""
    gating = {str(s) for s in scenario.success_signals}
    return bool(scenario.nl_assertions) or any(s in gating for s in _JUDGE_SIGNALS)


def require_judge(config: ScoringConfig, scenarios: Iterable[Scenario]) -> None:
    """Raise :class:`JudgeRequiredError` when a judge is needed, absent and not opted out of."""
    if config.judge.enabled or config.no_judge:
        return
    if config.scorers and "judge" not in config.scorers:
        return  # the judge scorer is not selected: its signals read "not scored"
    names = sorted({s.name for s in scenarios if needs_judge(s)})
    if not names:
        return
    shown = ", ".join(names[:8]) + (f" (+{len(names) - 8} more)" if len(names) > 8 else "")
    raise JudgeRequiredError(
        f"{len(names)} scenario(s) need a judge (NL assertions, or NL_ASSERTION/JUDGE_PASSED "
        f"among their success signals): {shown}. Set --judge-base-url and --judge-model "
        "(env VAE_JUDGE_BASE_URL, VAE_JUDGE_MODEL; RPC: config.judge.base_url and "
        "config.judge.model), or pass --no-judge (RPC: config.no_judge) to leave those "
        "signals unscored"
    )
