"""The report's agent spans and cost: hostile text from the agent stays text.

A recorded run (tests/recordings/cost/test_cost.py) gets spans whose names,
services and attributes carry markup and a ``</script>``, thousands of them;
the report shows the per-turn waterfall beside the wire latency, where the
slow turn's time went, how spans were tied, and the costs with "?" for the
unknown, and escapes everything.
"""

from __future__ import annotations

import asyncio
import tomllib
from pathlib import Path

from tests.recordings.cost.test_cost import PRICES, record
from vae.recordings.cost.prices import parse
from vae.recordings.read.reader import RecordingReader
from vae.recordings.traces.model import AgentSpan
from vae.recordings.write.trace_rows import add_agent_spans
from vae.recordings.write.writer import open_writer
from vae.scorer_service.config import ScoringConfig
from vae.scorer_service.report import report_data
from vae.scorer_service.report.html import render
from vae.scorer_service.scoring.rescore import rescore

EVIL = '</script><img src=x onerror="alert(1)"><b>'
S = 1_000_000_000


async def hostile(db: Path) -> tuple[str, str]:
    run_id, a, _ = await record(db)
    with RecordingReader(db) as r:
        t0 = r.session(a).started_ns  # type: ignore[union-attr]
    spans = [
        AgentSpan(run_id, a, "ab" * 16, f"{i + 1:016x}", "", EVIL + "llm", "", EVIL,
                  t0 + 5 * S + i * 1000, t0 + 5 * S + i * 1000 + S // 2,
                  attributes={"metrics.ttfb": 0.4, "output": EVIL * 100},
                  matched_by="window+endpoint")
        for i in range(3000)
    ]  # fmt: skip
    async with open_writer(db) as writer:
        await add_agent_spans(writer, spans)
    await rescore(db, run_id, ScoringConfig())
    return run_id, a


def test_hostile_spans_are_escaped_and_the_waterfall_says_where_time_went(tmp_path: Path) -> None:
    db = tmp_path / "vae.db"
    run_id, session_id = asyncio.run(hostile(db))
    table = parse(tomllib.loads(PRICES), f"{EVIL}.toml")
    with RecordingReader(db) as reader:
        data = report_data(reader, run_id, prices=table)
    html = render(data)
    assert "<img" not in html and 'onerror="alert' not in html
    assert html.count("</script>") == html.count("<script")  # only the report's own
    assert "&lt;/script&gt;&lt;img" in html
    (entry,) = [s for s in data["sessions"] if s["session_id"] == session_id]
    waterfall = entry["waterfall"]
    assert waterfall["matched_by"] == {"traceparent": 3, "window+endpoint": 3000}
    traced = [t for t in waterfall["turns"] if t["traced"]]
    assert traced and traced[0]["parts"]["llm"] > 0 and traced[0]["where"] in ("llm", "other")
    assert "Agent spans per turn" in html and "3000 by time window and vae.endpoint" in html
    assert traced[0]["more_spans"] == 3003 - 40 and len(traced[0]["spans"]) == 40  # bounded
    assert data["traces"]["spans"] == 3003
    assert data["cost"]["run"]["usd"] is None and data["cost"]["run"]["unknown_parts"] == 1
    assert "<h2>Cost</h2>" in html and ">?</td>" in html
