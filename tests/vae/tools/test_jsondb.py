"""The agent's JSON DB and its generic tools."""

from __future__ import annotations

import pytest

from vae.tools.jsondb import JsonDb, ToolError

EFFECTS = {
    "change_flight": [{"op": "set", "path": "bookings.{booking_id}.date", "value": "$args.date"}],
    "get_booking": [{"op": "get", "path": "bookings.{booking_id}"}],
    "add_note": [{"op": "append", "path": "notes", "value": {"text": "$args.text"}}],
    "add_bag": [{"op": "increment", "path": "bookings.{booking_id}.bags", "value": 1}],
    "broken": [
        {"op": "set", "path": "bookings.{booking_id}.date", "value": "x"},
        {"op": "delete", "path": "bookings.nope"},
    ],
}


def db() -> JsonDb:
    return JsonDb({"bookings": {"B1": {"date": "2026-01-01", "bags": 0}}})


def test_write_tools_change_state_and_are_writes() -> None:
    d = db()
    out = d.call("change_flight", {"booking_id": "B1", "date": "2026-02-02"}, EFFECTS)
    assert (out.error, out.is_write) == ("", True)
    assert d.state["bookings"]["B1"]["date"] == "2026-02-02"
    d.call("add_bag", {"booking_id": "B1"}, EFFECTS)
    d.call("add_note", {"text": "aisle"}, EFFECTS)
    assert d.state["bookings"]["B1"]["bags"] == 1
    assert d.state["notes"] == [{"text": "aisle"}]


def test_read_tools_return_the_record_and_are_not_writes() -> None:
    out = db().call("get_booking", {"booking_id": "B1"}, EFFECTS)
    assert out.result == {"date": "2026-01-01", "bags": 0}
    assert out.is_write is False
    assert db().call("undeclared", {}, EFFECTS).result == {"ok": True}


def test_a_failing_tool_reports_its_error_and_changes_nothing() -> None:
    d = db()
    out = d.call("broken", {"booking_id": "B1"}, EFFECTS)
    assert "nope" in out.error
    assert d.state["bookings"]["B1"]["date"] == "2026-01-01"
    missing = d.call("change_flight", {"booking_id": "B1"}, EFFECTS)
    assert "missing argument 'date'" in missing.error


def test_unknown_operation_is_an_error() -> None:
    with pytest.raises(ToolError, match="unknown op"):
        db().apply({"op": "explode", "path": "a"}, {})


def test_state_sync_delta_merges_deeply_and_null_deletes() -> None:
    d = JsonDb({"a": {"b": 1, "c": 2}, "d": 3})
    d.merge({"a": {"b": 5}, "d": None, "e": [1]})
    assert d.state == {"a": {"b": 5, "c": 2}, "e": [1]}


def test_initial_state_is_copied_not_shared() -> None:
    initial = {"x": {"y": 1}}
    d = JsonDb(initial)
    d.apply({"op": "set", "path": "x.y", "value": 2}, {})
    assert initial == {"x": {"y": 1}}
