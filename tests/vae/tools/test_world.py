"""One session's tool world: checks, the scenario's answers, effects (no server)."""

from __future__ import annotations

from vae.tools.spec import ToolSet, name_problem, required_arguments, type_problem
from vae.tools.world import MAX_DELAY_S, Pending, Served, ToolWorld

TOOLS = {"change": {"booking_id": "code", "new_date": "day", "note": "free text"}}
SIDE = {
    "tool_effects": {
        "change": [{"op": "set", "path": "bookings.{booking_id}.date", "value": "$args.new_date"}]
    },
    "tool_argument_types": {"change": {"new_date": "date"}},
    "tool_responses": {
        "change": [
            {"when": {"booking_id": "LOCKED"}, "status": 423, "result": {"locked": True}},
            {"when": {"note": {"regex": "slow"}}, "delay_s": 999},
            {"when": {"note": "audit"}, "status": 202, "result": {"queued": True}},
            {"when": {"note": "fail-but-apply"}, "status": 500, "apply_effects": True},
        ]
    },
}
STATE = {"bookings": {"SJ1": {"date": "2026-03-12"}, "LOCKED": {"date": "2026-01-01"}}}


def world() -> ToolWorld:
    return ToolWorld(ToolSet.from_side(TOOLS, SIDE), STATE)


def call(w: ToolWorld, name: str, args: object) -> Served:
    prepared = w.prepare(name, args)
    return w.complete(prepared) if isinstance(prepared, Pending) else prepared


def test_the_declared_tools_and_their_required_arguments() -> None:
    tool = ToolSet.from_side(TOOLS, SIDE).tools["change"]
    assert tool.required == ("booking_id", "new_date") and tool.is_write
    assert required_arguments([{"op": "get", "path": "a.{x}", "value": {"k": ["$args.y"]}}]) == (
        "x", "y")  # fmt: skip
    schema = tool.input_schema()
    assert schema["properties"]["new_date"] == {"type": "string", "format": "date",
                                                "description": "day"}  # fmt: skip
    assert schema["required"] == ["booking_id", "new_date"]
    assert type_problem("integer", True) and not type_problem("number", 2)
    assert name_problem("..") and name_problem("a/b") and not name_problem("book_table")


def test_answers() -> None:
    w = world()
    ok = call(w, "change", {"booking_id": "SJ1", "new_date": "2026-03-14"})
    assert (ok.status, ok.body, ok.applied, ok.rule) == (200, {"ok": True}, True, None)
    assert w.state["bookings"]["SJ1"]["date"] == "2026-03-14"
    locked = call(w, "change", {"booking_id": "LOCKED", "new_date": "2026-03-14"})
    assert (locked.status, locked.body, locked.applied, locked.rule) == (423, {"locked": True},
                                                                          False, 0)  # fmt: skip
    assert w.state["bookings"]["LOCKED"]["date"] == "2026-01-01"
    slow = w.prepare("change", {"booking_id": "SJ1", "new_date": "2026-03-15", "note": "so slow"})
    assert isinstance(slow, Pending) and slow.delay_s == MAX_DELAY_S
    queued = call(w, "change", {"booking_id": "SJ1", "new_date": "2026-03-16", "note": "audit"})
    assert (queued.status, queued.body, queued.applied) == (202, {"queued": True}, True)
    both = call(w, "change", {"booking_id": "SJ1", "new_date": "2026-03-17",
                              "note": "fail-but-apply"})  # fmt: skip
    assert both.status == 500 and both.applied and w.state["bookings"]["SJ1"]["date"] == (
        "2026-03-17")  # fmt: skip
    dotted = call(w, "change", {"booking_id": "NOPE.date", "new_date": "2026-03-14"})
    assert dotted.status == 200  # a new record (set creates): a dot in a value is no path
    assert "NOPE.date" in w.state["bookings"]


def test_refusals_change_nothing() -> None:
    w = world()
    before = w.state
    assert call(w, "nope", {}).status == 404
    assert call(w, "change", ["x"]).status == 400
    bad = call(w, "change", {"booking_id": "SJ1", "new_date": "14 March"})
    assert (bad.status, bad.argument) == (422, "new_date")
    assert call(w, "change", {"booking_id": "SJ1"}).argument == "new_date"
    assert (
        call(w, "change", {"booking_id": "SJ1", "new_date": "2026-03-14", "x": 1}).argument == "x"
    )
    assert w.state == before


def test_initialization_actions_run_through_the_same_effects() -> None:
    moved = {"booking_id": "SJ1", "new_date": "2026-04-01"}
    actions = [{"func_name": "change", "arguments": moved}, {"func_name": "change"}]
    w = ToolWorld(ToolSet.from_side(TOOLS, SIDE), STATE, actions)
    assert w.state["bookings"]["SJ1"]["date"] == "2026-04-01"
    assert w.init_problems == ["change: missing argument 'booking_id'"]


def test_an_agent_process_gets_the_base_url() -> None:
    from vae.tools.client import BackendAddresses, agent_environment

    at = BackendAddresses.at("http://127.0.0.1:7/")
    assert agent_environment(at) == {"VAE_TOOLS_URL": "http://127.0.0.1:7"}
