"""A session on one time axis (SVG): both waveforms, speech, transcript, tools, events.

Lanes from top: the user's waveform (blue) over its detected speech, the
agent's (orange), then a lane of transcript lines (a tick per line, coloured by
side) and a lane of events (tool calls, barge-ins, interruptions, the end).
Every mark has a ``<title>`` (hover) and a legend under the plot (so nothing
lives only in a tooltip), and carries ``data-t`` so the page's script can seek
the audio there; a ``playhead`` line follows playback. The plot's geometry is
on the ``<svg>`` (``data-left``, ``data-width``, ``data-end``) so a click
anywhere maps back to a time.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from typing import Any

from vae.scorer_service.report.style import AGENT, BAD, OVERLAP, TOOL, USER

LEFT, LANE, TOP = 64, 34, 6
EVENT_COLOURS = {"tool": TOOL, "tool_error": BAD, "barge_in": OVERLAP,
                 "interruption": BAD, "end": "#333"}  # fmt: skip


def _f(x: float) -> str:
    return f"{x:.1f}"


def tick_step(duration_s: float) -> float:
    for step in (1, 2, 5, 10, 15, 30, 60, 120, 300):
        if duration_s / step <= 12:
            return float(step)
    return 600.0


def overlaps(
    a: Sequence[Sequence[float]], b: Sequence[Sequence[float]]
) -> list[tuple[float, float]]:
    out = []
    for s1, e1 in a:
        for s2, e2 in b:
            s, e = max(s1, s2), min(e1, e2)
            if e > s:
                out.append((s, e))
    return out


def _wave(peaks: Sequence[float], y_mid: float, half: float, plot_w: float) -> str:
    """The peak envelope as one path of vertical strokes, silence left out (small markup)."""
    step = plot_w / len(peaks) if peaks else 0.0
    return "".join(
        f"M{LEFT + (i + 0.5) * step:.1f} {y_mid - p * half:.1f}v{2 * p * half:.1f}"
        for i, p in enumerate(peaks)
        if p >= 0.02
    )


def session_timeline(s: dict[str, Any], *, width: int = 1000) -> str:
    """The timeline of one report session (``report_data``'s session dict)."""
    end = float(s.get("end_s") or s.get("duration_s") or 1.0) or 1.0
    plot_w = width - LEFT - 12
    scale = plot_w / end
    text_y, event_y = TOP + 2 * LANE + 12, TOP + 2 * LANE + 34
    axis_y = event_y + 16
    height = axis_y + 22

    def x(t: float) -> str:
        return _f(LEFT + min(max(t, 0.0), end) * scale)

    parts = [
        f'<svg class="timeline" xmlns="http://www.w3.org/2000/svg" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="session timeline" data-left="{LEFT}" data-width="{_f(plot_w)}" '
        f'data-end="{end:.3f}">'
    ]
    spans, waves = s.get("spans", {}), s.get("waveform", {})
    for row, (side, colour) in enumerate((("user", USER), ("agent", AGENT))):
        y = TOP + row * LANE
        parts.append(f'<text x="4" y="{y + LANE / 2 + 4:.0f}">{side}</text>')
        for a, b in spans.get(side, []):
            parts.append(
                f'<rect class="speech {side}" x="{x(a)}" y="{y + 2}" '
                f'width="{_f(max(1.0, (b - a) * scale))}" height="{LANE - 4}" fill="{colour}" '
                f'fill-opacity="0.15"><title>{side} speaking {a:.2f}–{b:.2f} s</title></rect>'
            )
        path = _wave(waves.get(side, []), y + LANE / 2, LANE / 2 - 3, plot_w)
        if path:
            width_px = max(1.0, plot_w / max(1, len(waves.get(side, []))))
            parts.append(
                f'<path class="wave {side}" d="{path}" stroke="{colour}" '
                f'stroke-width="{width_px:.1f}"/>'
            )
    for a, b in overlaps(spans.get("user", []), spans.get("agent", [])):
        parts.append(
            f'<rect class="overlap" x="{x(a)}" y="{TOP}" width="{_f(max(1.0, (b - a) * scale))}" '
            f'height="{LANE * 2}" fill="{OVERLAP}" fill-opacity="0.2">'
            f"<title>both speak {a:.2f}–{b:.2f} s</title></rect>"
        )
    parts.append(f'<text x="4" y="{text_y + 4}">said</text>')
    for line in s.get("transcript", []):
        colour = USER if line.get("side") == "user" else AGENT
        t = float(line.get("t_s", 0.0))
        parts.append(
            f'<rect class="line-mark seek" data-t="{t:.3f}" x="{_f(float(x(t)) - 2)}" '
            f'y="{text_y - 6}" width="4" height="12" fill="{colour}"><title>{t:.2f} s '
            f"{escape(str(line.get('side')))}: {escape(str(line.get('text', '')))}</title></rect>"
        )
    parts.append(f'<text x="4" y="{event_y + 4}">events</text>')
    events = [(float(c["t_s"]), "tool_error" if c.get("error") else "tool",
               f"{c['side']} {c['kind']} {c['name']}" + (f" — error: {c['error']}"
                                                        if c.get("error") else ""))
              for c in s.get("tools", [])]  # fmt: skip
    events += [(float(m["t_s"]), str(m["kind"]), str(m["label"])) for m in s.get("markers", [])]
    for t, kind, label in sorted(events):
        colour = EVENT_COLOURS.get(kind, "#333")
        shape = (
            f'<path d="M{x(t)},{event_y - 6} l6,6 l-6,6 l-6,-6 z" fill="{colour}"/>'
            if kind.startswith("tool")
            else f'<circle cx="{x(t)}" cy="{event_y}" r="5" fill="{colour}"/>'
        )
        parts.append(
            f'<g class="marker {escape(kind)} seek" data-t="{t:.3f}">'
            f'<line x1="{x(t)}" y1="{TOP}" x2="{x(t)}" y2="{event_y - 6}" stroke="{colour}" '
            f'stroke-width="1" stroke-dasharray="2,2"/>{shape}'
            f"<title>{t:.2f} s {escape(kind)}: {escape(label)}</title></g>"
        )
    parts.append(
        f'<line x1="{LEFT}" y1="{axis_y}" x2="{LEFT + plot_w}" y2="{axis_y}" stroke="#555"/>'
    )
    step, t = tick_step(end), 0.0
    while t <= end + 1e-9:
        parts.append(f'<text x="{x(t)}" y="{axis_y + 14}" text-anchor="middle">{t:g}s</text>')
        t += step
    parts.append(
        f'<line class="playhead" x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{axis_y}" '
        f'stroke="#000" stroke-width="1.5" visibility="hidden"/>'
    )
    parts.append("</svg>")
    return "".join(parts)


def timeline_legend() -> str:
    def sw(colour: str, label: str, shape: str = "") -> str:
        radius = "border-radius:6px;" if shape == "dot" else ""
        return f'<span><i class="sw" style="background:{colour};{radius}"></i>{label}</span>'

    return (
        '<div class="legend">'
        + sw(USER, "user audio / speech")
        + sw(AGENT, "agent audio / speech")
        + sw(OVERLAP, "both speaking")
        + sw(TOOL, "tool call (◆)")
        + sw(BAD, "tool error (◆)")
        + sw(BAD, "agent interrupts (●)", "dot")
        + sw(OVERLAP, "user barge-in (●)", "dot")
        + sw("#333", "call ended (●)", "dot")
        + "<span>| said: a tick per transcript line · black line: playhead · "
        "click anywhere to play from there</span></div>"
    )
