"""One session in the report: a ``<details>`` block that explains its verdict.

Summary line: verdict, scenario, one-line reason, duration and latency. Inside:
the timeline (both waveforms, transcript, tool calls and interruptions on one
axis) with the stereo player, the transcript (click a line to hear it), the
signals with their reasons, every assertion with its verdict and reason, what
the caller said beside what the agent heard per turn (differences marked) and
the scoring's transcription of the recording when it made one, the
final DB state against the expected one as a diff, the tool calls in full and
the per-turn latency table with the bot-reported component timings beside the
bridge's measurement. Every value from the store is escaped.
"""

from __future__ import annotations

import json
from html import escape
from typing import Any

from vae.scorer_service.heard.compare import mismatch_text
from vae.scorer_service.report.scorecard import badge, outcome_badge
from vae.scorer_service.report.sections.caller import caller_line
from vae.scorer_service.report.sections.extras import usd
from vae.scorer_service.report.sections.waterfall import waterfall_block
from vae.scorer_service.report.timeline import session_timeline, timeline_legend


def _json(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, indent=1)
    return f"<pre>{escape(str(text))}</pre>"


def _num(v: Any) -> str:
    return "" if not isinstance(v, int | float) else f"{v:.2f}"


def _table(cls: str, head: list[str], rows: list[str], empty: str) -> str:
    if not rows:
        return f'<p class="small">{escape(empty)}</p>'
    th = "".join(f"<th>{escape(h)}</th>" for h in head)
    return f'<table class="{cls}"><tr>{th}</tr>{"".join(rows)}</table>'


def _transcript(s: dict[str, Any]) -> str:
    rows = [
        f'<tr class="line seek {escape(t["side"])}" data-t="{float(t["t_s"]):.3f}">'
        f'<td class="num">{float(t["t_s"]):.1f} s</td><td class="side">{escape(t["side"])}</td>'
        f"<td>{escape(str(t['text']))}</td></tr>"
        for t in s["transcript"]
    ]
    return _table("transcript", ["t", "side", "said (click to play)"], rows, "no transcript")


def _signals(s: dict[str, Any]) -> str:
    rows = [
        f"<tr><td>{escape(name)}{' <span class=small>(gating)</span>' if row['gating'] else ''}"
        f"</td><td>{badge(row['verdict'])}</td><td class=num>{_num(row['value'])}</td>"
        f"<td>{escape('; '.join(row['reasons']))}</td></tr>"
        for name, row in s["signals"].items()
    ]
    return _table("signals", ["signal", "verdict", "value", "why"], rows, "not scored")


def _assertions(s: dict[str, Any]) -> str:
    rows = [
        f"<tr><td>{escape(a['kind'])}{' ' + escape(a['side']) if a['side'] else ''}</td>"
        f"<td>{escape(a['assertion'])}</td><td>{badge(a['verdict'])}</td>"
        f"<td>{escape(a['reason'])}</td></tr>"
        for a in s["assertions"]
    ]
    return _table("assertions", ["kind", "assertion", "verdict", "reason"], rows,
                  "no NL or DB assertions, no judge score")  # fmt: skip


def _db(s: dict[str, Any]) -> str:
    if not s["db"]:
        return '<p class="small">no expected DB state for this scenario</p>'
    out = []
    for side in s["db"]:
        rows = [
            f"<tr><td><code>{escape(str(r.get('path')))}</code></td>"
            f"<td>{escape(json.dumps(r.get('expected'), ensure_ascii=False))}</td>"
            f"<td>{escape(json.dumps(r.get('actual'), ensure_ascii=False))}</td></tr>"
            for r in side["diff"]
        ]
        state = "matches" if side["match"] else f"differs ({side['diff_total']} differences)"
        note = f" — {side['reason']}" if side["reason"] else ""
        out.append(
            f"<div><b>{escape(side['side'])} DB {state}</b>{escape(note)}"
            + _table("dbdiff", ["path", "expected", "recorded"], rows, "")
            + "<details><summary class=small>final state</summary>"
            + _json(side["actual"])
            + "</details></div>"
        )
    return "".join(out)


_MARK = {"sub": "hd-sub", "del": "hd-del", "ins": "hd-ins"}
_SOURCE = {"bots": "as its bot reported", "asr": "as transcribed from the recording"}


def _marked(pieces: Any) -> str:
    """A text with each difference marked: substituted, deleted (said) or inserted (heard)."""
    out = []
    for piece in pieces if isinstance(pieces, list) else []:
        if not isinstance(piece, list) or len(piece) != 2:
            continue
        text, op = escape(str(piece[0])), str(piece[1])
        cls = _MARK.get(op)
        out.append(f'<mark class="{cls}" title="{op}">{text}</mark>' if cls else text)
    return "".join(out)


def _heard(s: dict[str, Any]) -> str:
    """Said and heard side by side per turn (HEARD_CORRECTLY), then the transcription layer."""
    h = s.get("heard")
    out = []
    if h:
        wer = "" if h["wer"] is None else f" · WER {float(h['wer']):.0%}"
        said = _SOURCE.get(h["said_source"], "")
        heard = _SOURCE.get(h["heard_source"], "")
        out.append(
            f"<p>{badge(h['verdict'])} HEARD_CORRECTLY{wer}"
            + (f' · <span class="why">{escape(h["error"])}</span>' if h["error"] else "")
            + f'<br><span class="small">the caller\'s words {escape(said)}; what the agent '
            f"heard {escape(heard)}. Marked: <mark class=hd-sub>heard differently</mark> "
            "<mark class=hd-del>not heard</mark> <mark class=hd-ins>heard, never said</mark>"
            "</span></p>"
        )
        items = "".join(
            f"<li class=why>{escape(mismatch_text(m))}</li>" for m in h["mismatches"][:10]
        )
        if items:
            out.append(f'<ul class="reasons">{items}</ul>')
        rows = [
            f'<tr class="seek" data-t="{float(t.get("t_s", 0)):.3f}"><td class=num>'
            f"{float(t.get('t_s', 0)):.1f} s</td><td>{_marked(t.get('said_marks'))}</td>"
            f"<td>{_marked(t.get('heard_marks'))}</td>"
            f"<td class=num>{int(t.get('errors', 0))}/{int(t.get('words', 0))}</td></tr>"
            for t in h["turns"]
        ]
        out.append(
            _table("heard", ["t", "the caller said", "the agent heard", "errors/words"], rows, "")
        )
    asr = s.get("transcribed")
    if asr:
        engine = asr["engine"]
        name = " ".join(str(engine.get(k, "")) for k in ("engine", "model") if engine.get(k))
        wer = (
            ""
            if asr["wer"] is None
            else f" (WER against the bots' own transcripts {asr['wer']:.0%})"
        )
        rows = [
            f'<tr class="seek" data-t="{float(r["t_s"]):.3f}"><td class=num>{float(r["t_s"]):.1f} s'
            f"</td><td>{escape(r['channel'])}</td><td>{escape(r['text'])}"
            + (f' <span class="why">error: {escape(r["error"])}</span>' if r["error"] else "")
            + "</td></tr>"
            for r in asr["lines"]
        ]
        out.append(
            f'<p class="small">Transcribed by {escape(name)}{escape(wer)}</p>'
            + _table("transcript", ["t", "channel", "text"], rows, "no speech found")
        )
    return "".join(out) or '<p class="small">nothing reported as heard, nothing transcribed</p>'


def _tools(s: dict[str, Any]) -> str:
    rows = [
        f'<tr class="seek" data-t="{float(c["t_s"]):.3f}"><td class=num>{float(c["t_s"]):.1f} s'
        f"</td><td>{escape(c['side'])}</td><td>{escape(c['kind'])}</td>"
        f"<td><b>{escape(c['name'])}</b></td><td>{_json(c['arguments'])}</td>"
        f"<td>{_json(c['result'])}</td><td class=why>{escape(c['error'])}</td></tr>"
        for c in s["tools"]
    ]
    head = ["t", "side", "kind", "tool", "arguments", "result", "error"]
    return _table("tools", head, rows, "no tool calls")


def _turns(s: dict[str, Any]) -> str:
    names = sorted({k for t in s["turns"] for k in t["components"]})
    rows = [
        f'<tr class="seek" data-t="{t["user_end_s"]:.3f}"><td class=num>{i + 1}</td>'
        f"<td class=num>{t['user_end_s']:.2f} s</td><td class=num>{t['agent_start_s']:.2f} s"
        f"</td><td class=num><b>{t['latency_s']:.2f} s</b></td>"
        + "".join(f"<td class=num>{_num(t['components'].get(n))}</td>" for n in names)
        + "</tr>"
        for i, t in enumerate(s["turns"])
    ]
    head = ["turn", "user stops", "agent audio", "latency", *(f"{n} (s, bot)" for n in names)]
    return _table("turns", head, rows, "no agent response measured")


def session_block(i: int, s: dict[str, Any]) -> str:
    """One session: its ``<details>`` with the summary line, the evidence, the close tag."""
    return session_summary(i, s) + session_body(s) + "</details>"


def session_summary(i: int, s: dict[str, Any]) -> str:
    """The session's ``<details>`` opening tag and its ``<summary>`` line (verdict, name,
    reason, metadata): all a list of sessions shows until one is opened."""
    text = s.get("modality") == "text"
    lat = s["latency_p50_s"]
    clock = " · virtual clock" if s.get("clock") == "virtual" else ""
    meta = (
        f"{escape(s['domain'])} · {'text · ' if text else ''}{s['duration_s']:.1f} s{clock}"
        f" · latency p50 {'n/a' if lat is None else f'{lat:.2f} s'}"
        f" · stop: {escape(s['stop_reason'])}"
        f" · line: {escape(s.get('line', 'clean'))}"
    )
    if s.get("cost") is not None:
        meta += f" · cost {usd(s['cost']['usd'])}"
    if s["stop_reason"] and not s.get("finished", True):
        meta += f" (unfinished: {escape(s.get('stop_detail', ''))})"
    reason = f' — <span class="why">{escape(s["reason"])}</span>' if s["reason"] else ""
    is_open = " open" if s.get("outcome", s["verdict"]) in ("failed", "xpassed", "unscored") else ""
    return (
        f'<details class="session" id="s-{i}" data-idx="{i}" data-verdict="{escape(s["verdict"])}"'
        f"{is_open}><summary>{outcome_badge(s)} <b>{escape(s['scenario_name'])}</b>{reason}"
        f' <span class="small">· {meta}</span></summary>'
    )


def session_body(s: dict[str, Any]) -> str:
    """What an opened session shows: ids, caller, timeline, audio, transcript, signals,
    assertions, hearing, DB state, tool calls, latencies, the agent's spans (the review page
    loads it on demand)."""
    text = s.get("modality") == "text"
    audio = (
        f'<audio controls preload="none" src="{escape(s["audio"])}"></audio>'
        '<span class="small"> stereo: user left, agent right</span>'
        if s["audio"] and not text
        else '<p class="small">a text session: the bots exchanged text turns, no audio '
        "(audio-only signals are not applicable)</p>"
        if text
        else '<p class="small">no audio in this report</p>'
    )
    errors = "".join(
        f'<li class="bot-error"><b>bot error</b> {escape(str(e))}</li>'
        for e in s.get("bot_errors", [])
    )
    return (
        f'<div class="small">{escape(s["session_id"])} · attempt {s["attempt"]} · turns '
        f"{s['user_turns']} user / {s['agent_turns']} agent</div>"
        + caller_line(s)
        + (f'<ul class="reasons">{errors}</ul>' if errors else "")
        + session_timeline(s)
        + timeline_legend()
        + audio
        + '<div class="cols"><div><h3>Transcript</h3>'
        + _transcript(s)
        + "</div><div><h3>Signals</h3>"
        + _signals(s)
        + "<h3>Assertions</h3>"
        + _assertions(s)
        + "</div></div><h3>What the agent heard</h3>"
        + _heard(s)
        + "<h3>Final DB state vs expected</h3>"
        + _db(s)
        + "<h3>Tool calls</h3>"
        + _tools(s)
        + "<h3>Latency per turn</h3>"
        + "<p class=\"small\">end of the user's speech → the agent's first audio, measured by "
        "the bridge; the agent bot's own component timings beside it where it reported them</p>"
        + _turns(s)
        + waterfall_block(s)
    )
