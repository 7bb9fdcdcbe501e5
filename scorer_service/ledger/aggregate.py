"""Run-level aggregation of a scoring, per run and per domain.

Rates are passed / (passed + failed): not-applicable and unscored verdicts are
counted beside the rate but never in it. Sessions of unfinished attempts are
left out of per-signal rates (their composites are unscored). Stalled sessions
(0 conversation turns, or too few agent turns: :mod:`vae.scorer_service.scoring.composite`)
count as failures in the composites and are left out of per-signal rates
(listed under ``stalled``). Latency figures pool every response latency of the run (not a
mean of means). Repeated trials (copies named ``name#1``, ``name#2`` ...)
give pass^k and pass@k per scenario, per domain and overall
(:mod:`vae.scorer_service.ledger.repeats`).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from vae.recordings.models import ScoreRecord, Verdict
from vae.scorer_service import signals
from vae.scorer_service.ledger.repeats import Trials, averaged, group_trials, repeats_summary
from vae.scorer_service.timing.metrics import nearest_rank


@dataclass
class SessionOutcome:
    session_id: str
    scenario_name: str
    domain: str
    duration_s: float
    scores: list[ScoreRecord] = field(default_factory=list)

    def get(self, signal: str) -> ScoreRecord | None:
        return next((s for s in self.scores if s.signal == signal), None)

    @property
    def unfinished(self) -> bool:
        """The attempt did not finish: no signal of it counts in a rate."""
        s = self.get(signals.IS_SUCCESSFUL)
        return s is not None and s.error.startswith("unfinished")

    @property
    def stalled(self) -> bool:
        s = self.get(signals.STALLED)
        return s is not None and s.verdict is Verdict.FAILED


def _counts(verdicts: list[Verdict]) -> dict[str, Any]:
    c = {v.value: sum(1 for x in verdicts if x is v) for v in Verdict}
    decided = c["passed"] + c["failed"]
    return {**c, "rate": c["passed"] / decided if decided else None}


def _block(outcomes: list[SessionOutcome]) -> dict[str, Any]:
    active = [o for o in outcomes if not o.stalled and not o.unfinished]
    block: dict[str, Any] = {"sessions": len(outcomes)}
    for name in signals.COMPOSITES:
        found = [s.verdict for o in outcomes if (s := o.get(name)) is not None]
        block[name] = _counts(found)
    block["success_rate"] = block[signals.IS_SUCCESSFUL]["rate"]
    block["task_success_rate"] = block[signals.IS_TASK_SUCCESSFUL]["rate"]
    block["signals"] = {
        name: _counts([s.verdict for o in active if (s := o.get(name)) is not None])
        for name in signals.SUCCESS_SIGNALS
    }
    judge = [s.value for o in active if (s := o.get(signals.JUDGE_PASSED)) and s.value is not None]
    block["judge_mean"] = sum(judge) / len(judge) if judge else None
    return block


def _latency(outcomes: list[SessionOutcome]) -> dict[str, Any]:
    pooled: list[float] = []
    ttfa: list[float] = []
    for o in outcomes:
        s = o.get("timing.response_latency_p50_s")
        if s is not None:
            rows = s.detail.get("latencies", [])
            if isinstance(rows, list):
                pooled.extend(float(r["latency_s"]) for r in rows if isinstance(r, dict))
        t = o.get("timing.time_to_first_agent_audio_s")
        if t is not None and t.value is not None:
            ttfa.append(t.value)
    return {
        "count": len(pooled),
        "mean_s": sum(pooled) / len(pooled) if pooled else None,
        "p50_s": nearest_rank(pooled, 50),
        "p90_s": nearest_rank(pooled, 90),
        "p95_s": nearest_rank(pooled, 95),
        "min_s": min(pooled, default=None),
        "max_s": max(pooled, default=None),
        "time_to_first_agent_audio_mean_s": sum(ttfa) / len(ttfa) if ttfa else None,
    }


def _tokens(outcomes: list[SessionOutcome]) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for o in outcomes:
        for s in o.scores:
            if s.signal.startswith(signals.TOKENS_PREFIX) and s.value is not None:
                _, side, part = s.signal.split(".", 2)
                bucket = out.setdefault(side, {"calls": 0, "prompt": 0, "completion": 0})
                bucket[part] = bucket.get(part, 0) + int(s.value)
    return out


def _assertion_rates(outcomes: list[SessionOutcome], signal: str) -> dict[str, dict[str, Any]]:
    """Pass rates per assertion (NL text, or DB path/op or predicate), as all_summary.txt has."""
    rows: dict[str, list[bool]] = defaultdict(list)
    for o in outcomes:
        s = o.get(signal)
        verdicts = None if s is None else s.detail.get("verdicts")
        if o.stalled or not isinstance(verdicts, list):
            continue
        for v in verdicts:
            if not isinstance(v, dict) or not isinstance(v.get("passed"), bool):
                continue
            label = v.get("assertion") or v.get("func_name") or f"{v.get('path')} {v.get('op')}"
            rows[f"{v.get('side', '')}:{label}" if v.get("side") else str(label)].append(
                v["passed"]
            )
    return {
        k: {"passed": sum(v), "total": len(v), "rate": sum(v) / len(v)}
        for k, v in sorted(rows.items())
    }


def _trials(outcomes: list[SessionOutcome]) -> dict[str, Trials]:
    rows = []
    for o in outcomes:
        s = o.get(signals.IS_SUCCESSFUL)
        rows.append((o.session_id, o.scenario_name, o.domain, s.verdict if s else None))
    return group_trials(rows)


def pass_hat_k(outcomes: list[SessionOutcome]) -> dict[str, float]:
    """pass^k averaged over the repeated scenarios (k = 1 .. the smallest n)."""
    return averaged(_trials(outcomes).values())["pass_hat_k"]


def summarise(outcomes: list[SessionOutcome]) -> dict[str, Any]:
    """The scoring's summary: what ``summary_json`` holds and the text summary prints."""
    summary = _block(outcomes)
    summary["duration_s"] = sum(o.duration_s for o in outcomes)
    summary["stalled"] = sorted(o.scenario_name for o in outcomes if o.stalled)
    summary["latency"] = _latency(outcomes)
    summary["tokens"] = _tokens(outcomes)
    trials = _trials(outcomes)
    repeats = repeats_summary(trials)
    summary["pass_hat_k"] = repeats["pass_hat_k"]
    summary["pass_at_k"] = repeats["pass_at_k"]
    summary["trials"] = repeats["scenarios"]
    summary["nl_assertions"] = _assertion_rates(outcomes, signals.NL_ASSERTION)
    summary["db_state_assertions"] = _assertion_rates(outcomes, signals.DB_STATE_ASSERTION)
    by_domain: dict[str, list[SessionOutcome]] = defaultdict(list)
    for o in outcomes:
        by_domain[o.domain].append(o)
    summary["domains"] = {
        d: {
            **_block(items),
            "latency": _latency(items),
            "tokens": _tokens(items),
            **repeats["domains"].get(d, {"pass_hat_k": {}, "pass_at_k": {}}),
        }
        for d, items in sorted(by_domain.items())
    }
    return summary
