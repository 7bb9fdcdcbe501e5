"""The tool backend's scenario keys: accepted, refused with the field named, and in step
with the run-time matching rules (vae/tools/match.py)."""

from __future__ import annotations

from typing import Any

import pytest

from vae.recordings.errors import ScenarioError
from vae.recordings.scenarios import tools
from vae.recordings.scenarios.check import check
from vae.recordings.scenarios.parse import scenario_from_dict
from vae.tools import match, spec

TOOLS = {"book": {"date": "day", "party": "guests"}, "cancel": {"date": "day"}}


def doc(**fields: Any) -> dict[str, Any]:
    agent = {"resources": {"tools": TOOLS}, **fields.pop("agent", {})}
    return {"name": "s", "agent": agent, **fields}


def test_a_scenario_with_a_backend_and_expectations_parses() -> None:
    sc = scenario_from_dict(doc(
        tool_backend=True,
        agent={"tool_argument_types": {"book": {"date": "date", "party": "integer"}},
               "tool_responses": {"book": [{"when": {"date": {"date": "2026-05-03"}},
                                            "status": 409, "error": "closed", "delay_s": 0.5}]}},
        tool_call_expectations=[{"tool": "book", "arguments": {"party": {"min": 1}}, "times": 1},
                                {"tool": "cancel", "called": False}],
    ))  # fmt: skip
    assert sc.tool_backend is True
    assert sc.tool_call_expectations[1] == {"tool": "cancel", "called": False}
    assert sc.agent.extras["tool_responses"]["book"][0]["status"] == 409
    again = scenario_from_dict(sc.to_dict(), "frozen")
    assert again == sc


PROBLEMS = [
    (doc(tool_backend="yes"), "tool_backend", "must be true or false"),
    (doc(tool_call_expectations=[{"called": True}]), "tool_call_expectations[0].tool",
     "required field is missing"),
    (doc(tool_call_expectations=[{"tool": "bok"}]), "tool_call_expectations[0].tool",
     "'bok' is not a tool of the agent"),
    (doc(tool_call_expectations=[{"tool": "book", "after": "cancl"}]),
     "tool_call_expectations[0].after", "'cancl' is not a tool"),
    (doc(tool_call_expectations=[{"tool": "book", "arguments": {"date": {"regex": "("}}}]),
     "tool_call_expectations[0].arguments.date.regex", "does not compile"),
    (doc(tool_call_expectations=[{"tool": "book", "arguments": {"date": {"date": "May"}}}]),
     "tool_call_expectations[0].arguments.date.date", "ISO date"),
    (doc(tool_call_expectations=[{"tool": "book", "times": {"least": 1}}]),
     "tool_call_expectations[0].times", "a number, or {min, max}"),
    (doc(tool_call_expectations=[{"tool": "book", "called": False, "times": 2}]),
     "tool_call_expectations[0].called", "no times or order"),
    (doc(tool_call_expectations=[{"tool": "book", "match": "some"}]),
     "tool_call_expectations[0].match", "is not one of: subset, exact"),
    (doc(tool_call_expectations=[{"tool": "book", "after_user_turn": 0}]),
     "tool_call_expectations[0].after_user_turn", "at least 1"),
    (doc(agent={"tool_argument_types": {"book": {"date": "datetime"}}}),
     "agent.tool_argument_types.book.date", "is not one of"),
    (doc(agent={"tool_argument_types": {"book": {"when": "date"}}}),
     "agent.tool_argument_types.book.when", "not an argument of book"),
    (doc(agent={"tool_responses": {"bok": [{"status": 500}]}}), "agent.tool_responses.bok",
     "not a tool of agent.resources.tools"),
    (doc(agent={"tool_responses": {"book": [{"status": 700}]}}),
     "agent.tool_responses.book[0].status", "at most 599"),
    (doc(agent={"tool_responses": {"book": [{"delay_s": 61}]}}),
     "agent.tool_responses.book[0].delay_s", "at most 60"),
    (doc(agent={"tool_responses": {"book": [{"statsu": 500}]}}),
     "agent.tool_responses.book[0].statsu", "did you mean 'status'"),
    ({"name": "s", "tool_backend": True}, "tool_backend", "declare the tools"),
    ({"name": "s", "tool_backend": True, "agent": {"resources": {"tools": {"a/b": {}}}}},
     "agent.resources.tools.a/b", "a served tool name"),
]  # fmt: skip


@pytest.mark.parametrize(("data", "field", "words"), PROBLEMS)
def test_problems_name_the_field(data: dict[str, Any], field: str, words: str) -> None:
    found = {i.field: i.problem for i in check(data)}
    assert field in found and words in found[field], found
    with pytest.raises(ScenarioError):
        scenario_from_dict(data)


def test_the_store_and_the_contract_agree_on_matchers_and_names() -> None:
    assert tools.SERVED_NAME == spec.NAME_PATTERN
    assert {frozenset(m) for m in tools.MATCHERS} == set(match.MATCHER_KEYS)
    samples = [{"min": 1}, {"max": "x"}, {"regex": "("}, {"regex": 3}, {"date": "2026-05-01"},
               {"date": "soon"}, {"date": True}, {"min": 1, "max": 2}]  # fmt: skip
    for sample in samples:
        ours = tools._matcher_problems("x", sample)
        assert bool(ours) == bool(match.matcher_problem(sample)), sample
    kinds = set(tools.ArgumentType.__args__)  # type: ignore[attr-defined]
    assert kinds == set(spec.TYPES)
