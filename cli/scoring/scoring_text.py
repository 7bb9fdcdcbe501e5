"""What ``vae rescore``, ``vae scores show|list|diff`` and ``vae compare`` print.

A scoring reads top-down like ``all_summary.txt``: each scenario with its
verdict, then each success signal with its verdict, value and — for a failed
or unscored signal — the reason beside it; then the run's rates (percentages
with one decimal, each with its decided and unscored counts), latency, tokens,
per domain, and pass^k / pass@k when scenarios were repeated. A comparison
prints regressions first, then fixes, with the reason of each flip, the rates
side by side with their change, and what differed in the configuration.
"""

from __future__ import annotations

from typing import Any

from vae.cli.tables import delta_pp, pct, secs, table
from vae.recordings.models import ScoringRecord, Verdict
from vae.scorer_service import signals
from vae.scorer_service.compare.runs import RateDelta, RunComparison
from vae.scorer_service.ledger.aggregate import SessionOutcome
from vae.scorer_service.ledger.reasons import reasons, session_reason
from vae.scorer_service.ledger.scorings import Flip
from vae.scorer_service.ledger.unscored import causes_text

_MARK = {"regression": "REGRESSION", "fix": "fix", "unscored": "unscored",
         "only_a": "only in A", "only_b": "only in B", "same": "same"}  # fmt: skip


def _counts(counts: Any) -> str:
    c = counts if isinstance(counts, dict) else {}
    passed, failed = int(c.get("passed", 0)), int(c.get("failed", 0))
    return f"{passed}/{passed + failed} decided, {int(c.get('unscored', 0))} unscored"


def _session_rows(o: SessionOutcome) -> list[list[str]]:
    rows = []
    for name in (*signals.SUCCESS_SIGNALS, signals.STALLED):
        score = o.get(name)
        if score is None or (name == signals.STALLED and score.verdict is not Verdict.FAILED):
            continue
        value = "" if score.value is None else f"{score.value:.2f}"
        why = ""
        if score.verdict in (Verdict.FAILED, Verdict.UNSCORED):
            why = "; ".join(reasons(score)[:2])
        rows.append([name, score.verdict.value, value, why])
    return rows


def _unscored_note(summary: dict[str, Any]) -> str:
    """Beside a rate's counts: why the unscored sessions were left out."""
    block = summary.get("unscored")
    if not isinstance(block, dict) or not block.get("sessions"):
        return ""
    return f"; left out: {causes_text(block)}"


def render_scoring(scoring: ScoringRecord, outcomes: list[SessionOutcome]) -> str:
    s: dict[str, Any] = dict(scoring.summary)
    lines = [
        f"Scoring {scoring.scoring_id} of run {scoring.run_id} ({scoring.status})",
        f"Sessions: {s.get('sessions', len(outcomes))}   "
        f"Audio: {float(s.get('duration_s', 0.0)):.1f}s",
    ]
    if scoring.judge_model:
        lines.append(f"Judge: {scoring.judge_model} (prompt {scoring.prompt_hash})")
    asr = s.get("transcription")
    if isinstance(asr, dict):
        lines.append(_transcription_line(asr))
    for o in outcomes:
        succ = o.get(signals.IS_SUCCESSFUL)
        p50 = o.get("timing.response_latency_p50_s")
        lat = f", latency p50 {secs(p50.value)}" if p50 is not None else ""
        lines += ["", f"[{o.scenario_name}] {succ.verdict.value if succ else 'n/a'}  "
                      f"({o.session_id}, {o.duration_s:.1f}s{lat})"]  # fmt: skip
        why = session_reason(o)
        if why:
            lines.append(f"    why: {why}")
        rows = _session_rows(o)
        if rows:
            lines.append(table(["signal", "verdict", "value", "why"], rows, indent="    "))
        failed = [r[0] for r in rows if r[1] == "failed" and r[0] != signals.STALLED]
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
    lat = s.get("latency", {}) if isinstance(s.get("latency"), dict) else {}
    lines += [
        "",
        f"Latency: n={lat.get('count', 0)} mean {secs(lat.get('mean_s'))} "
        f"p50 {secs(lat.get('p50_s'))} p90 {secs(lat.get('p90_s'))} p95 {secs(lat.get('p95_s'))}",
    ]
    if s.get("stalled"):
        lines.append(f"WARNING: stalled scenarios (failed, not in signal rates): {s['stalled']}")
    lines += [
        "",
        f"Success rate:      {pct(s.get('success_rate'))}  "
        f"({_counts(s.get(signals.IS_SUCCESSFUL))}{_unscored_note(s)})",
        f"Task success rate: {pct(s.get('task_success_rate'))}  "
        f"({_counts(s.get(signals.IS_TASK_SUCCESSFUL))})",
        "Signals:",
    ]
    sig = s.get("signals", {}) if isinstance(s.get("signals"), dict) else {}
    rows = [[name, pct(c.get("rate")), str(c.get("passed", 0)), str(c.get("failed", 0)),
             str(c.get("not_applicable", 0)), str(c.get("unscored", 0))]
            for name, c in sig.items() if isinstance(c, dict)]  # fmt: skip
    lines.append(table(["signal", "rate", "passed", "failed", "n/a", "unscored"], rows,
                       right=(1, 2, 3, 4)))  # fmt: skip
    if s.get("judge_mean") is not None:
        lines.append(f"  judge mean score: {float(s['judge_mean']):.3f}")
    for key, title in (("nl_assertions", "NL assertion"), ("db_state_assertions", "DB assertion")):
        for label, row in (s.get(key) or {}).items():
            lines.append(
                f"  {title} {label!r}: {row['passed']}/{row['total']} ({pct(row['rate'])})"
            )
    for side, tokens in (s.get("tokens") or {}).items():
        lines.append(
            f"Tokens {side}: {tokens.get('calls', 0)} calls, {tokens.get('prompt', 0)} prompt,"
            f" {tokens.get('completion', 0)} completion"
        )
    domains = s.get("domains") if isinstance(s.get("domains"), dict) else {}
    if domains and len(domains) > 1:
        lines.append("Per domain:")
        rows = [[name, pct(b.get("success_rate")), pct(b.get("task_success_rate")),
                 str(b.get("sessions", 0)), str(_dict(b.get(signals.IS_SUCCESSFUL)).get(
                     "unscored", 0))]
                for name, b in domains.items()]  # fmt: skip
        lines.append(table(["domain", "success", "task", "sessions", "unscored"], rows,
                           right=(1, 2, 3)))  # fmt: skip
    lines += _repeats(s)
    return "\n".join(lines) + "\n"


def _transcription_line(asr: dict[str, Any]) -> str:
    """The transcription stage in one line: engine, calls, cache, errors, WER, speed."""
    engine = _dict(asr.get("engine"))
    name = " ".join(str(engine[k]) for k in ("engine", "model") if engine.get(k))
    wer = asr.get("wer")
    vs = (
        f"WER against the bots' own transcripts {pct(wer)} over {asr.get('words', 0)} words"
        if wer is not None
        else "no bot transcripts to measure it against"
    )
    busy, audio = float(asr.get("busy_s") or 0.0), float(asr.get("audio_s") or 0.0)
    speed = f", {audio / busy:.1f}× real time" if busy > 0 and audio > 0 else ""
    return (
        f"Transcription: {name}, {asr.get('turns', 0)} turns ({asr.get('requests', 0)} calls,"
        f" {asr.get('cache_hits', 0)} cached, {asr.get('errors', 0)} failed); {vs}{speed}"
    )


def _dict(v: Any) -> dict[str, Any]:
    return v if isinstance(v, dict) else {}


def _repeats(s: dict[str, Any]) -> list[str]:
    hat, at = _dict(s.get("pass_hat_k")), _dict(s.get("pass_at_k"))
    if not hat:
        return []
    ks = sorted(hat, key=int)
    lines = ["Repeated trials (τ²-bench pass^k: all k succeed; pass@k: at least one):"]
    rows = [["overall", *(f"{pct(hat[k])} / {pct(at.get(k))}" for k in ks)]]
    for name, t in _dict(s.get("trials")).items():
        th, ta = _dict(t.get("pass_hat_k")), _dict(t.get("pass_at_k"))
        rows.append([f"{name} ({t.get('passed')}/{t.get('trials')})",
                     *(f"{pct(th.get(k))} / {pct(ta.get(k))}" for k in ks)])  # fmt: skip
    lines.append(table(["scenario", *(f"pass^{k} / pass@{k}" for k in ks)], rows))
    return lines


def render_scoring_list(found: list[ScoringRecord], shown: dict[str, str]) -> str:
    """``vae scores list``: a header, one row per scoring; ``*`` marks each run's
    current scoring (the one ``vae report`` shows by default)."""
    if not found:
        return "no scorings\n"
    rows = []
    for s in found:
        state = f"superseded by {s.superseded_by}" if s.superseded_by else s.status
        mark = "*" if shown.get(s.run_id) == s.scoring_id else ""
        block = s.summary.get("unscored")
        unscored = (
            f"{block['sessions']} ({causes_text(block)})"
            if isinstance(block, dict) and block.get("sessions")
            else "0"
        )
        rows.append([mark, s.scoring_id, state, pct(s.summary.get("success_rate")),
                     unscored, s.judge_model or "-", str(s.config.get("label") or "")])  # fmt: skip
    head = ["", "scoring (run.created)", "state", "success", "unscored", "judge", "label"]
    return (
        table(head, rows, indent="", right=(3,))
        + "\n* = the run's current scoring (what vae report shows by default)\n"
    )


def render_comparison(cmp: RunComparison) -> str:
    a = f"run A {cmp.run_a} (scoring {cmp.scoring_a or 'none'})"
    b = f"run B {cmp.run_b} (scoring {cmp.scoring_b or 'none'})"
    counts = cmp.counts()
    lines = [f"Comparing {a}", f"     with {b}"]
    lines += [f"warning: {w}" for w in cmp.warnings]
    lines.append(", ".join(f"{n} {_MARK[c] if c != 'regression' else 'regression'}"
                           + ("s" if n != 1 and c in ("regression", "fix") else "")
                           for c, n in counts.items() if n))  # fmt: skip
    rows = []
    for s in cmp.scenarios:
        why = "; ".join(s.reasons)
        rows.append([_MARK[s.change], s.scenario, _verdict(s.a), _verdict(s.b), why])
    lines += ["", table(["change", "scenario", "A", "B", "why"], rows)]
    lines += ["", "Rates:"]
    rate_rows = [_rate_row(r) for r in cmp.rates]
    lines.append(table(["rate", "A", "B", "change", "", "unscored"], rate_rows,
                       right=(1, 2, 3)))  # fmt: skip
    lines += ["", "Configuration differences:" if cmp.config else "Configuration: no difference"]
    if cmp.config:
        lines.append(table(["setting", "A", "B"],
                           [[d.key, d.a if d.a is not None else "-",
                             d.b if d.b is not None else "-"] for d in cmp.config]))  # fmt: skip
    return "\n".join(lines) + "\n"


def _verdict(side: Any) -> str:
    if side is None:
        return "-"
    if side.trials > 1:
        return f"{side.verdict} {side.passed}/{side.passed + side.failed}"
    return str(side.verdict)


def _rate_row(r: RateDelta) -> list[str]:
    def fmt(v: float | None) -> str:
        if r.unit == "seconds":
            return secs(v)
        if r.unit == "score":
            return "n/a" if v is None else f"{v:.2f}"
        return pct(v)

    if r.unit == "rate":
        change = delta_pp(r.change)
    elif r.change is None:
        change = ""
    else:
        change = f"{r.change:+.2f}" + (" s" if r.unit == "seconds" else "")
    verdict = "" if r.better is None else ("better" if r.better else "worse")
    unscored = f"{r.unscored_a} → {r.unscored_b}" if r.unscored_a or r.unscored_b else ""
    return [r.name, fmt(r.a), fmt(r.b), change, verdict, unscored]


def render_signal_flips(a: str, b: str, flips: list[Flip], summary: dict[str, Any]) -> str:
    """``vae scores diff``: each (session, signal) whose verdict changed, aligned."""
    missing = int(summary.get("missing", 0) or 0)
    note = f" ({missing} signals produced by one scoring only: not flips)" if missing else ""
    lines = [f"{len(flips)} flips from {a} to {b}{note}"]
    rows = [[f.scenario_name, f.signal, f"{_v(f.verdict_a)} -> {_v(f.verdict_b)}"] for f in flips]
    if rows:
        lines.append(table(["scenario", "signal", "verdict"], rows))
    return "\n".join(lines) + "\n\n"


def _v(verdict: Verdict | None) -> str:
    return verdict.value if verdict else "-"
