"""The text summary of a scoring, in the spirit of the established ``all_summary.txt``.

Totals; a block per scenario (each success signal, failed signals, stall flag,
turns, duration, latency); overall latency; stalled warning; success and task
success rates; per-signal rates; judge mean; token usage per side; per-domain
rates when the run spans several domains; pass^k when scenarios repeated.
"""

from __future__ import annotations

from typing import Any

from recordings.models import ScoringRecord
from scorer_service import signals
from scorer_service.aggregate import SessionOutcome
from scorer_service.ledger import Flip
from scorer_service.unscored import causes_text


def _pct(rate: Any) -> str:
    return "n/a" if not isinstance(rate, int | float) else f"{rate * 100:.1f}%"


def _s(value: Any) -> str:
    return "n/a" if not isinstance(value, int | float) else f"{value:.3f}s"


def _rate_line(label: str, counts: dict[str, Any]) -> str:
    return (
        f"  {label:<22} {_pct(counts.get('rate')):>7}  (passed {counts.get('passed', 0)},"
        f" failed {counts.get('failed', 0)}, n/a {counts.get('not_applicable', 0)},"
        f" unscored {counts.get('unscored', 0)})"
    )


def _unscored_note(summary: dict[str, Any]) -> str:
    """Beside a rate: the sessions it leaves out and why."""
    block = summary.get("unscored")
    if not isinstance(block, dict) or not block.get("sessions"):
        return ""
    return f"  ({block['sessions']} unscored, left out: {causes_text(block)})"


def render_summary(scoring: ScoringRecord, outcomes: list[SessionOutcome]) -> str:
    s: dict[str, Any] = scoring.summary
    lines = [
        f"Scoring {scoring.scoring_id} of run {scoring.run_id} ({scoring.status})",
        f"Sessions: {s.get('sessions', len(outcomes))}   "
        f"Audio: {float(s.get('duration_s', 0.0)):.1f}s",
    ]
    if scoring.judge_model:
        lines.append(f"Judge: {scoring.judge_model} (prompt {scoring.prompt_hash})")
    lines.append("")
    for o in outcomes:
        succ = o.get(signals.IS_SUCCESSFUL)
        lines.append(
            f"[{o.scenario_name}] {succ.verdict.value if succ else 'n/a'}  ({o.session_id})"
        )
        failed = []
        for name in signals.SUCCESS_SIGNALS:
            score = o.get(name)
            if score is None:
                continue
            extra = f" {score.value:.2f}" if score.value is not None else ""
            err = f"  [{score.error}]" if score.error else ""
            lines.append(f"    {name:<20} {score.verdict.value}{extra}{err}")
            if score.verdict.value == "failed":
                failed.append(name)
        if failed:
            lines.append(f"    failed signals: {', '.join(failed)}")
        if succ is not None and succ.verdict.value == "unscored":
            lines.append(f"    UNSCORED: {succ.error or 'a gating signal could not be decided'}")
        errs = o.get(signals.BOT_ERRORS)
        found = errs.detail.get("errors") if errs is not None else None
        for line in found if isinstance(found, list) else []:
            lines.append(f"    bot error: {line}")
        if o.stalled:
            lines.append("    STALLED: too few agent turns")
        p50 = o.get("timing.response_latency_p50_s")
        if p50 is not None:
            lines.append(f"    duration {o.duration_s:.1f}s  latency p50 {_s(p50.value)}")
    lat = s.get("latency", {})
    lines += [
        "",
        f"Latency: n={lat.get('count', 0)} mean {_s(lat.get('mean_s'))} p50 {_s(lat.get('p50_s'))}"
        f" p90 {_s(lat.get('p90_s'))} p95 {_s(lat.get('p95_s'))}",
    ]
    if s.get("stalled"):
        lines.append(f"WARNING: stalled scenarios (failed, not in signal rates): {s['stalled']}")
    lines += [
        "",
        f"Success rate:      {_pct(s.get('success_rate'))}{_unscored_note(s)}",
        f"Task success rate: {_pct(s.get('task_success_rate'))}",
        "Signals:",
    ]
    for name, counts in s.get("signals", {}).items():
        lines.append(_rate_line(name, counts))
    lines.append(f"  judge mean score       {s.get('judge_mean')}")
    for key, title in (("nl_assertions", "NL assertion"), ("db_state_assertions", "DB assertion")):
        for label, row in s.get(key, {}).items():
            lines.append(
                f"  {title} {label!r}: {row['passed']}/{row['total']} ({_pct(row['rate'])})"
            )
    for side, tokens in s.get("tokens", {}).items():
        lines.append(
            f"Tokens {side}: {tokens.get('calls', 0)} calls, {tokens.get('prompt', 0)} prompt,"
            f" {tokens.get('completion', 0)} completion"
        )
    domains = s.get("domains", {})
    if len(domains) > 1:
        lines.append("Per domain:")
        for name, block in domains.items():
            lines.append(
                f"  {name:<20} success {_pct(block.get('success_rate'))}"
                f"  task {_pct(block.get('task_success_rate'))}  ({block.get('sessions')} sessions)"
            )
    for k, value in s.get("pass_hat_k", {}).items():
        lines.append(f"pass^{k}: {value:.3f}")
    return "\n".join(lines) + "\n"


def scoring_as_dict(
    scoring: ScoringRecord, outcomes: list[SessionOutcome] | None = None
) -> dict[str, Any]:
    """The JSON form the CLI prints with ``--json``."""
    data: dict[str, Any] = {
        "scoring_id": scoring.scoring_id,
        "run_id": scoring.run_id,
        "created_ns": scoring.created_ns,
        "status": scoring.status,
        "mode": scoring.mode,
        "superseded_by": scoring.superseded_by,
        "judge_model": scoring.judge_model,
        "prompt_hash": scoring.prompt_hash,
        "versions": scoring.versions,
        "config": scoring.config,
        "summary": scoring.summary,
    }
    if outcomes is not None:
        data["sessions"] = [
            {
                "session_id": o.session_id,
                "scenario_name": o.scenario_name,
                "domain": o.domain,
                "scores": [
                    {
                        "signal": s.signal,
                        "verdict": s.verdict.value,
                        "value": s.value,
                        "detail": s.detail,
                        "error": s.error,
                    }
                    for s in o.scores
                ],
            }
            for o in outcomes
        ]
    return data


def flips_as_dicts(flips: list[Flip]) -> list[dict[str, Any]]:
    return [
        {
            "session_id": f.session_id,
            "scenario_name": f.scenario_name,
            "signal": f.signal,
            "verdict_a": f.verdict_a.value if f.verdict_a else None,
            "verdict_b": f.verdict_b.value if f.verdict_b else None,
            "value_a": f.value_a,
            "value_b": f.value_b,
        }
        for f in flips
    ]


def render_flips(a: str, b: str, flips: list[Flip], summary: dict[str, Any]) -> str:
    """``vae scores diff``: one line per flipped (session, signal), then rate changes."""
    lines = [f"{len(flips)} flips from {a} to {b}"]
    for f in flips:
        va = f.verdict_a.value if f.verdict_a else "-"
        vb = f.verdict_b.value if f.verdict_b else "-"
        lines.append(f"  {f.scenario_name:<24} {f.signal:<20} {va} -> {vb}")
    for name, d in summary.get("rates", {}).items():
        if d.get("change"):
            lines.append(f"  {name}: {d['a']} -> {d['b']} ({d['change']:+.3f})")
    return "\n".join(lines) + "\n"
