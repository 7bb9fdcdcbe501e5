"""What ``vae demo`` hands back: its result, the HTML report it writes, the summary it prints.

Why a module: what the demo shows — one row per session with the reason it
failed (a mishearing named first), the success rates, the comparison with the
previous run, where the database and report are, the per-scenario rule's
verdict (every scenario passed or failed as built: ``vae gate`` without a
threshold) — changes with the report and the summary's wording, not with how
the demo starts the services and bots (``cli/demo/demo_run.py``) or calls them
(``cli/demo/demo_wire.py``). The sessions' rows are also the ``sessions`` of
``vae demo --json`` (``cli/demo/demo_cmd.py``), so their keys are part of that
document.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from vae.cli.common import shown
from vae.cli.demo.demo_compare import previous_scored_run, print_comparison
from vae.cli.tables import pct, table
from vae.recordings.read.reader import RecordingReader
from vae.recordings.scenarios.expect import WORDS
from vae.scorer_service.ledger.unscored import unscored_line
from vae.scorer_service.report import report_data
from vae.scorer_service.report.html import clock_phrase, render

if TYPE_CHECKING:
    from vae.recordings.backends.locator import Locator


@dataclass
class DemoResult:
    """What one demo produced: its run, its scoring and the report (``--json`` prints these)."""

    run_id: str
    scoring_id: str
    summary: dict[str, Any]
    #: How the run ended: completed, failed or cancelled (``vae run``'s statuses).
    run_status: str = ""
    run_error: str = ""
    sessions: list[dict[str, Any]] = field(default_factory=list)
    report: Path | None = None
    seconds: float = 0.0
    #: The comparison with the previous scored run of the database (None on the first).
    baseline: dict[str, Any] | None = None
    #: How the suite ran: "audio"/"text" on the "real"/"virtual"/"auto" clock (``--clock``;
    #: each session's own clock is its row's ``clock``).
    modality: str = "audio"
    clock: str = "real"


def write_report(
    db_path: Locator, run_id: str, scoring_id: str, out: Path
) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
    """Write the run's HTML report to ``out``; (one row per session, the comparison)."""
    with RecordingReader(db_path) as reader:
        baseline = previous_scored_run(reader, run_id)
        data = report_data(reader, run_id, scoring_id, baseline_run=baseline)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(render(data), encoding="utf-8")
    return [
        {
            "scenario": s["scenario_name"],
            "domain": s["domain"],
            "verdict": s["verdict"],
            # Built to fail (expect_fail / the expect-fail tag), and how the gate counts it.
            "expect_fail": s["expect_fail"],
            "outcome": s["outcome"],
            "stop_reason": s["stop_reason"],
            "failing": {f["signal"]: f["reasons"] for f in s["failing"] if f["gating"]},
            # The report's one-line reason: a mishearing that explains the failure first.
            "reason": s["reason"],
            "misheard": next(
                (f["misheard"] for f in s["failing"] if f["gating"] and f.get("misheard")), ""
            ),
            # The clock the session ran on (--clock auto picks one per session).
            "clock": s["clock"],
        }
        for s in data["sessions"]
    ], data["baseline"]


def _first(reasons: list[str], misheard: str | None) -> str:
    """A signal's first reason, leaving out the mishearing already printed before it."""
    found = [r for r in reasons if r != misheard]
    return found[0] if found else ""


def print_summary(result: DemoResult, db_path: Locator) -> None:
    """The demo's text ending: each session and why it failed, the rates, where things are."""
    s = result.summary
    clocks = clock_phrase(result.clock, [str(row.get("clock")) for row in result.sessions])
    click.echo(
        f"\nrun {result.run_id} ({result.run_status}), scoring {result.scoring_id}"
        f" ({result.seconds:.0f} s; {result.modality} on {clocks})"
    )
    rows = [
        [WORDS.get(row["outcome"], row["verdict"]), row["scenario"],
         "; ".join([*([row["misheard"]] if row.get("misheard") else []),
                    *(f"{sig}: {_first(why, row.get('misheard'))}"
                      for sig, why in row["failing"].items())])]
        for row in result.sessions
    ]  # fmt: skip
    click.echo(table(["result", "scenario", "why"], rows))
    counts = s.get("is_successful", {}) if isinstance(s.get("is_successful"), dict) else {}
    click.echo(
        f"success rate {pct(s.get('success_rate'))} ({counts.get('passed', 0)}/"
        f"{counts.get('passed', 0) + counts.get('failed', 0)} decided, "
        f"{counts.get('unscored', 0)} unscored)",
        nl=False,
    )
    domains = s.get("domains", {})
    if isinstance(domains, dict) and domains:
        per = ", ".join(f"{d} {pct(b.get('success_rate'))}" for d, b in sorted(domains.items()))
        click.echo(f" ({per})", nl=False)
    line = unscored_line(s)
    if line:
        click.echo(f"\n{line}", nl=False)
    signals = s.get("signals", {})
    click.echo(
        "\nper signal: " + ", ".join(f"{k} {pct(v.get('rate'))}" for k, v in signals.items())
    )
    lat = s.get("latency", {})
    if isinstance(lat, dict) and lat.get("p50_s") is not None:
        click.echo(f"agent response latency p50 {lat['p50_s']:.2f} s, p95 {lat['p95_s']:.2f} s")
    print_comparison(result.baseline, result.run_id, db_path)
    click.echo(f"database {shown(db_path)}\nreport   {result.report}")


def scenario_rule(db_path: Locator, result: DemoResult) -> dict[str, Any]:
    """The per-scenario rule on the demo's scoring (``vae gate`` without a threshold; the demo
    keeps its own rules for a run that did not complete and unscored sessions):
    ``{"status": passed|failed, "checks": [...]}``."""
    from vae.scorer_service.gate import run_cases
    from vae.scorer_service.gate.rule import per_scenario
    from vae.scorer_service.ledger.scorings import resolve_scoring

    with RecordingReader(db_path) as reader:
        cases = run_cases(reader, result.run_id, resolve_scoring(reader, result.scoring_id))
    checks = per_scenario(cases)
    failed = any(c.status == "failed" for c in checks)
    return {"status": "failed" if failed else "passed", "checks": [c.as_dict() for c in checks]}


def rule_lines(rule: dict[str, Any]) -> list[str]:
    """One line when the rule holds; else one per check that failed, each naming scenarios."""
    if rule["status"] != "failed":
        return [f"gate (no thresholds): passed — {rule['checks'][0]['message']}"]
    return [f"gate (no thresholds): {c['name']}: {c['message']}; exit 1"
            for c in rule["checks"] if c["status"] == "failed"]  # fmt: skip
