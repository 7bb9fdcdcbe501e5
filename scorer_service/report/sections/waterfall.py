"""The per-turn waterfall of the agent's spans, beside the latency on the wire (SVG).

One row per span of the turn on a time axis from a little before the caller
stopped to a little after the agent's first audio; the wire latency is the
shaded band between the two. Every name (a span's name is the agent's text)
is escaped; numbers are formatted with fixed precision.
"""

from __future__ import annotations

from html import escape
from typing import Any

from vae.scorer_service.report.style import AGENT, NEUTRAL, TOOL, USER

_COLOURS = {"stt": USER, "llm": "#6d4c41", "tts": AGENT, "tool": TOOL, "container": NEUTRAL}
_ROW, _LABEL_W, _PLOT_W, _TOP = 16, 200, 520, 22


def _f(x: float) -> str:
    return f"{x:.1f}"


def _short(label: str) -> str:
    """A row label that fits its column (about 30 characters of the 11 px font)."""
    return label if len(label) <= 30 else label[:29] + "…"


def _turn_svg(n: int, t: dict[str, Any]) -> str:
    rows = sorted(t["spans"], key=lambda r: (r["kind"] == "container", r["start_s"]))
    starts = [float(r["start_s"]) for r in rows if r["kind"] != "container"]
    ends = [float(r["end_s"]) for r in rows if r["kind"] != "container"]
    lo = min([float(t["user_end_s"]) - 0.5, *starts])
    hi = max([float(t["agent_start_s"]) + 0.5, *ends])
    span = max(hi - lo, 0.1)

    def x(s: float) -> float:
        return _LABEL_W + (min(max(s, lo), hi) - lo) / span * _PLOT_W

    height = _TOP + _ROW * max(1, len(rows)) + 18
    width = _LABEL_W + _PLOT_W + 90
    title = f"turn {n}: {t['latency_s']:.2f} s on the wire"
    parts = [
        f'<svg class="waterfall" xmlns="http://www.w3.org/2000/svg" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="{escape(title)}">',
        f'<text x="4" y="14" class="title">{escape(title)}</text>',
        f'<rect x="{_f(x(t["user_end_s"]))}" y="{_TOP - 4}" '
        f'width="{_f(x(t["agent_start_s"]) - x(t["user_end_s"]))}" '
        f'height="{_ROW * max(1, len(rows)) + 6}" fill="#fdecea" class="wire"/>',
    ]
    for i, r in enumerate(rows):
        y = _TOP + i * _ROW
        colour = _COLOURS.get(r["kind"], NEUTRAL)
        x0, x1 = x(r["start_s"]), max(x(r["end_s"]), x(r["start_s"]) + 1.5)
        label = escape(_short(f"{r['name']}" + (f" · {r['service']}" if r.get("service") else "")))
        parts.append(
            f'<text x="{_LABEL_W - 6}" y="{y + 10}" text-anchor="end">{label}</text>'
            f'<rect x="{_f(x0)}" y="{y + 1}" width="{_f(x1 - x0)}" height="{_ROW - 4}" '
            f'fill="{colour}" opacity="{0.35 if r["kind"] == "container" else 0.9}">'
            f"<title>{escape(r['name'])}: {r['start_s']:.3f}–{r['end_s']:.3f} s</title></rect>"
        )
        if r.get("ttfb_s") is not None:
            first = x(r["start_s"] + r["ttfb_s"])
            parts.append(f'<line x1="{_f(first)}" x2="{_f(first)}" y1="{y}" y2="{y + _ROW - 2}" '
                         'stroke="#000" stroke-width="1.5"/>')  # fmt: skip
        dur = r["end_s"] - r["start_s"]
        parts.append(f'<text x="{_f(x1 + 4)}" y="{y + 10}" class="small">{dur:.2f} s</text>')
    axis = _TOP + _ROW * max(1, len(rows)) + 12
    parts.append(
        f'<text x="{_f(x(t["user_end_s"]))}" y="{axis}" text-anchor="middle" class="small">'
        f'caller stops</text><text x="{_f(x(t["agent_start_s"]))}" y="{axis}" '
        'text-anchor="start" class="small"> agent audio</text></svg>'
    )
    return "".join(parts)


def _parts(t: dict[str, Any]) -> str:
    shown = ", ".join(f"{k} {v:.2f} s" for k, v in t["parts"].items() if v > 0.0005)
    flag = "<b>slow</b> — " if t["slow"] else ""
    if t.get("more_spans"):
        flag = f"{t['more_spans']} more spans not drawn (counted) · " + flag
    return (f'<div class="small">{flag}most of it: <b>{escape(t["where_label"])}</b>'
            f" ({escape(shown) or 'no part measured'})</div>")  # fmt: skip


def waterfall_block(s: dict[str, Any]) -> str:
    """The session's waterfall section ("" when the agent sent no spans)."""
    w = s.get("waterfall")
    if not w:
        return ""
    turns = [t for t in w["turns"] if t["traced"]]
    body = "".join(
        f'<div class="turn-waterfall">{_turn_svg(i + 1, t)}{_parts(t)}</div>'
        for i, t in enumerate(w["turns"])
        if t["traced"]
    )
    legend = (
        '<span style="color:#1565c0">■</span> STT <span style="color:#6d4c41">■</span> LLM '
        '<span style="color:#ef6c00">■</span> TTS <span style="color:#6a1b9a">■</span> tool '
        "· a black tick marks the first token/byte · shaded: the latency on the wire"
    )
    return (
        "<h3>Agent spans per turn</h3>"
        f'<p class="small">{w["spans"]} spans from the agent, tied to this session: '
        f"{escape(w['how'])}. {legend}</p>"
        + (body if turns else '<p class="small">no span fell within a measured turn</p>')
    )
