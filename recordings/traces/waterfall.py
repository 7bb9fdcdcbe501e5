"""A turn's agent spans beside the latency vae measured on the wire, and where it went.

For each turn (the caller stops at ``user_end_s``, the agent's first audio
arrives at ``agent_start_s``, seconds from the session's start on the bridge
clock), the agent's service spans that started after the previous turn's
answer and no later than 0.25 s into this one are its spans: speech
recognition, the LLM, speech synthesis, tools. The wire latency is split into
what the spans account for after the caller stopped:

- ``stt``: from the caller's end of speech until the recogniser's span ended;
- ``llm``: the LLM's time to first token (its ``metrics.ttfb``, else its span);
- ``tts``: the synthesiser's time to first byte (its ``metrics.ttfb``, else its span);
- ``tools``: tool spans;
- ``other``: the rest (endpointing, transport, buffering, what no span covers).

A turn is slow when its wire latency reaches :data:`SLOW_TURN_S`; ``where``
names its largest part, for every turn, so a slow turn says where its time went.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from vae.recordings.traces.model import AgentSpan

#: A turn this slow (wire latency, seconds) or slower is flagged ``slow``.
SLOW_TURN_S = 1.5
#: Spans of one turn kept for drawing (all of them count in its parts).
MAX_ROWS = 40
#: Container spans (a pipecat conversation or turn): shown, never counted as a part.
CONTAINERS = frozenset({"conversation", "turn"})
PARTS = ("stt", "llm", "tts", "tools", "other")
LABELS = {
    "stt": "speech recognition",
    "llm": "LLM time to first token",
    "tts": "speech synthesis to first byte",
    "tools": "tool calls",
    "other": "not in any span (endpointing, transport, buffering)",
}


def kind_of(span: AgentSpan) -> str:
    """``stt``, ``llm``, ``tts``, ``tool``, ``container`` or ``other``."""
    name = span.name.lower()
    op = str(span.attributes.get("gen_ai.operation.name", "")).lower()
    if name in CONTAINERS:
        return "container"
    if op == "execute_tool" or "tool" in name or "function" in name:
        return "tool"
    for kind in ("stt", "tts"):
        if name == kind or op == kind or name.startswith(kind + " ") or name.endswith("." + kind):
            return kind
    if name == "llm" or op in ("chat", "text_completion", "generate_content") or "llm" in name:
        return "llm"
    return "other"


def _ttfb(span: AgentSpan) -> float:
    value = span.attributes.get("metrics.ttfb")
    if isinstance(value, int | float) and not isinstance(value, bool) and value >= 0:
        return float(value)
    return span.duration_s


def turn_waterfall(
    turns: Sequence[dict[str, Any]], spans: Sequence[AgentSpan], started_ns: int
) -> list[dict[str, Any]]:
    """Per turn: its spans (seconds from the session's start), parts and where its time went."""
    out = []
    previous = float("-inf")
    for turn in turns:
        user_end, agent_start = float(turn["user_end_s"]), float(turn["agent_start_s"])
        latency = float(turn["latency_s"])
        own = []
        for span in spans:
            start = (span.start_ns - started_ns) / 1e9
            if not previous < start <= agent_start + 0.25:
                continue
            own.append((span, start))
        previous = agent_start + 0.25
        parts = dict.fromkeys(PARTS, 0.0)
        rows = []
        for span, start in own:
            kind = kind_of(span)
            end = start + span.duration_s
            if kind == "stt":
                parts["stt"] = max(parts["stt"], end - user_end)
            elif kind == "llm":
                parts["llm"] += _ttfb(span)
            elif kind == "tts":
                parts["tts"] += _ttfb(span)
            elif kind == "tool":
                parts["tools"] += span.duration_s
            rows.append({"name": span.name, "kind": kind, "start_s": round(start, 3),
                         "end_s": round(end, 3), "ttfb_s": round(_ttfb(span), 3)
                         if kind in ("llm", "tts") else None, "service": span.service})  # fmt: skip
        parts = {k: max(0.0, v) for k, v in parts.items()}
        rows.sort(key=lambda r: (r["kind"] == "container", r["start_s"]))
        more = max(0, len(rows) - MAX_ROWS)
        rows = rows[:MAX_ROWS]
        parts["other"] = max(0.0, latency - sum(v for k, v in parts.items() if k != "other"))
        where = max(PARTS, key=lambda k: parts[k]) if own else "other"
        out.append(
            {
                "user_end_s": user_end,
                "agent_start_s": agent_start,
                "latency_s": latency,
                "spans": rows,
                "more_spans": more,
                "parts": {k: round(v, 3) for k, v in parts.items()},
                "where": where,
                "where_label": LABELS[where],
                "slow": latency >= SLOW_TURN_S,
                "traced": bool(own),
            }
        )
    return out
