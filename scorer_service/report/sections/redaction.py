"""The report's "Redaction" section: what was redacted where, so no verdict changes silently.

Shown only for a redacted run (``vae redact``, ``--redact`` on import or
run): each pass (how, when, which configuration) and its ledger — per
session, each finding's type, the field or audio channel, the time span and
how the audio was masked (the words, or the whole turn where there were no
word timings) — never a value: the ledger holds none. Whether the shown
scoring was judged on redacted text is said beside it. Every value is escaped.
"""

from __future__ import annotations

import time
from html import escape
from typing import Any

from vae.recordings.read.reader import RecordingReader
from vae.recordings.redact import ledger


def redaction_block(reader: RecordingReader, run_id: str) -> dict[str, Any] | None:
    """The run's redaction passes and ledger as plain data; None for a run never redacted."""
    passes = ledger.passes(reader.conn, run_id)
    if not passes:
        return None
    rows = [
        {"session_id": e.session_id or "", "location": e.location, "entity": e.entity,
         "channel": e.channel, "start_s": e.start_s, "end_s": e.end_s, "method": e.method,
         "note": e.note}
        for e in ledger.entries(reader.conn, run_id)
    ]  # fmt: skip
    out = []
    for p in passes:
        config = p["describe"].get("config") or {}
        out.append({"mode": p["mode"], "created_ns": p["created_ns"],
                    "fingerprint": p["fingerprint"], "types": config.get("entities", []),
                    "custom": [c.get("type") for c in config.get("custom", [])],
                    "summary": p["summary"]})  # fmt: skip
    return {"passes": out, "ledger": rows}


def _span(row: dict[str, Any]) -> str:
    a, b = row["start_s"], row["end_s"]
    if a is None:
        return ""
    return f"{a:.2f} s" if b is None or abs(b - a) < 1e-3 else f"{a:.2f}–{b:.2f} s"


def redaction_section(block: dict[str, Any] | None, scoring: dict[str, Any] | None) -> str:
    if not block:
        return ""
    judged = ((scoring or {}).get("summary") or {}).get("redaction") if scoring else None
    out = [
        '<h2 id="redaction">Redaction</h2><p class="small">Personal data was replaced by its '
        "type in text and masked in audio. The ledger says what and where, never the value."
    ]
    if judged:
        how = (
            "on redacted text"
            if judged.get("judged_on_redacted_text")
            else ("before the text was redacted (its reasons are redacted now)")
        )
        out.append(f" The scoring shown was judged {escape(how)}.")
    out.append("</p><ul>")
    for p in block["passes"]:
        when = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(p["created_ns"] / 1e9))
        types = ", ".join(str(t) for t in [*p["types"], *p["custom"]])
        out.append(
            f"<li>{escape(str(p['mode']))} on {escape(when)} "
            f"(configuration {escape(str(p['fingerprint']))}): {escape(types)}</li>"
        )
    out.append(
        "</ul><table class=ledger><tr><th>session</th><th>type</th><th>where</th>"
        "<th>channel</th><th>time</th><th>audio masked by</th><th>note</th></tr>"
    )
    for r in block["ledger"]:
        method = r["method"] if r["location"] == "audio" else ""
        out.append(
            "<tr>"
            + "".join(
                f"<td>{escape(str(v))}</td>"
                for v in (
                    r["session_id"],
                    r["entity"],
                    r["location"],
                    r["channel"],
                    _span(r),
                    method,
                    r["note"],
                )
            )
            + "</tr>"
        )
    out.append("</table>")
    return "".join(out)
