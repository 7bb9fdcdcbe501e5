"""Run selection by id or prefix, readable run ids, and resume classification."""

from __future__ import annotations

import pytest

from tests.recordings.helpers import add_run, add_session
from vae.recordings.backends.locator import Locator
from vae.recordings.errors import AmbiguousRunError, RunNotFoundError
from vae.recordings.read.reader import RecordingReader
from vae.recordings.read.selection import (
    ResumeState,
    classify_resume,
    new_run_id,
    resolve_run,
    select_run,
)
from vae.recordings.write.writer import open_writer

RUNS = ["2024-06-01T10-22-33", "2024-06-01T11-00-00", "2024-06-02T09-00-00", "nightly"]


def test_exact_id_wins_over_prefix() -> None:
    assert resolve_run([*RUNS, "nightly-2"], "nightly") == "nightly"


def test_unique_prefix_selects() -> None:
    assert resolve_run(RUNS, "2024-06-02") == "2024-06-02T09-00-00"


def test_ambiguous_prefix_lists_candidates() -> None:
    with pytest.raises(AmbiguousRunError) as info:
        resolve_run(RUNS, "2024-06-01")
    assert info.value.candidates == RUNS[:2]
    assert "2024-06-01T10-22-33" in str(info.value) and "2024-06-01T11-00-00" in str(info.value)


@pytest.mark.parametrize("ref", ["2023", "", "x"])
def test_no_match(ref: str) -> None:
    with pytest.raises(RunNotFoundError):
        resolve_run(RUNS, ref)


def test_new_run_id_is_readable_and_unique() -> None:
    now = 1717237353.0
    first = new_run_id([], now=now)
    assert len(first) == 19 and first[10] == "T" and ":" not in first
    assert new_run_id([first], now=now) == f"{first}-2"
    assert new_run_id([first, f"{first}-2"], now=now) == f"{first}-3"


async def test_resume_classification_cases(store: Locator) -> None:
    run = "2024-06-01T10-22-33"
    names = ["done", "short", "running", "silent", "nostate", "fresh", "retried", "cut", "alone"]
    async with open_writer(store) as w:
        await add_run(w, run, names)
        await add_session(w, run, "done", agent_turns=3)
        await add_session(w, run, "short", agent_turns=1)
        await add_session(w, run, "running", ended=False)
        await add_session(w, run, "silent", user_turns=0, agent_turns=0)
        await add_session(w, run, "nostate", final_state=False)
        old = await add_session(w, run, "retried", attempt=1, ended=False)
        await w.mark_superseded(old, "resumed")
        await add_session(w, run, "retried", attempt=2, agent_turns=4)
        # Unfinished stop reasons run again even with turns and a final state.
        await add_session(w, run, "cut", agent_turns=5, stop_reason="cancelled")
        await add_session(w, run, "alone", stop_reason="peer_never_joined")
    with RecordingReader(store) as r:
        assert select_run(r, "2024-06") == run
        got = {d.scenario_name: d for d in classify_resume(r, run, min_agent_turns=2)}
    assert got["done"].state is ResumeState.COMPLETED
    assert got["short"].state is ResumeState.IN_FLIGHT and "min_agent_turns" in got["short"].reason
    assert got["running"].state is ResumeState.IN_FLIGHT and "never ended" in got["running"].reason
    assert (
        got["silent"].state is ResumeState.IN_FLIGHT
        and "0 conversation turns" in got["silent"].reason
    )
    assert got["nostate"].state is ResumeState.IN_FLIGHT and "final state" in got["nostate"].reason
    assert got["fresh"].state is ResumeState.FRESH and got["fresh"].session_id is None
    for name, reason in (("cut", "cancelled"), ("alone", "peer_never_joined")):
        assert got[name].state is ResumeState.IN_FLIGHT
        assert f"ended {reason}" in got[name].reason and "unfinished" in got[name].reason
    assert got["retried"].state is ResumeState.COMPLETED and "attempt 2" in got["retried"].reason
    with RecordingReader(store) as r:
        # without a floor, a short run is complete
        short = {d.scenario_name: d for d in classify_resume(r, run)}["short"]
    assert short.state is ResumeState.COMPLETED
