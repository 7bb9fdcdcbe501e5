"""Usage per session (the agent's) and per scoring (the judge's and the LLM caller's).

The agent reports usage two ways, and one call may be reported both ways:
pipecat's usage metrics (recorded as ``token_usage`` events and
``characters``/``stt_seconds`` metrics) and the GenAI attributes of its spans
(``gen_ai.usage.input_tokens``/``output_tokens``; pipecat's
``metrics.character_count`` and ``metrics.audio_seconds``). A span's usage
and a metric with the same amounts reported within the span's time (2 s
before its start to 10 s after its end) are one call, counted once, with the
span's model. STT seconds are what the agent reports, else the caller audio
vae sent to it (an audio session's length: the open mic sends all of it).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from vae.recordings.models import EventKind, EventRecord
from vae.recordings.traces.model import AgentSpan
from vae.recordings.traces.outgoing import LlmCall

LLM, TTS, STT = "llm", "tts", "stt"
_BEFORE_NS, _AFTER_NS = 2_000_000_000, 10_000_000_000


@dataclass(frozen=True, slots=True)
class UsageItem:
    kind: str
    who: str
    model: str = ""
    provider: str = ""
    input_tokens: int = 0
    output_tokens: int = 0
    characters: int = 0
    seconds: float = 0.0
    #: "metrics", "span", "metrics+span" (the same call both ways), "wire" or "response".
    source: str = "metrics"
    at_ns: int = 0

    def amounts(self) -> tuple[float, ...]:
        return (self.input_tokens, self.output_tokens, self.characters, round(self.seconds, 3))

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "who": self.who, "model": self.model,
                               "provider": self.provider, "source": self.source}  # fmt: skip
        if self.kind == LLM:
            out |= {"input_tokens": self.input_tokens, "output_tokens": self.output_tokens}
        elif self.kind == TTS:
            out["characters"] = self.characters
        else:
            out["seconds"] = round(self.seconds, 3)
        return out


def _int(value: Any) -> int:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0


def _span_item(span: AgentSpan) -> UsageItem | None:
    a = span.attributes
    model = str(a.get("gen_ai.request.model") or a.get("gen_ai.response.model") or "")
    provider = str(a.get("gen_ai.provider.name") or a.get("gen_ai.system") or "")
    base = UsageItem(LLM, "agent", model, provider, source="span", at_ns=span.start_ns)
    if "gen_ai.usage.input_tokens" in a or "gen_ai.usage.output_tokens" in a:
        tokens_in = _int(a.get("gen_ai.usage.input_tokens"))
        tokens_out = _int(a.get("gen_ai.usage.output_tokens"))
        return replace(base, input_tokens=tokens_in, output_tokens=tokens_out)
    if isinstance(a.get("metrics.character_count"), int | float):
        return replace(base, kind=TTS, characters=_int(a["metrics.character_count"]))
    seconds = a.get("metrics.audio_seconds")
    if isinstance(seconds, int | float) and not isinstance(seconds, bool):
        return replace(base, kind=STT, seconds=float(seconds))
    return None


def _event_item(event: EventRecord, who: str) -> UsageItem | None:
    p = event.payload
    model = str(p.get("model") or "")
    if event.kind is EventKind.TOKEN_USAGE:
        return UsageItem(LLM, who, model, str(p.get("provider") or ""),
                         _int(p.get("prompt_tokens")), _int(p.get("completion_tokens")),
                         at_ns=event.bridge_ns)  # fmt: skip
    if event.kind is EventKind.METRIC and p.get("name") == "characters":
        return UsageItem(TTS, who, model, characters=_int(p.get("value")), at_ns=event.bridge_ns)
    if event.kind is EventKind.METRIC and p.get("name") == "stt_seconds":
        value = p.get("value")
        seconds = float(value) if isinstance(value, int | float) else 0.0
        return UsageItem(STT, who, model, seconds=seconds, at_ns=event.bridge_ns)
    return None


def _stt_model(spans: Sequence[AgentSpan]) -> tuple[str, str]:
    for s in spans:
        a = s.attributes
        if s.name == "stt" or a.get("gen_ai.operation.name") == "stt":
            model = str(a.get("gen_ai.request.model") or "")
            if model and model != "unknown":
                return model, str(a.get("gen_ai.provider.name") or "")
    return "", ""


def session_usage(
    events: Sequence[EventRecord],
    spans: Sequence[AgentSpan],
    sent_audio_s: float | None,
) -> list[UsageItem]:
    """The agent's usage in one session. ``sent_audio_s``: the caller audio vae sent the
    agent (None in a text session)."""
    reported = [i for e in events if str(e.side) == "agent" if (i := _event_item(e, "agent"))]
    used = [False] * len(reported)
    out: list[UsageItem] = []
    for span in spans:
        item = _span_item(span)
        if item is None:
            continue
        for k, other in enumerate(reported):
            if used[k] or other.kind != item.kind or other.amounts() != item.amounts():
                continue
            if span.start_ns - _BEFORE_NS <= other.at_ns <= span.end_ns + _AFTER_NS:
                used[k] = True
                item = replace(item, source="metrics+span", model=item.model or other.model)
                break
        out.append(item)
    out += [item for item, u in zip(reported, used, strict=True) if not u]
    if sent_audio_s is not None and not any(i.kind == STT for i in out):
        model, provider = _stt_model(spans)
        out.append(UsageItem(STT, "agent", model, provider, seconds=sent_audio_s, source="wire"))
    return out


def caller_usage(events: Sequence[EventRecord]) -> list[UsageItem]:
    """What the LLM caller (the user bot) reported using."""
    return [i for e in events if str(e.side) == "user" if (i := _event_item(e, "caller"))]


def judge_usage(calls: Sequence[LlmCall]) -> list[UsageItem]:
    """The judge's calls, from its responses (a cached reply cost nothing: no item)."""
    return [
        UsageItem(LLM, c.role or "judge", c.model, c.provider, c.input_tokens or 0,
                  c.output_tokens or 0, source="response", at_ns=c.started_ns)
        for c in calls
        if not c.cached and (c.input_tokens is not None or c.output_tokens is not None)
    ]  # fmt: skip
