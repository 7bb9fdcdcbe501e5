"""Text a bot sends is stored whatever it holds, on both back ends.

A lone surrogate is what JSON's ``"\\ud800"`` escape decodes to — a connector's
socket or a bot's file can carry one. It has no UTF-8 encoding: before the
writer cleaned rows, one such transcript failed the whole batch it was in
(``UnicodeEncodeError``), losing every row of that batch.
"""

from __future__ import annotations

import json

from tests.recordings.helpers import T0, add_run, add_session
from vae.recordings.backends.locator import Locator
from vae.recordings.models import EventKind, EventRecord, Side
from vae.recordings.read.reader import RecordingReader
from vae.recordings.write.writer import open_writer

HOSTILE = json.loads('"booked \\ud800 </script> \\udfff\\ud83d\\ude00"')


async def test_a_lone_surrogate_is_stored_as_a_replacement_and_loses_nothing(
    store: Locator,
) -> None:
    assert "\ud800" in HOSTILE  # the input really is unencodable
    async with open_writer(store) as w:
        await add_run(w, "2024-06-01T10-00-00", ["greet"])
        sid = await add_session(w, "2024-06-01T10-00-00", "greet", final_state=False)
        await w.add_events(
            [
                EventRecord(sid, Side.AGENT, EventKind.TRANSCRIPT, T0 + (60 + i) * 10**9,
                            {"text": HOSTILE if i == 1 else f"turn {i}", "is_final": True})
                for i in range(3)
            ]
        )  # fmt: skip
    with RecordingReader(store) as r:
        texts = [e.payload["text"] for e in r.events(sid) if e.kind is EventKind.TRANSCRIPT]
    # The helper's session has transcripts of its own before these three.
    assert texts[-3:] == ["turn 0", "booked \ufffd </script> \ufffd\U0001f600", "turn 2"]
