"""vae's own trace of a run and its scoring, sent to a real OTLP receiver by ``vae demo``.

The demo (text turns on the virtual clock: seconds) exports with
``--otel-endpoint`` to a collector that decodes with the official
``opentelemetry-proto`` classes (``tests/otlp_collector.py``). The span tree:
the run's root; a span per session (scenario, verdict, stop reason) with a
span per turn; the scoring under the root, a span per session with one
``gen_ai.evaluation.result`` event per signal, and a ``chat MODEL`` span per
judge call with its ``gen_ai.*`` model and tokens. A collector that is
unreachable, answers 500 or never answers in time costs the run at most the
export deadline and one WARNING line, never the result; the dropped spans are
counted in ``vae runs show --json``.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.otlp_collector import Collector
from vae.recordings.traces import ids

ROOT = Path(__file__).resolve().parents[3]


def vae(*args: str) -> tuple[subprocess.CompletedProcess[str], float]:
    started = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "vae.cli.main", *args], cwd=ROOT, capture_output=True, text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=180,
    )  # fmt: skip
    return proc, time.monotonic() - started


def demo(db: Path, *extra: str) -> tuple[dict[str, Any], str, float]:
    proc, took = vae("demo", "--db", str(db), "--modality", "text", "--clock", "virtual",
                     "--tts", "buzz", "--json", *extra)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    doc: dict[str, Any] = json.loads(proc.stdout)
    assert doc["run_status"] == "completed"
    return doc, proc.stderr, took


def runs_show(db: Path, run_id: str) -> dict[str, Any]:
    proc, _ = vae("runs", "show", run_id, "--db", str(db), "--json")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)  # type: ignore[no-any-return]


def test_the_run_and_its_scoring_reach_a_real_otlp_receiver(tmp_path: Path) -> None:
    with Collector("ok") as collector:
        doc, stderr, _ = demo(tmp_path / "ok.db", "--otel-endpoint", collector.endpoint)
        spans = list(collector.spans)
    run_id = doc["run_id"]
    trace = ids.run_trace_id(run_id)
    assert {s.trace_id for s in spans} == {trace}  # one trace per run
    by_id = {s.span_id: s for s in spans}
    assert len(by_id) == len(spans)
    (root,) = [s for s in spans if not s.parent_span_id]
    assert (root.name, root.attributes["vae.run.id"]) == ("vae.run", run_id)
    assert root.resource["service.name"] == "vae"

    sessions = [s for s in spans if s.name == "vae.session"]
    verdicts = {s["scenario"]: s["verdict"] for s in doc["sessions"]}
    assert {s.attributes["vae.scenario"] for s in sessions} == set(verdicts)
    session_of = {s.attributes["vae.scenario"]: s.attributes["vae.session.id"] for s in sessions}
    for s in sessions:
        assert s.parent_span_id == root.span_id
        assert s.span_id == ids.session_span_id(s.attributes["vae.session.id"])  # as the agent got
        assert s.attributes["vae.verdict"] == verdicts[s.attributes["vae.scenario"]]
        assert s.attributes["vae.stop_reason"]
        turns = [t for t in spans if t.parent_span_id == s.span_id]
        assert turns and all(t.name == "vae.turn" for t in turns)
        assert {t.attributes["vae.turn.side"] for t in turns} <= {"user", "agent"}
        assert all(s.start_ns <= t.start_ns <= t.end_ns <= s.end_ns + 1 for t in turns)

    (scoring,) = [s for s in spans if s.name == "vae.scoring"]
    assert scoring.parent_span_id == root.span_id
    assert scoring.attributes["vae.scoring.id"] == doc["scoring_id"]
    evaluations = [s for s in spans if s.name == "vae.evaluation"]
    assert {e.parent_span_id for e in evaluations} == {scoring.span_id}
    assert {e.attributes["vae.session.id"] for e in evaluations} == set(session_of.values())
    failing = next(x for x in doc["sessions"] if x["verdict"] == "failed")
    failing_id = session_of[failing["scenario"]]
    own = next(e for e in evaluations if e.attributes["vae.session.id"] == failing_id)
    results = {a["gen_ai.evaluation.name"]: a for name, a in own.events
               if name == "gen_ai.evaluation.result"}  # fmt: skip
    assert results["is_successful"]["gen_ai.evaluation.score.label"] == "failed"
    for signal in failing["failing"]:
        assert results[signal]["gen_ai.evaluation.score.label"] == "failed"
    judged = [r for r in results.values() if "gen_ai.evaluation.score.value" in r]
    assert judged and all(isinstance(r["gen_ai.evaluation.score.value"], float) for r in judged)

    calls = [s for s in spans if s.name.startswith("chat ")]
    assert calls, "the judge's calls"
    for call in calls:
        assert by_id[call.parent_span_id].name == "vae.evaluation"
        assert call.attributes["gen_ai.operation.name"] == "chat"
        assert call.attributes["gen_ai.request.model"] == call.name.removeprefix("chat ")
        assert call.attributes["gen_ai.usage.input_tokens"] > 0
        assert call.kind == 3  # SPAN_KIND_CLIENT
    assert "WARNING" not in stderr
    shown = runs_show(tmp_path / "ok.db", run_id)
    assert shown["otel"]["spans_exported"] == len(spans)
    assert shown["otel"]["spans_dropped"] == 0


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def baseline(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], float]:
    """The demo without export: its verdicts and how long it took."""
    doc, _, took = demo(tmp_path_factory.mktemp("base") / "base.db")
    return doc, took


@pytest.mark.parametrize("mode", ["unreachable", "500", "slow"])
def test_a_collector_that_fails_costs_at_most_the_deadline_and_one_warning(
    tmp_path: Path, mode: str, baseline: tuple[dict[str, Any], float]
) -> None:
    base, base_took = baseline
    with Collector("ok" if mode == "unreachable" else mode) as collector:
        endpoint = f"http://127.0.0.1:{_closed_port()}" if mode == "unreachable" else (
            collector.endpoint)  # fmt: skip
        doc, stderr, took = demo(tmp_path / "x.db", "--otel-endpoint", endpoint)
    assert [s["verdict"] for s in doc["sessions"]] == [s["verdict"] for s in base["sessions"]]
    warnings = [line for line in stderr.splitlines() if "WARNING" in line]
    assert len(warnings) == 1, stderr
    assert "spans" in warnings[0] and "dropped" in warnings[0]
    # The SDK's own messages are silenced: only vae's line says what happened.
    assert "Transient error" not in stderr and "Failed to export" not in stderr
    expected = {"unreachable": "cannot be reached", "500": "HTTP 500", "slow": "did not answer"}
    assert expected[mode] in warnings[0]
    print(warnings[0])
    shown = runs_show(tmp_path / "x.db", doc["run_id"])
    (export,) = shown["otel"]["exports"]
    assert export["dropped"] == export["spans"] > 0
    assert shown["otel"]["spans_dropped"] == export["spans"]
    assert export["elapsed_s"] <= 2.3  # the export's deadline
    assert took < base_took + 2.3 + 3.0, (took, base_took)  # + a loaded machine's noise
