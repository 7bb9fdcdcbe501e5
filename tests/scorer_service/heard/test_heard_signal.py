"""HEARD_CORRECTLY on recorded sessions, and failures attributed to a mishearing.

Sessions are written through the store (tests/factories.py) with the caller's
spoken transcript and, per turn, what the agent reported hearing; the real
rescore scores them. The attributed reason must come first wherever a
session's reason is shown: the CLI text, the JSON and the report data.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.factories import SessionSpec, ToolCallSpec, Turn, scenario, write_run
from vae.cli.scoring.scoring_text import render_scoring
from vae.recordings.models import Verdict
from vae.recordings.read.reader import RecordingReader
from vae.scorer_service.config import ScoringConfig
from vae.scorer_service.heard.attribution import explains
from vae.scorer_service.ledger.as_dicts import scoring_as_dict
from vae.scorer_service.report.data import report_data
from vae.scorer_service.scoring.rescore import rescore

SAID = "Please move booking S J two two three zero to April twentieth."
MISHEARD = "please move booking SJ2230 to April twenty first"
REFERENCE = {"tool": "change_flight", "booking_id": "SJ2230", "new_date": "2026-04-20"}
ATTRIBUTED = 'the agent heard "April twenty first" where the caller said "April twentieth"'


def turns(heard: str | None, *, bye_heard: str | None = "okay bye") -> list[Turn]:
    return [
        Turn("agent", 0.5, 1.5, "SkyJet, how can I help?"),
        Turn("user", 2.0, 4.0, SAID, heard=heard),
        Turn("agent", 4.6, 6.0, "Done."),
        Turn("user", 6.5, 7.2, "Okay, bye.", heard=bye_heard),
    ]


def session(name: str, heard: str | None, new_date: str, **kw: Any) -> SessionSpec:
    call = ToolCallSpec("change_flight", {"booking_id": "SJ2230", "new_date": new_date}, at_s=4.4)
    return SessionSpec(name, turns=turns(heard, **kw), tool_calls=[call])


def doc(name: str, **fields: Any) -> dict[str, Any]:
    return scenario(name, reference_answer=REFERENCE, **fields)


async def scored(db: Path, docs: list[dict[str, Any]], specs: list[SessionSpec]) -> Any:
    info = await write_run(db, docs, specs)
    return await rescore(db, info.run_id, ScoringConfig())


def by_scenario(result: Any) -> dict[str, dict[str, Any]]:
    return {o.scenario_name: {s.signal: s for s in o.scores} for o in result.sessions}


async def test_heard_as_said_passes_with_wer_zero(db_path: Path) -> None:
    result = await scored(db_path, [doc("ok")], [session("ok", SAID, "2026-04-20")])
    heard = by_scenario(result)["ok"]["HEARD_CORRECTLY"]
    assert heard.verdict is Verdict.PASSED and heard.value == 1.0
    assert heard.detail["wer"] == 0 and heard.detail["mismatches"] == []
    assert heard.detail["said_source"] == heard.detail["heard_source"] == "bots"
    assert [t["said"] for t in heard.detail["turns"]] == [SAID, "Okay, bye."]


async def test_a_misheard_date_fails_and_explains_the_wrong_booking_first(db_path: Path) -> None:
    docs = [doc("misheard"), doc("wrong_on_its_own")]
    specs = [
        session("misheard", MISHEARD, "2026-04-21"),
        # Heard right, booked wrong: a failure that is not a mishearing.
        session("wrong_on_its_own", SAID, "2026-04-21"),
    ]
    result = await scored(db_path, docs, specs)
    scores = by_scenario(result)
    heard = scores["misheard"]["HEARD_CORRECTLY"]
    assert heard.verdict is Verdict.FAILED
    # "please move booking sj2230 to april 20" + "okay bye": one substitution in 9 words.
    assert heard.value == pytest.approx(1 - 1 / 9)
    (m,) = heard.detail["mismatches"]
    assert (m["said"], m["heard"], m["kind"]) == ("April twentieth", "April twenty first", "date")
    action = scores["misheard"]["ACTION_MATCH"]
    assert action.verdict is Verdict.FAILED  # attribution never changes a verdict
    assert action.detail["misheard"]["text"] == ATTRIBUTED
    assert scores["misheard"]["is_successful"].verdict is Verdict.FAILED
    # Heard right: no mishearing to blame.
    assert scores["wrong_on_its_own"]["HEARD_CORRECTLY"].verdict is Verdict.PASSED
    assert "misheard" not in scores["wrong_on_its_own"]["ACTION_MATCH"].detail

    outcomes = {o.scenario_name: o for o in result.sessions}
    # JSON (vae rescore --json, vae scores show --json): the session's reason, mishearing first.
    as_json = {
        s["scenario_name"]: s for s in scoring_as_dict(result.scoring, result.sessions)["sessions"]
    }
    reason = as_json["misheard"]["reason"]
    assert reason.startswith(ATTRIBUTED + "; ACTION_MATCH: ")
    assert "new_date: expected 2026-04-20, recorded 2026-04-21" in reason
    assert as_json["wrong_on_its_own"]["reason"].startswith("ACTION_MATCH: ")
    # CLI text.
    text = render_scoring(result.scoring, [outcomes["misheard"]])
    assert f"why: {ATTRIBUTED}; ACTION_MATCH" in text
    # The report: the one-line reason and the said/heard table with the difference marked.
    with RecordingReader(db_path) as reader:
        data = report_data(reader, result.scoring.run_id, include_audio=False)
    rows = {s["scenario_name"]: s for s in data["sessions"]}
    assert rows["misheard"]["reason"].startswith(ATTRIBUTED + "; ACTION_MATCH")
    table = rows["misheard"]["heard"]
    assert table["verdict"] == "failed" and table["heard_source"] == "bots"
    assert ["twentieth", "sub"] in table["turns"][0]["said_marks"]
    assert ["twenty first", "sub"] in table["turns"][0]["heard_marks"]


async def test_nothing_heard_is_unscored_and_never_gates_unless_listed(db_path: Path) -> None:
    docs = [doc("silent_ears"), doc("gated", success_signals=["ACTION_MATCH", "HEARD_CORRECTLY"])]
    specs = [
        session("silent_ears", None, "2026-04-20", bye_heard=None),
        session("gated", None, "2026-04-20", bye_heard=None),
    ]
    result = await scored(db_path, docs, specs)
    scores = by_scenario(result)
    heard = scores["silent_ears"]["HEARD_CORRECTLY"]
    assert heard.verdict is Verdict.UNSCORED
    assert heard.error.startswith("no_heard_transcript: ")
    assert "--transcribe" in heard.error
    # Non-gating by default: the session is decided on its own signals.
    assert scores["silent_ears"]["is_successful"].verdict is Verdict.PASSED
    # Listed as a success signal, it gates: unscored, never passed.
    gated = scores["gated"]["is_successful"]
    assert gated.verdict is Verdict.UNSCORED
    assert gated.detail["causes"] == ["no_heard_transcript"]


async def test_heard_without_anything_said_is_unscored_no_said_transcript(db_path: Path) -> None:
    spec = session("no_words", SAID, "2026-04-20")
    for t in spec.turns:
        if t.side == "user":
            t.text = ""  # the caller's bot reported an empty transcript: words unknown
    info = await write_run(db_path, [doc("no_words")], [spec])
    result = await rescore(db_path, info.run_id, ScoringConfig())
    heard = by_scenario(result)["no_words"]["HEARD_CORRECTLY"]
    # The caller spoke (its turns are on the line) but nobody knows its words.
    assert heard.verdict is Verdict.UNSCORED
    assert heard.error.startswith("no_said_transcript: ")


def test_which_failures_a_mismatch_explains() -> None:
    date = {"kind": "date", "said": "April twentieth", "heard": "April twenty first",
            "said_value": "04-20", "heard_value": "04-21"}  # fmt: skip
    # ACTION_MATCH: the reference against the recorded actions.
    assert explains(date, [(REFERENCE, [{**REFERENCE, "new_date": "2026-04-21"}])])
    assert not explains(date, [(REFERENCE, [{**REFERENCE, "new_date": "2026-04-22"}])])
    # DB diff rows and DB assertions: expected against actual.
    assert explains(date, [("2026-04-20", "2026-04-21")])
    # An NL assertion against what the agent said.
    assert explains(date, [('The agent confirms "April 20".', "Done, you fly on April 21.")])
    # A code that was not heard at all: expected has it, the recorded value lacks it.
    code = {"kind": "code", "said": "SJ2230", "heard": "", "said_value": "sj2230",
            "heard_value": ""}  # fmt: skip
    assert explains(code, [({"booking_id": "SJ2230"}, {"booking_id": ""})])
    assert not explains(code, [({"booking_id": "SJ2230"}, {"booking_id": "SJ2230"})])
