"""Timing scores: turn-taking measured from the recorded audio, beside the bots' own.

Each channel (the user's and the agent's own output, on the bridge clock) runs
through the configured detector; spans are merged per side across short
gaps; :mod:`vae.scorer_service.timing.metrics` turns them into figures. Every
score carries the detector's settings, the merge gaps and the metric version,
so figures from different scorings are never silently compared. Bot-reported
metrics (Metric events, e.g. ``llm_ttfb``) are stored beside them as
``bot.<side>.<name>`` so instrumentation error shows up as a visible gap.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from typing import Any

from vae.scorer_service import signals
from vae.scorer_service.config import TimingSettings
from vae.scorer_service.context import ScoringContext
from vae.scorer_service.scorer import SignalScore, info
from vae.scorer_service.timing.metrics import METRIC_VERSION, TurnTaking, merge, turn_taking
from vae.scorer_service.timing.vad import Detector, make_detector


class TimingScorer:
    name = "timing"
    version = METRIC_VERSION
    needs_audio = True

    def __init__(self, settings: TimingSettings) -> None:
        self.settings = settings
        self.detector: Detector = make_detector(settings.detector, settings.detector_options)

    def measure(self, ctx: ScoringContext) -> tuple[TurnTaking, dict[str, Any]]:
        spans: dict[str, list[tuple[float, float]]] = {}
        gaps = {"user": self.settings.merge_gap_user_s, "agent": self.settings.merge_gap_agent_s}
        duration = ctx.session.duration_s
        for side in ("user", "agent"):
            audio = ctx.audio.get(side)
            raw = [] if audio is None else self.detector.detect(audio.samples, audio.sample_rate)
            spans[side] = merge(raw, gaps[side])
            if audio is not None:
                duration = max(duration, audio.duration_s)
        tt = turn_taking(spans["user"], spans["agent"], duration, self.settings.yield_window_s)
        common = {
            "detector": self.detector.name,
            "detector_options": self.detector.settings(),
            "frame_s": self.detector.frame_s,
            "merge_gap_user_s": gaps["user"],
            "merge_gap_agent_s": gaps["agent"],
            "yield_window_s": self.settings.yield_window_s,
            "metric_version": METRIC_VERSION,
        }
        return tt, common

    async def score(self, ctx: ScoringContext) -> list[SignalScore]:
        tt, common = await asyncio.to_thread(self.measure, ctx)
        events: dict[str, Any] = {
            "response_latency": {"latencies": tt.latencies, "no_responses": tt.no_responses},
            "yield": {"barge_ins": tt.barge_ins},
            "agent_interruption": {"at_s": tt.agent_interruptions, "user_turns": tt.user_turns},
        }
        out: list[SignalScore] = []
        for key, value in tt.figures().items():
            detail = dict(common)
            for prefix, extra in events.items():
                if key.startswith(prefix):
                    detail.update(extra)
            rounded = None if value is None else round(value, 6)
            out.append(info(f"{signals.TIMING_PREFIX}{key}", rounded, detail))
        out.extend(bot_metrics(ctx))
        return out


def bot_metrics(ctx: ScoringContext) -> list[SignalScore]:
    """The bots' own reported metrics, the mean per (side, name), with every value kept."""
    grouped: dict[tuple[str, str], list[Any]] = defaultdict(list)
    for m in ctx.metrics:
        grouped[(m.side, m.name)].append(m)
    out = []
    for (side, name), items in sorted(grouped.items()):
        values = [m.value for m in items]
        detail = {
            "count": len(values),
            "values": values,
            "unit": items[0].unit,
            "component": items[0].component,
            "source": "bot-reported",
        }
        out.append(info(signals.bot_metric_signal(side, name), sum(values) / len(values), detail))
    return out
