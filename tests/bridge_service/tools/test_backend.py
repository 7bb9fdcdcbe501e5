"""A session's tool backend over HTTP: state, canned answers, errors, delays, hostile input.

A real server on a loopback port (uvicorn), called with the standard library's
HTTP client (raw requests where a client would tidy the path up).
"""

from __future__ import annotations

import asyncio
import http.client
import json
import time
from typing import Any

from tests.bridge_service.tools.conftest import INITIAL, Served, start
from vae.recordings.models import EventKind
from vae.tools.client import call_tool


async def post(s: Served, name: str, args: Any) -> tuple[int, Any]:
    return await asyncio.to_thread(call_tool, s.url, name, args)


def raw(s: Served, method: str, path: str, body: bytes = b"", headers: dict[str, str] | None = None
        ) -> tuple[int, Any]:  # fmt: skip
    host, port = s.url.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=10)
    try:
        conn.putrequest(method, path, skip_accept_encoding=True)
        sent = {"Content-Type": "application/json", "Content-Length": str(len(body)),
                **(headers or {})}  # fmt: skip
        for key, value in sent.items():
            conn.putheader(key, value)
        conn.endheaders()
        if body:
            conn.send(body)
        response = conn.getresponse()
        data = response.read()
        return response.status, json.loads(data) if data else None
    finally:
        conn.close()


async def test_the_state_evolves_across_calls_and_each_call_is_recorded(served: Served) -> None:
    status, body = await post(served, "book_table",
                              {"date": "2026-05-01", "time": "19:00", "party_size": 4})  # fmt: skip
    assert (status, body) == (200, {"ok": True})
    status, body = await post(served, "get_booking", {"booking_id": "2026-05-01"})
    assert status == 200 and body == {"date": "2026-05-01", "time": "19:00", "party": 4}
    await post(served, "book_table", {"date": "2026-05-02", "time": "20:00", "party_size": 2})
    state = served.backend.world.state
    assert set(state["bookings"]) == {"2026-01-01", "2026-05-01", "2026-05-02"}
    assert state["stats"] == {"booked": 2}
    calls = served.recorded.calls()
    assert [c["tool"] for c in calls] == ["book_table", "get_booking", "book_table"]
    first = calls[0]
    assert first["transport"] == "http" and first["status"] == 200 and first["is_write"]
    assert first["arguments"] == {"date": "2026-05-01", "time": "19:00", "party_size": 4}
    assert first["applied"] and first["t_s"] >= 0
    assert [ns for k, _, ns in served.recorded.events] == sorted(
        ns for k, _, ns in served.recorded.events
    )


async def test_a_missing_record_is_404_and_changes_nothing(served: Served) -> None:
    status, body = await post(served, "get_booking", {"booking_id": "nope"})
    assert status == 404 and "no record" in body["error"]
    assert served.backend.world.state == INITIAL


async def test_canned_results_are_chosen_by_the_arguments(served: Served) -> None:
    assert await post(served, "check_availability", {"date": "2026-05-03"}) == (
        200, {"available": False, "why": "full"})  # fmt: skip
    assert await post(served, "check_availability", {"date": "2026-05-04"}) == (
        200, {"available": True})  # fmt: skip
    # No rule matches a date that is no date: the tool's own (empty) effects answer.
    assert await post(served, "check_availability", {"date": "soon"}) == (200, {"ok": True})
    rules = [c["rule"] for c in served.recorded.calls()]
    assert rules == [0, 1, None]
    assert await post(served, "list_specials", {}) == (200, {"ok": True})


async def test_an_error_status_with_a_delay_then_the_next_rule(served: Served) -> None:
    """The booking API is down once (503 after 0.4 s); the delay holds up nobody else."""
    started = time.monotonic()
    slow = asyncio.create_task(post(served, "cancel_booking", {"booking_id": "2026-01-01"}))
    await asyncio.sleep(0)  # let the slow call start (no ordering is asserted on this)
    quick = await post(served, "list_specials", {})
    quick_done = time.monotonic() - started
    status, body = await slow
    slow_done = time.monotonic() - started
    assert quick == (200, {"ok": True})
    assert status == 503 and body == {"error": "the booking API is down", "status": 503}
    assert slow_done >= 0.4 and quick_done < slow_done
    assert served.backend.world.state == INITIAL  # an error status runs no effects
    # times: 1 -> the next call is past the rule: the effect deletes the booking.
    assert await post(served, "cancel_booking", {"booking_id": "2026-01-01"}) == (
        200, {"ok": True})  # fmt: skip
    assert served.backend.world.state["bookings"] == {}
    recorded = {c["status"]: c for c in served.recorded.calls() if c["tool"] == "cancel_booking"}
    assert recorded[503]["delay_s"] == 0.4 and recorded[503]["error"] == "the booking API is down"
    assert recorded[503]["duration_ms"] >= 400 and not recorded[503]["applied"]


async def test_arguments_are_checked(served: Served) -> None:
    good = {"date": "2026-05-01", "time": "19:00", "party_size": 4}
    cases = [
        ({**good, "party_size": "four"}, "party_size", "must be of type integer"),
        ({**good, "date": "May 1"}, "date", "ISO date"),
        ({**good, "vip": True}, "vip", "not an argument of this tool"),
        ({"time": "19:00", "party_size": 4}, "date", "required"),
    ]
    for args, argument, why in cases:
        status, body = await post(served, "book_table", args)
        assert status == 422, args
        assert body["argument"] == argument and why in body["error"], body
    assert served.backend.world.state == INITIAL
    assert [c["status"] for c in served.recorded.calls()] == [422] * 4
    assert [c.get("argument") for c in served.recorded.calls()] == [a for _, a, _ in cases]


async def test_hostile_requests_get_clear_errors_are_recorded_and_the_backend_goes_on(
    served: Served,
) -> None:
    limit = served.backend.max_body_bytes
    huge = b'{"date": "' + b"x" * (limit + 10) + b'"}'
    cases: list[tuple[str, str, bytes, dict[str, str], int, str]] = [
        ("POST", "/tools/book_table", huge, {}, 413, "larger than"),
        # A body longer than declared is not read past the limit either.
        ("POST", "/tools/book_table", b"[" * 10, {"Content-Length": str(limit * 4)}, 413, "larger"),
        ("POST", "/tools/book_table", b"not json at all", {}, 400, "not JSON"),
        ("POST", "/tools/book_table", b"", {}, 400, "empty"),
        ("POST", "/tools/book_table", b'{"date": NaN}', {}, 400, "not JSON"),
        ("POST", "/tools/book_table", b"[1, 2]", {}, 400, "JSON object"),
        ("POST", "/tools/book_table", b"[" * 100_00 + b"]" * 100_00, {}, 400, "not JSON"),
        ("POST", "/tools/no_such_tool", b"{}", {}, 404, "unknown tool"),
        ("POST", "/tools/../openapi.json", b"{}", {}, 404, "unknown tool"),
        ("POST", "/tools/..%2F..%2Fetc%2Fpasswd", b"{}", {}, 404, "unknown tool"),
        ("POST", "/tools/book_table/../get_booking", b"{}", {}, 404, "unknown tool"),
        ("POST", "/tools/%00", b"{}", {}, 404, "unknown tool"),
        ("GET", "/tools/book_table", b"", {}, 405, "POST the arguments"),
    ]
    for method, path, body, headers, status, why in cases:
        # (one that declares more than it sends is answered at once, from the header)
        got = await asyncio.to_thread(raw, served, method, path, body, headers)
        assert got[0] == status, (path, body[:40], got)
        assert why in got[1]["error"], (path, got)
    recorded = served.recorded.calls()
    assert [c["status"] for c in recorded] == [c[4] for c in cases]
    assert recorded[0]["body_bytes"] > limit and "arguments" in recorded[0]
    assert recorded[2]["body"] == "not json at all"
    assert {c["tool"] for c in recorded[7:12]} == {
        "no_such_tool", "../openapi.json", "../../etc/passwd", "book_table/../get_booking", "\x00"
    }  # fmt: skip
    assert served.backend.world.state == INITIAL
    # The session goes on: a good call is served, and the OpenAPI route is untouched.
    good = {"date": "2026-05-01", "time": "19:00", "party_size": 4}
    assert await post(served, "book_table", good) == (200, {"ok": True})
    assert (await asyncio.to_thread(raw, served, "GET", "/openapi.json"))[0] == 200


async def test_two_backends_never_share_state() -> None:
    a, b = await start(), await start()
    try:
        assert a.url != b.url
        booking = {"date": "2026-05-01", "time": "19:00", "party_size": 4}
        await asyncio.gather(
            post(a, "book_table", booking),
            post(b, "cancel_booking", {"booking_id": "2026-01-01"}),  # 503 first
            post(b, "cancel_booking", {"booking_id": "2026-01-01"}),
        )
        assert set(a.backend.world.state["bookings"]) == {"2026-01-01", "2026-05-01"}
        assert b.backend.world.state["bookings"] == {}
        assert [c["tool"] for c in a.recorded.calls()] == ["book_table"]
        assert sorted(c["status"] for c in b.recorded.calls()) == [200, 503]
    finally:
        await a.backend.close()
        await b.backend.close()


async def test_a_closed_backend_refuses_connections(served: Served) -> None:
    url = served.url
    await served.backend.close()
    await served.backend.close()  # idempotent
    try:
        await asyncio.to_thread(call_tool, url, "list_specials", {}, 2.0)
    except OSError:
        pass
    else:
        raise AssertionError("a closed backend answered")
    assert served.recorded.events == [] or all(
        k is EventKind.TOOL_BACKEND_CALL for k, _, _ in served.recorded.events
    )
