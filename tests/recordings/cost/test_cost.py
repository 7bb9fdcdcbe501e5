"""Cost from usage and a price table, computed by hand for a run with known usage.

Session ``a`` (attempt 2; attempt 1 is superseded and not counted) reports
its LLM calls both as pipecat usage metrics and as GenAI span attributes, its
TTS characters both ways too, and its STT seconds on a span: each counted
once. Session ``b`` uses a model the table has no price for, and reports no
STT: its STT is the caller audio vae sent, with no model to price. Unknown is
never 0, and the totals count what was unknown.
"""

from __future__ import annotations

import asyncio
import tomllib
from pathlib import Path

import pytest

from tests.factories import SessionSpec, Turn, scenario, write_run
from vae.recordings.cost.compute import cost_of, usd_text
from vae.recordings.cost.prices import PriceFileError, load, parse
from vae.recordings.models import EventKind
from vae.recordings.read.cost_reads import run_cost
from vae.recordings.read.reader import RecordingReader
from vae.recordings.traces.model import AgentSpan
from vae.recordings.write.trace_rows import add_agent_spans
from vae.recordings.write.writer import open_writer

PRICES = """
as_of = "2026-12-01"
[[prices]]
model = "synthetic"
input_per_token = 0.000001
output_per_token = 0.000002
[[prices]]
model = "voice-1"
per_character = 0.00001
[[prices]]
provider = "acme"
model = "ears-1"
per_second = 0.0001
[[prices]]
provider = "other"
model = "ears-1"
per_second = 99.0
"""
S = 1_000_000_000
TURNS = [Turn("agent", 0.5, 2.0, "hi"), Turn("user", 3.0, 5.0, "book"), Turn("agent", 6.0, 8.0)]


async def record(db: Path, with_b: bool = True) -> tuple[str, str, str]:
    """The run; without ``b`` every price of it is known."""
    info = await write_run(
        db,
        [scenario("a"), *([scenario("b")] if with_b else [])],
        [
            SessionSpec("a", TURNS, attempt=1, superseded=True, tokens_per_turn=(10**6, 10**6)),
            SessionSpec("a", TURNS, attempt=2, duration_s=10.0, events=[
                (6.1, "agent", EventKind.METRIC, {"name": "characters", "value": 30,
                                                  "unit": "chars", "model": "voice-1"})]),
            SessionSpec("b", TURNS[:2], duration_s=8.0, agent_bot={"name": "x"},
                        tokens_per_turn=None, events=[
                (1.0, "agent", EventKind.TOKEN_USAGE, {"model": "mystery", "prompt_tokens": 5,
                                                        "completion_tokens": 5})]),
        ][: 3 if with_b else 2],
    )  # fmt: skip
    a, b = info.session_ids["a"], info.session_ids.get("b", "")
    with RecordingReader(db) as r:
        t0 = r.session(a).started_ns  # type: ignore[union-attr]

    def span(name: str, at: float, **attributes: object) -> AgentSpan:
        start = t0 + int(at * S)
        return AgentSpan(info.run_id, a, "ab" * 16, f"{int(at * 10):016x}", "", name, "", "agent",
                         start, start + S // 2, attributes=dict(attributes),
                         matched_by="traceparent")  # fmt: skip

    async with open_writer(db) as writer:
        await add_agent_spans(writer, [
            # the second agent turn's LLM call, also reported as a usage metric at 6.0 s
            span("llm", 5.9, **{"gen_ai.request.model": "synthetic", "gen_ai.usage.input_tokens":
                                100, "gen_ai.usage.output_tokens": 20}),
            span("tts", 6.0, **{"gen_ai.request.model": "voice-1", "metrics.character_count": 30}),
            span("stt", 3.0, **{"gen_ai.request.model": "ears-1", "gen_ai.provider.name": "acme",
                                "gen_ai.operation.name": "stt", "metrics.audio_seconds": 4.0}),
        ])  # fmt: skip
    return info.run_id, a, b


def test_hand_computed_costs_and_unknown_never_zero(tmp_path: Path) -> None:
    db = tmp_path / "vae.db"
    run_id, a, b = asyncio.run(record(db))
    table = parse(tomllib.loads(PRICES), "prices.toml")
    with RecordingReader(db) as reader:
        cost = run_cost(reader, run_id, table)
    assert set(cost.sessions) == {a, b}  # the superseded attempt is not counted
    ca = cost.sessions[a]
    by_kind = sorted((i.kind, i.source, c) for i, c in ca.lines)
    # LLM: two calls of 100 + 20 tokens (one reported both ways, counted once);
    # TTS: 30 characters (both ways, once); STT: the 4 s the agent's recogniser reported.
    assert by_kind == [
        ("llm", "metrics", pytest.approx(100 * 1e-6 + 20 * 2e-6)),
        ("llm", "metrics+span", pytest.approx(100 * 1e-6 + 20 * 2e-6)),
        ("stt", "span", pytest.approx(4 * 1e-4)),
        ("tts", "metrics+span", pytest.approx(30 * 1e-5)),
    ]
    assert ca.usd == pytest.approx(2 * 0.00014 + 0.0004 + 0.0003)
    cb = cost.sessions[b]
    assert cb.usd is None and cb.unknown == 2  # "mystery" tokens; STT seconds, no model
    (stt,) = [i for i, _ in cb.lines if i.kind == "stt"]
    assert (stt.source, stt.seconds, stt.model) == ("wire", 8.0, "")
    total = cost.total
    assert total.usd is None and total.unknown_parts == 1 and total.unknown_items == 2
    assert total.known_usd == pytest.approx(0.00098)
    assert usd_text(total.usd) == "?" and usd_text(ca.usd) == "$0.0010"
    assert cost_of([], table).usd is None  # an agent that reported nothing did not cost 0


def test_price_files_are_checked_and_lookups_prefer_the_provider(tmp_path: Path) -> None:
    table = parse(tomllib.loads(PRICES))
    assert table.lookup("acme", "ears-1").per_second == 1e-4  # type: ignore[union-attr]
    assert table.lookup("nobody", "ears-1") is None  # both entries name another provider
    assert table.lookup("", "synthetic") is not None and table.lookup("", "") is None
    bad = {
        "[[prices]]\nmodel = 'm'\ninput_per_tokens = 1": r"unknown key\(s\) input_per_tokens",
        "[[prices]]\nmodel = 'm'\nper_second = -1": "must not be negative",
        "[[prices]]\nmodel = 'm'": "give at least one of",
        "[[prices]]\nper_second = 1": "model is required",
        "currency = 'EUR'": "currency must be USD",
        "[[prices]]\nmodel = 'm'\nper_second = 'free'": "must be a number",
        "prices = [": "not valid TOML",
    }
    for text, message in bad.items():
        path = tmp_path / "p.toml"
        path.write_text(text)
        with pytest.raises(PriceFileError, match=message) as caught:
            load(path)
        assert str(path) in str(caught.value)
    with pytest.raises(PriceFileError, match="cannot read"):
        load(tmp_path / "missing.toml")
    shipped = load(Path(__file__).resolve().parents[3] / "examples/prices/prices.example.toml")
    assert shipped.as_of and shipped.prices
