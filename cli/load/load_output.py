"""What ``vae load`` prints: the steps, the knee, the harness, the soak, and where to look next.

The text reads from the same :class:`~vae.scorer_service.load.result.LoadResult`
as ``--json`` and the report. The report itself is written here too (one
HTML file, ``--report FILE``).
"""

from __future__ import annotations

from pathlib import Path

import click

from vae.cli.tables import pct, table
from vae.scorer_service.load.result import LoadResult, SoakResult


def _ms(value: float | None) -> str:
    return "–" if value is None else f"{value:.0f}"


def write_report(result: LoadResult, path: Path) -> None:
    from vae.scorer_service.report.load.page import render

    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render(result), encoding="utf-8")
    result.report = str(path)


def steps_text(result: LoadResult) -> list[str]:
    rows = []
    for s in result.steps:
        f = s.figures
        notes = []
        if s.harness_limited:
            notes.append("harness-limited")
        if s.partial:
            notes.append("partial")
        if s.ran_out:
            notes.append("ran out of calls")
        if result.knee is not None and result.knee.concurrency == s.concurrency:
            notes.append("<- knee")
        errors = ", ".join(f"{k} {v}" for k, v in f.errors.items()) or "-"
        rows.append(
            [s.index, s.concurrency, f.calls, pct(f.success_rate, 0), _ms(f.latency_ms.p50),
             _ms(f.latency_ms.p95), _ms(f.latency_ms.p99), _ms(f.ttfa_ms.p95), errors,
             " ".join(notes)]
        )  # fmt: skip
    head = ["step", "at once", "calls", "success", "p50 ms", "p95 ms", "p99 ms", "ttfa p95",
            "errors", "notes"]  # fmt: skip
    return [table(head, rows, right=range(8))]


def knee_text(result: LoadResult) -> list[str]:
    knee = result.knee
    if knee is None:
        return []
    if not knee.decided:
        return [f"knee: could not be decided: {knee.reason}"]
    if knee.concurrency is None:
        return [f"knee: none: the agent held every honest step (up to {knee.held} at once); "
                f"{knee.reason}"]  # fmt: skip
    return [f"knee: {knee.concurrency} calls at once ({knee.reason}); the agent held {knee.held}"]


def soak_text(soak: SoakResult) -> list[str]:
    s = soak.soak
    rows = [
        [f"{w.start_s:.0f}-{w.end_s:.0f}", w.figures.calls, pct(w.figures.success_rate, 0),
         _ms(w.p95_ms), w.failures]
        for w in s.windows
    ]  # fmt: skip
    lines = [
        f"soak: {soak.concurrency} at once, {s.overall.calls} calls, success "
        f"{pct(s.overall.success_rate, 0)}, p95 {_ms(s.overall.latency_ms.p95)} ms "
        f"(run {', '.join(soak.run_ids or [soak.run_id])})",
        table(["window s", "calls", "success", "p95 ms", "failures"], rows, right=range(1, 5)),
    ]
    d = s.drift
    if d is None:
        lines.append("drift: too few replies to fit a trend")
    else:
        verdict = "significant" if d.significant else "not significant (within noise)"
        lines.append(
            f"drift: {d.drift_ms_per_hour:+.0f} ms/hour (95% CI {d.ci_low:+.0f} to "
            f"{d.ci_high:+.0f}), {verdict}"
        )
    return lines


def print_text(result: LoadResult) -> None:
    lines = [
        f"load {result.load_id}: {result.suite}, {result.agent}, {result.clock} clock, "
        + (f"{result.workers} bridge worker(s)" if result.workers else "bridge elsewhere")
    ]
    if result.steps:
        lines += steps_text(result) + knee_text(result)
    if result.soak is not None:
        lines += soak_text(result.soak)
    labelled = [(f"step {s.index}", s.headroom) for s in result.steps]
    if result.soak is not None:
        labelled.append(("soak", result.soak.headroom))
    for label, room in labelled:
        lines += [f"harness-limited ({label}): {reason}" for reason in room.reasons]
    honest = [s.concurrency for s in result.honest]
    if result.steps:
        lines.append(
            "largest step measured honestly (not harness-limited): "
            + (str(max(honest)) if honest else "none")
        )
    lines += [f"to measure higher: {a}" for a in result.advice]
    if result.gate is not None:
        lines.append(f"gate: {result.gate.line}")
    if result.report:
        lines.append(f"report: {result.report}")
    runs = [s.run_id for s in result.steps]
    if result.soak is not None:
        runs += result.soak.run_ids or [result.soak.run_id]
    if runs:
        lines.append(f"each step is a run: vae report {runs[-1]} --db {result.database}")
    click.echo("\n".join(lines))
