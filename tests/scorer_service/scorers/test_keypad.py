"""DTMF_RECEIVED over recorded DTMF events: the digits heard against those keyed."""

from __future__ import annotations

from typing import Any

import pytest

from vae.recordings.models import (
    EventKind,
    EventRecord,
    SessionRecord,
    SessionStatus,
    Side,
    Verdict,
)
from vae.recordings.scenarios.model import DEFAULT_SUCCESS_SIGNALS, SuccessSignal
from vae.recordings.scenarios.parse import scenario_from_dict
from vae.scorer_service import signals
from vae.scorer_service.context import ScoringContext
from vae.scorer_service.context_load import parse_events
from vae.scorer_service.scorers.keypad import KeypadScorer

P, F, NA, U = Verdict.PASSED, Verdict.FAILED, Verdict.NOT_APPLICABLE, Verdict.UNSCORED


def _ctx(*presses: tuple[Side, dict[str, Any]]) -> ScoringContext:
    sc = scenario_from_dict({"name": "s", "success_signals": ["DTMF_RECEIVED"]})
    session = SessionRecord("sid", "run", "s", 1, SessionStatus.ENDED, 0, 10**9, "end_tool")
    ctx = ScoringContext(session, sc, sc.domain, False, 0, "tool-only")
    events = [
        EventRecord("sid", side, EventKind.DTMF, (i + 1) * 10**8, payload)
        for i, (side, payload) in enumerate(presses)
    ]
    parse_events(ctx, events)
    return ctx


KEYED = {"digits": "42#", "carried_as": "in_band_tones", "tone_ms": 100, "gap_ms": 100}
CASES = [
    ("heard as keyed", [(Side.USER, KEYED), (Side.AGENT, {"digits": "42#"})], P, 1.0, ""),
    (
        "heard in two reports",
        [(Side.USER, KEYED), (Side.AGENT, {"digits": "4"}), (Side.AGENT, {"digits": "2#"})],
        P,
        1.0,
        "",
    ),
    ("a key lost", [(Side.USER, KEYED), (Side.AGENT, {"digits": "4#"})], F, 1 / 3, ""),
    ("nothing keyed", [(Side.AGENT, {"digits": "1"})], NA, None, ""),
    ("the agent reports nothing", [(Side.USER, KEYED)], U, None, "no_dtmf_report"),
    (
        "not carried",
        [(Side.USER, {"digits": "1", "carried_as": "", "not_delivered": "the call was ending"})],
        U,
        None,
        "not_delivered",
    ),
]


@pytest.mark.parametrize(
    ("why", "presses", "verdict", "value", "cause"), CASES, ids=[c[0] for c in CASES]
)
async def test_dtmf_received(
    why: str, presses: list[Any], verdict: Verdict, value: float | None, cause: str
) -> None:
    (score,) = await KeypadScorer().score(_ctx(*presses))
    assert score.signal == signals.DTMF_RECEIVED
    assert score.verdict is verdict, score.detail
    assert score.value == (pytest.approx(value) if value is not None else None)
    assert score.error == cause
    assert score.detail["reason"]


def test_dtmf_received_gates_only_where_a_scenario_lists_it() -> None:
    assert SuccessSignal.DTMF_RECEIVED not in DEFAULT_SUCCESS_SIGNALS
    listed = scenario_from_dict({"name": "s", "success_signals": ["DTMF_RECEIVED"]})
    assert listed.success_signals == [SuccessSignal.DTMF_RECEIVED]
