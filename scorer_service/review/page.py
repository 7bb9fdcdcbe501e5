"""The review page: the report's view of each session, plus buttons that label it.

Why built from the report's pieces: a labeller needs exactly what a report
reader needs to judge a call — the audio on the timeline (click to play from
there), the transcript, every signal and assertion with the judge's verdict
and reason — so the page reuses :func:`~vae.scorer_service.report.data.report_data`,
the session block, the timeline, the controls and the report's script
(filters, sorting, seek, playhead). The page carries each session's summary
line and labelling panel; a session's details (timeline, audio, transcript,
evidence) are loaded from the server when it is opened
(:func:`session_details`), so a 200-session run opens in well under 2 s.
What it adds is a labelling panel per
session (the session as a whole, each gating or judge signal, each NL
assertion; pass / fail / can't tell and a note) and a script that posts each
label to the page's server at once and steps through unlabelled sessions by
keyboard. Everything from the store is escaped (HTML with ``html.escape``,
data for the scripts with ``script_json``); the page loads nothing but its
own audio from its own server.
"""

from __future__ import annotations

from html import escape
from typing import Any
from urllib.parse import quote

from vae.recordings.labels import LabelRecord
from vae.recordings.read.reader import RecordingReader
from vae.recordings.write.label_rows import latest_per_labeller
from vae.scorer_service import signals
from vae.scorer_service.labels.labelling import assertion_texts
from vae.scorer_service.report.data import report_data
from vae.scorer_service.report.html import _controls, _index
from vae.scorer_service.report.scorecard import badge
from vae.scorer_service.report.script import SCRIPT, script_json
from vae.scorer_service.report.session_html import session_body, session_summary
from vae.scorer_service.report.style import CSS
from vae.scorer_service.review.script import REVIEW_CSS, REVIEW_SCRIPT

_VERDICTS = (("pass", "pass", "p"), ("fail", "fail", "f"), ("unsure", "can't tell", "u"))


def _items(reader: RecordingReader, s: dict[str, Any], scoring: Any) -> list[dict[str, Any]]:
    """What can be labelled in one session, with the scoring's verdict and reason on each."""
    items = [{"key": "session", "kind": "session", "signal": "", "assertion": -1,
              "what": "The session as a whole", "verdict": s["verdict"],
              "reason": s["reason"]}]  # fmt: skip
    for name in signals.SUCCESS_SIGNALS:
        row = s["signals"].get(name)
        if row is None or row["verdict"] == "not_applicable":
            continue
        items.append({"key": f"signal:{name}", "kind": "signal", "signal": name,
                      "assertion": -1, "what": name + (" (gating)" if row["gating"] else ""),
                      "verdict": row["verdict"], "reason": "; ".join(row["reasons"])})  # fmt: skip
    judged = [a for a in s["assertions"] if a["kind"] == "NL"]
    session = reader.session(s["session_id"])
    texts = [a["assertion"] for a in judged] or (
        assertion_texts(reader, session, scoring) if session else []
    )
    nl = s["signals"].get(signals.NL_ASSERTION, {})
    whole = (nl.get("verdict", "not scored"), "; ".join(nl.get("reasons", [])))
    for i, text in enumerate(texts):
        verdict, reason = (judged[i]["verdict"], judged[i]["reason"]) if i < len(judged) else whole
        items.append({"key": f"assertion:{i}", "kind": "assertion", "signal": "",
                      "assertion": i, "what": f"NL #{i}: {text}",
                      "verdict": verdict, "reason": reason})  # fmt: skip
    return items


def base_data(reader: RecordingReader, run_id: str, scoring_id: str | None) -> dict[str, Any]:
    """The report's data for the page, without audio (served apart), with what can be
    labelled in each session. The recordings and the scoring never change, so a server
    computes this once; only the labels are read anew."""
    data = report_data(reader, run_id, scoring_id, include_audio=False)
    scoring = reader.scoring(data["scoring"]["scoring_id"]) if data["scoring"] else None
    for s in data["sessions"]:
        s["review_items"] = _items(reader, s, scoring)
    return data


def _audio_url(sid: str, token: str) -> str:
    return f"audio/{quote(sid, safe='')}?token={token}"


def session_details(data: dict[str, Any], sid: str, token: str) -> str | None:
    """What an opened session shows (the report's session body), loaded by the page on
    demand: a 200-session page then opens with its summaries only. None: no such session."""
    for s in data["sessions"]:
        if s["session_id"] == sid:
            return session_body({**s, "audio": _audio_url(sid, token)})
    return None


def review_data(
    reader: RecordingReader, data: dict[str, Any], labeller: str, token: str
) -> dict[str, Any]:
    """``data`` (:func:`base_data`) with, per session, what can be labelled and the labels on it."""
    labels = reader.labels(data["run"]["run_id"])
    latest = latest_per_labeller(labels)
    for s in data["sessions"]:
        s["audio"] = _audio_url(s["session_id"], token)
        mine: dict[str, LabelRecord] = {}
        others: dict[str, list[LabelRecord]] = {}
        for (sid, item, who), x in latest.items():
            if sid != s["session_id"]:
                continue
            if who == labeller:
                mine[item] = x
            else:
                others.setdefault(item, []).append(x)
        s["review"] = {"items": s["review_items"], "mine": mine, "others": others}
    data["labeller"] = labeller
    data["token"] = token
    return data


def _row(
    sid: str, item: dict[str, Any], mine: LabelRecord | None, others: list[LabelRecord]
) -> str:
    buttons = "".join(
        f'<button type="button" class="lb {v}" data-v="{v}" title="{text} (key {key} for the '
        f'session)" aria-pressed="{"true" if mine and str(mine.verdict) == v else "false"}">'
        f"{text}</button>"
        for v, text, key in _VERDICTS
    )
    note = escape(mine.note) if mine else ""
    state = f"yours: {escape(str(mine.verdict))}" if mine else "not labelled"
    theirs = "".join(
        f"<li>{escape(x.labeller)}: {escape(str(x.verdict))}"
        + (f" — {escape(x.note)}" if x.note else "") + "</li>"
        for x in others
    )  # fmt: skip
    reason = f' <span class="reason">{escape(item["reason"])}</span>' if item["reason"] else ""
    return (
        f'<div class="lrow" data-sid="{escape(sid)}" data-key="{escape(item["key"])}" '
        f'data-kind="{item["kind"]}" data-signal="{escape(item["signal"])}" '
        f'data-assertion="{int(item["assertion"])}" '
        f'data-verdict="{escape(str(mine.verdict)) if mine else ""}">'
        f'<div class="lwhat"><b>{escape(item["what"])}</b> · judge: {badge(item["verdict"])}'
        f"{reason}</div>"
        f'<div class="lact">{buttons}<input class="lnote" type="text" maxlength="4000" '
        f'placeholder="note (optional; Enter saves it)" value="{note}">'
        f'<span class="lstate">{state}</span></div>'
        + (f'<ul class="lothers small">{theirs}</ul>' if theirs else "")
        + "</div>"
    )


def _panel(s: dict[str, Any]) -> str:
    review = s["review"]
    rows = "".join(
        _row(s["session_id"], item, review["mine"].get(item["key"]),
             review["others"].get(item["key"], []))
        for item in review["items"]
    )  # fmt: skip
    return f'<div class="lpanel"><h3>Your labels</h3>{rows}</div>'


def _session(i: int, s: dict[str, Any], token: str) -> str:
    """The report's session line, the labelling panel, and a place for the session's
    details, which the page's script loads from the server when the session is opened."""
    mine = s["review"]["mine"].get("session")
    chip = (
        f' <span class="mine-chip {escape(str(mine.verdict))}">you: {escape(str(mine.verdict))}'
        "</span>"
        if mine
        else ' <span class="mine-chip">not labelled</span>'
    )
    head = session_summary(i, s).removesuffix("</summary>")
    labelled = ' data-labelled="1"' if mine else ' data-labelled="0"'
    head = head.replace('<details class="session"', f'<details class="session"{labelled}', 1)
    src = f"session/{quote(s['session_id'], safe='')}?token={quote(token, safe='')}"
    return (
        head + chip + "</summary>" + _panel(s)
        + f'<div class="details-later" data-src="{escape(src)}">'
        '<p class="small">the session\'s details load when it is opened…</p></div></details>'
    )  # fmt: skip


def render_review(data: dict[str, Any]) -> str:
    run = data["run"]["run_id"]
    sessions = data["sessions"]
    scoring = data["scoring"]
    shown = (
        f"judge verdicts from scoring {escape(scoring['scoring_id'])}"
        + (f" ({escape(str(scoring['label']))})" if scoring.get("label") else "")
        if scoring
        else "no scoring yet: label what you hear; verdicts come with `vae rescore`"
    )
    done = sum(1 for s in sessions if s["review"]["mine"].get("session"))
    page_data = {"token": data["token"], "labeller": data["labeller"], "run_id": run}
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>vae review — {escape(run)}</title><style>{CSS}{REVIEW_CSS}</style></head><body>"
        f"<h1>vae review — {escape(run)}</h1>"
        f'<div class="sub">labelling as <b id="labeller">{escape(data["labeller"])}</b> · '
        f'{shown} · <span id="progress">{done} of {len(sessions)} sessions labelled</span> · '
        '<span id="status" role="status"></span></div>'
        '<div class="keys small">Keys: <kbd>p</kbd> pass · <kbd>f</kbd> fail · <kbd>u</kbd> '
        "can't tell (labels the current session with its note, then goes to the next "
        "unlabelled one) · <kbd>n</kbd> next unlabelled · <kbd>k</kbd> previous · "
        "<kbd>space</kbd> play/pause. Each label is saved at once; a new one replaces your "
        "earlier one (both are kept).</div>"
        + _controls(sessions)
        + '<div id="sessions">'
        + "".join(_session(i, s, data["token"]) for i, s in enumerate(sessions))
        + "</div>"
        f'<script type="application/json" id="vae-data">{script_json(_index(sessions))}</script>'
        f'<script type="application/json" id="review-data">{script_json(page_data)}</script>'
        f"<script>{SCRIPT}</script><script>{REVIEW_SCRIPT}</script></body></html>"
    )
