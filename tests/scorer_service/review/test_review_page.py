"""``vae review`` in headless Chromium: the token guards every request, a click and a
key press each write a label at once, a reload shows them, bot text stays text.

Each test runs the real command (a process serving on loopback) against a real
store file, and asserts the page logged no error and requested nothing outside
its own server.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tests.factories import SessionSpec, ToolCallSpec, Turn, conversation, scenario, write_run_sync
from tests.scorer_service.report.runs import score
from tests.scorer_service.review.helpers import open_url, request, serving
from vae.recordings.labels import LabelKind
from vae.recordings.read.reader import RecordingReader
from vae.scorer_service.config import ScoringConfig
from vae.scorer_service.labels.labelling import make_label, store_labels

RUN = "2024-06-01T10-00-00"
EVIL = "</script><script>window.pwned=1</script><img src=http://x.invalid/a onerror=1>"
JSON = {"Content-Type": "application/json"}


def make_db(tmp_path: Path, evil: str = "Move my flight to Friday.") -> Path:
    db = tmp_path / "vae.db"
    docs = [
        scenario("book_table", reference_answer={"tool": "book", "name": "Ann"}),
        scenario("change_flight", domain="airline",
                 reference_answer={"tool": "change_flight", "date": "friday"},
                 nl_assertions=[f'The agent says "{evil}"', "The agent says goodbye"]),
        scenario("order_status", domain="retail", reference_answer={"tool": "look_up"}),
    ]  # fmt: skip
    specs = [
        SessionSpec("book_table", turns=conversation(2),
                    tool_calls=[ToolCallSpec("book", {"name": "Ann"}, at_s=3.0)]),
        SessionSpec("change_flight", turns=[Turn("agent", 0.5, 2.0, "SkyJet, how can I help?"),
                                            Turn("user", 2.6, 4.0, evil),
                                            Turn("agent", 4.6, 6.0, "Moved to Saturday.")],
                    tool_calls=[ToolCallSpec("change_flight", {"date": "saturday"}, at_s=4.5)]),
        SessionSpec("order_status", turns=conversation(2),
                    tool_calls=[ToolCallSpec("look_up", {}, at_s=3.0)]),
    ]  # fmt: skip
    write_run_sync(db, docs, specs, run_id=RUN)
    score(db, RUN, ScoringConfig(no_judge=True))
    return db


def labels(db: Path) -> list[tuple[str, str, str, str, str]]:
    with RecordingReader(db) as reader:
        names = {s.session_id: s.scenario_name for s in reader.sessions(RUN)}
        return [
            (names[x.session_id], x.item, str(x.verdict), x.note, x.labeller)
            for x in reader.labels(RUN)
        ]


def test_every_request_needs_the_token_and_a_wrong_one_writes_nothing(tmp_path: Path) -> None:
    db = make_db(tmp_path)
    with RecordingReader(db) as reader:
        sid = reader.latest_attempts(RUN)["book_table"].session_id
    label = {"session_id": sid, "kind": "session", "verdict": "pass", "note": "fine"}
    with serving(db, RUN, "--by", "ann") as info:
        url = info["url"]
        base, token = url.split("?token=")
        assert request(url)[0] == 200
        assert request(base)[0] == 403
        assert request(f"{base}?token=wrong")[0] == 403
        assert request(f"{base}audio/{sid}")[0] == 403
        assert request(f"{base}audio/{sid}?token={token}")[0] == 200
        # A session's details, loaded when the page opens it: the same guard.
        assert request(f"{base}session/{sid}")[0] == 403
        status, details = request(f"{base}session/{sid}?token={token}")
        assert status == 200 and b'class="transcript"' in details
        assert request(f"{base}session/nope?token={token}")[0] == 404
        for bad in ({"X-Vae-Token": "wrong"}, {}):
            status, body = request(f"{base}labels", method="POST", body=label,
                                   headers={**JSON, **bad})  # fmt: skip
            assert status == 403 and b"token" in body
        # the right token but a foreign Host (DNS rebinding) is refused too
        evil_host = {**JSON, "X-Vae-Token": token, "Host": "attacker.example"}
        assert request(f"{base}labels", method="POST", body=label, headers=evil_host)[0] == 403
        assert labels(db) == [], "nothing written without the token"
        with open_url(f"{base}?token=wrong") as (page, watch):
            assert "wrong or missing token" in page.content()
            assert page.locator("button.lb").count() == 0
        assert watch.requests == []
        # bad labels with the right token: 400, nothing written
        ok = {**JSON, "X-Vae-Token": token}
        for broken in ({**label, "verdict": "maybe"}, {**label, "session_id": "nope"},
                       {**label, "kind": "signal", "signal": "LOUDNESS"}):  # fmt: skip
            assert request(f"{base}labels", method="POST", body=broken, headers=ok)[0] == 400
        assert labels(db) == []
        status, body = request(f"{base}labels", method="POST", body=label, headers=ok)
        assert status == 200
    assert labels(db) == [("book_table", "session", "pass", "fine", "ann")]


def test_a_click_and_a_key_press_label_at_once_and_a_reload_shows_them(tmp_path: Path) -> None:
    db = make_db(tmp_path)
    with serving(db, RUN, "--by", "ann") as info, open_url(info["url"]) as (page, watch):
        assert page.locator("#labeller").inner_text() == "ann"
        assert page.locator("#progress").inner_text() == "0 of 3 sessions labelled"
        current = page.locator("details.session.current")
        assert "change_flight" in current.locator("summary").inner_text(), "failing first"
        # Play: a transcript line seeks the audio served by the page's server.
        line = current.locator("tr.line", has_text="Moved to Saturday.")
        t = float(line.get_attribute("data-t") or "nan")
        line.click()
        page.wait_for_function(
            "([t]) => { const a = document.querySelector('details.session.current audio');"
            " return a && Math.abs(a.currentTime - t) < 0.6; }",
            arg=[t], timeout=15_000,
        )  # fmt: skip
        page.evaluate("() => document.querySelector('details.session.current audio').pause()")
        # Click: one signal, with a note.
        row = current.locator('.lrow[data-key="signal:ACTION_MATCH"]')
        row.locator("input.lnote").fill("booked Saturday, asked for Friday")
        row.locator("button.lb.fail").click()
        page.wait_for_function(
            "() => document.querySelector('.lrow[data-key=\"signal:ACTION_MATCH\"] .lstate')"
            ".textContent.startsWith('saved')"
        )
        assert labels(db) == [
            ("change_flight", "signal:ACTION_MATCH", "fail", "booked Saturday, asked for Friday",
             "ann"),
        ], "written when the page says saved"  # fmt: skip
        # An NL assertion by click (its index is kept, with its text).
        current.locator('.lrow[data-key="assertion:1"] button.lb.unsure').click()
        page.wait_for_function(
            "() => document.querySelector('details.session.current "
            ".lrow[data-key=\"assertion:1\"] .lstate').textContent.startsWith('saved')"
        )
        # Keys: f labels the current session and steps to the next unlabelled one.
        page.locator("h1").click()
        page.keyboard.press("f")
        page.wait_for_function(
            "() => document.getElementById('progress').textContent.startsWith('1 of 3')"
        )
        page.wait_for_function(
            "() => !document.querySelector('details.session.current summary')"
            ".textContent.includes('change_flight')"
        )
        second = page.locator("details.session.current summary b").inner_text()
        page.keyboard.press("p")
        page.wait_for_function(
            "() => document.getElementById('progress').textContent.startsWith('2 of 3')"
        )
        third = page.locator("details.session.current summary b").inner_text()
        assert len({"change_flight", second, third}) == 3
        page.keyboard.press("k")  # back to the second
        assert page.locator("details.session.current summary b").inner_text() == second
        page.keyboard.press("n")  # the next unlabelled is the third
        assert page.locator("details.session.current summary b").inner_text() == third
        # A click on a closed session's summary opens it and makes it the current one.
        idx = page.locator("details.session:not([open])").first.get_attribute("data-idx")
        closed = page.locator(f'details.session[data-idx="{idx}"]')
        name = closed.locator(":scope > summary b").inner_text()
        closed.locator(":scope > summary").click()
        assert closed.get_attribute("open") is not None
        assert page.locator("details.session.current summary b").inner_text() == name
        assert closed.locator(".lrow input.lnote").first.is_visible()
        # Its details were not in the page: they are fetched now that it is open.
        assert closed.locator("table.transcript").first.inner_text()
        assert closed.locator("svg.timeline").count() == 1
        got = labels(db)
        assert ("change_flight", "session", "fail", "", "ann") in got
        assert (second, "session", "pass", "", "ann") in got
        with RecordingReader(db) as reader:
            (nl,) = [x for x in reader.labels(RUN) if x.kind is LabelKind.ASSERTION]
        assert (nl.assertion, nl.assertion_text) == (1, "The agent says goodbye")
        # Reload: everything is still there, and the third session is next.
        page.reload()
        assert page.locator("#progress").inner_text() == "2 of 3 sessions labelled"
        flight = page.locator("details.session", has_text="change_flight").first
        assert flight.locator(".mine-chip").inner_text() == "you: fail"
        row = flight.locator('.lrow[data-key="signal:ACTION_MATCH"]')
        assert row.locator("button.lb.fail").get_attribute("aria-pressed") == "true"
        assert row.locator("input.lnote").input_value() == "booked Saturday, asked for Friday"
        assert page.locator("details.session.current summary b").inner_text() == third
    assert watch.errors == [] and watch.requests == []


def test_hostile_bot_text_and_notes_are_shown_as_text(tmp_path: Path) -> None:
    db = make_db(tmp_path, evil=EVIL)
    with RecordingReader(db) as reader:
        note = make_label(reader, RUN, "change_flight", "fail", note=EVIL, by="eve<b>")
    asyncio.run(store_labels(db, [note]))
    with serving(db, RUN, "--by", "ann") as info, open_url(info["url"]) as (page, watch):
        assert page.evaluate("() => window.pwned") is None
        flight = page.locator("details.session", has_text="change_flight").first
        assert EVIL in flight.locator("table.transcript").inner_text()
        assert f'NL #0: The agent says "{EVIL}"' in flight.locator(".lpanel").inner_text()
        assert f"eve<b>: fail — {EVIL}" in flight.locator("ul.lothers").inner_text()
        assert page.locator("img").count() == 0
        # Once the details (loaded on demand, as HTML the server escaped) are in the page:
        # still nothing ran.
        assert page.evaluate("() => window.pwned") is None
    assert watch.errors == [] and watch.requests == []


@pytest.mark.parametrize("args", [["--scoring", "nope"], ["--by", ""], ["--port", "70000"]])
def test_bad_options_are_usage_errors(tmp_path: Path, args: list[str]) -> None:
    from click.testing import CliRunner

    from vae.cli.main import vae

    db = make_db(tmp_path)
    result = CliRunner().invoke(vae, ["review", RUN, "--db", str(db), *args])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
