"""Tying received spans to sessions, kept in a real store file.

Each rule of docs/traces.md, in the order spans really arrive (children before
their parents), with concurrent sessions: the session id attribute, vae's
trace context (through the agent's own parent chain), the time window with the
``vae.endpoint`` resource attribute, the time window alone when it is
unambiguous (else kept unmatched, never guessed), the 10 s grace after a
session ends, and the bound on what is held.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from vae.bridge_service.telemetry import matcher as matcher_module
from vae.bridge_service.telemetry.matcher import Matcher
from vae.bridge_service.telemetry.registry import Registry
from vae.otel.spans import InSpan
from vae.recordings.read.reader import RecordingReader
from vae.recordings.read.trace_reads import agent_spans
from vae.recordings.traces import ids
from vae.recordings.write.writer import RecordingWriter, open_writer

S = 1_000_000_000
RUN = "run-1"


@pytest.fixture
async def writer(db_path: Path) -> AsyncIterator[RecordingWriter]:
    async with open_writer(db_path) as w:
        yield w


def span(trace: str, span_id: str, parent: str = "", *, start: int, name: str = "s",
         resource: dict[str, str] | None = None, **attributes: str) -> InSpan:  # fmt: skip
    return InSpan(trace, span_id, parent, name, "internal", start, start + S // 10, "",
                  dict(attributes), resource or {"service.name": "agent"})  # fmt: skip


def kept(db: Path) -> dict[str, tuple[str | None, str]]:
    with RecordingReader(db) as r:
        return {s.span_id: (s.session_id, s.matched_by) for s in agent_spans(r, RUN)}


async def test_each_rule_ties_spans_to_the_right_one_of_concurrent_sessions(
    writer: RecordingWriter, db_path: Path
) -> None:
    now = time.time_ns()
    registry = Registry()
    for n in (1, 2, 3):  # three sessions at once, one agent endpoint each
        registry.started(RUN, f"s{n}", f"ws://127.0.0.1:900{n}", now - 20 * S)
    m = Matcher(registry, writer)
    trace = ids.run_trace_id(RUN)

    # vae's context: the agent's leaf spans arrive first, their conversation span last.
    leaf = span(trace, "00000000000000a2", "00000000000000a1", start=now - 5 * S)
    deeper = span(trace, "00000000000000a3", "00000000000000a2", start=now - 5 * S)
    assert await m.take([leaf, deeper]) == 0
    assert kept(db_path) == {}  # waiting for an ancestor
    conversation = span(trace, "00000000000000a1", ids.session_span_id("s2"), start=now - 9 * S)
    await m.take([conversation])
    # A span naming its session; foreign traces tied by window + endpoint.
    named = span("f" * 32, "00000000000000b1", start=now - 3 * S,
                 resource={"vae.session_id": "s3"})  # fmt: skip
    by_endpoint = span("e" * 32, "00000000000000c1", start=now - 4 * S,
                       resource={"vae.endpoint": "ws://127.0.0.1:9001"})  # fmt: skip
    same_trace = span("e" * 32, "00000000000000c2", start=now - 60 * S)  # outside every window
    ambiguous = span("d" * 32, "00000000000000d1", start=now - 4 * S)  # three sessions hold it
    outside = span("c" * 32, "00000000000000e1", start=now - 3600 * S)  # no session, no run
    await m.take([named, by_endpoint, same_trace, ambiguous, outside])
    await writer.flush()
    assert kept(db_path) == {
        "00000000000000a1": ("s2", "traceparent"),
        "00000000000000a2": ("s2", "traceparent"),
        "00000000000000a3": ("s2", "traceparent"),
        "00000000000000b1": ("s3", "session_id"),
        "00000000000000c1": ("s1", "window+endpoint"),
        "00000000000000c2": ("s1", "window+endpoint"),  # its trace follows its first span
        "00000000000000d1": (None, "unmatched"),  # kept under the run, not guessed
    }
    assert m.stats.unrelated == 1


async def test_spans_up_to_ten_seconds_after_the_end_still_tie_and_orphans_fall_back(
    writer: RecordingWriter, db_path: Path
) -> None:
    now = time.time_ns()
    registry = Registry()
    registry.started(RUN, "late", "ws://a", now - 30 * S)
    registry.ended("late", now - 9 * S)  # ended 9 s ago: still within the grace
    registry.started(RUN, "gone", "ws://b", now - 60 * S)
    registry.ended("gone", now - 11 * S)  # 11 s ago: forgotten at the next sweep
    m = Matcher(registry, writer)
    trace = ids.run_trace_id(RUN)
    await m.sweep(now)
    assert set(registry.sessions) == {"late"}
    on_time = span(trace, "0000000000000001", ids.session_span_id("late"), start=now - 12 * S)
    too_late = span(trace, "0000000000000002", ids.session_span_id("gone"), start=now - 40 * S)
    orphan = span(trace, "0000000000000003", "00000000000000ff", start=now - 20 * S,
                  resource={"vae.endpoint": "ws://a"})  # its parent never comes  # fmt: skip
    await m.take([on_time, too_late, orphan])
    await m.sweep(now + int(10.5 * S))  # the orphan waited out the grace: its window decides
    await writer.flush()
    assert kept(db_path) == {
        "0000000000000001": ("late", "traceparent"),
        "0000000000000002": (None, "unmatched"),
        "0000000000000003": ("late", "window+endpoint"),
    }


async def test_what_is_held_is_bounded(
    writer: RecordingWriter, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(matcher_module, "MAX_PENDING", 3)
    now = time.time_ns()
    registry = Registry()
    registry.started(RUN, "s", "", now - S)
    m = Matcher(registry, writer)
    trace = ids.run_trace_id(RUN)
    waiting = [span(trace, f"{i + 1:016x}", "00000000000000ff", start=now) for i in range(5)]
    assert await m.take(waiting) == 2  # refused: the sender is told (partial success)
    assert m.stats.refused == 2
