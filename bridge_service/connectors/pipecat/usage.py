"""pipecat's TTS and STT usage metrics, recorded for cost (docs/traces.md).

RTVI ``metrics`` carry ``characters`` (``TTSUsageMetricsData``: characters a
TTS service spoke, with its model) and ``stt_usage`` (``STTUsageMetricsData``:
seconds of audio an STT service took); each becomes a ``metric`` event named
``characters`` (unit ``chars``) or ``stt_seconds`` (unit ``s``), with the
processor and model, beside the ``token_usage`` events of LLM tokens.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from vae.bridge_service.connectors.base import BotEvent
from vae.recordings.models import EventKind

Make = Callable[[EventKind, dict[str, Any]], BotEvent]


def _items(value: Any) -> list[dict[str, Any]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _number(value: Any) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    return None


def usage_events(body: dict[str, Any], make: Make) -> list[BotEvent]:
    out = []
    for item in _items(body.get("characters")):
        value = _number(item.get("value"))
        if value is not None:
            out.append(make(EventKind.METRIC, {
                "name": "characters", "value": value, "unit": "chars",
                "component": str(item.get("processor", "")), "model": str(item.get("model") or ""),
            }))  # fmt: skip
    for item in _items(body.get("stt_usage")):
        raw = item.get("value")
        seconds = _number(raw.get("audio_seconds")) if isinstance(raw, dict) else None
        if seconds is not None:
            out.append(make(EventKind.METRIC, {
                "name": "stt_seconds", "value": seconds, "unit": "s",
                "component": str(item.get("processor", "")), "model": str(item.get("model") or ""),
            }))  # fmt: skip
    return out
