"""Turn-taking metrics from per-side speech spans (turn-taking-metrics.md).

Pure functions over two lists of spans (seconds on the bridge clock), merged
per side across short silences first. Definitions, with U the user's spans and
A the agent's:

- response latency: for each user span, the first agent span starting at or
  after its end; it counts only if no user span starts first (else a
  no-response); response rate = responses / (responses + no-responses);
- time to first agent audio: start of the first agent span (session start = 0);
- user barge-in: a user span starting strictly inside an agent span; yield
  latency = that agent span's end - the user's start; yielded when within the
  yield window; yield rate = yields / barge-ins;
- agent interruption: an agent span starting strictly inside a user span;
  rate per user turn;
- overlap: total duration of U ∩ A; talk share: Σ|A| / T and Σ|U| / T;
  mutual silence: T - |U ∪ A|; longest dead air: the longest gap between
  consecutive spans of U ∪ A (silence before the first word is TTFA instead).

Percentiles are nearest-rank, as the established framework reports them, so
every reported latency is one that actually happened.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from typing import Any

Span = tuple[float, float]

#: Bumped whenever a definition above changes.
METRIC_VERSION = "1"


def merge(spans: list[Span], gap: float) -> list[Span]:
    """Join spans separated by at most ``gap`` seconds."""
    out: list[Span] = []
    for start, end in sorted(spans):
        if out and start - out[-1][1] <= gap + 1e-9:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


def nearest_rank(values: list[float], pct: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, math.ceil(pct / 100.0 * len(ordered)))
    return ordered[rank - 1]


def _union(spans: list[Span]) -> list[Span]:
    return merge(spans, 0.0)


def _intersection(a: list[Span], b: list[Span]) -> float:
    total, i, j = 0.0, 0, 0
    while i < len(a) and j < len(b):
        lo, hi = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        total += max(0.0, hi - lo)
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return total


@dataclass
class TurnTaking:
    latencies: list[dict[str, float]] = field(default_factory=list)
    no_responses: int = 0
    barge_ins: list[dict[str, Any]] = field(default_factory=list)
    agent_interruptions: list[float] = field(default_factory=list)
    time_to_first_agent_audio_s: float | None = None
    overlap_s: float = 0.0
    agent_talk_s: float = 0.0
    user_talk_s: float = 0.0
    mutual_silence_s: float = 0.0
    longest_dead_air_s: float = 0.0
    duration_s: float = 0.0
    user_turns: int = 0

    def figures(self) -> dict[str, float | None]:
        """The named figures, keyed without the ``timing.`` prefix."""
        lat = [x["latency_s"] for x in self.latencies]
        answered = len(lat) + self.no_responses
        yields = [b["yield_latency_s"] for b in self.barge_ins if b["yielded"]]
        t = self.duration_s
        return {
            "response_latency_mean_s": sum(lat) / len(lat) if lat else None,
            "response_latency_p50_s": nearest_rank(lat, 50),
            "response_latency_p90_s": nearest_rank(lat, 90),
            "response_latency_p95_s": nearest_rank(lat, 95),
            "response_rate": len(lat) / answered if answered else None,
            "time_to_first_agent_audio_s": self.time_to_first_agent_audio_s,
            "yield_latency_mean_s": (
                sum(b["yield_latency_s"] for b in self.barge_ins) / len(self.barge_ins)
                if self.barge_ins
                else None
            ),
            "yield_rate": len(yields) / len(self.barge_ins) if self.barge_ins else None,
            "user_barge_ins": float(len(self.barge_ins)),
            "agent_interruptions": float(len(self.agent_interruptions)),
            "agent_interruption_rate": (
                len(self.agent_interruptions) / self.user_turns if self.user_turns else None
            ),
            "overlap_s": self.overlap_s,
            "agent_talk_share": self.agent_talk_s / t if t > 0 else None,
            "user_talk_share": self.user_talk_s / t if t > 0 else None,
            "mutual_silence_s": self.mutual_silence_s,
            "longest_dead_air_s": self.longest_dead_air_s,
        }


def turn_taking(
    user: list[Span], agent: list[Span], duration_s: float, yield_window_s: float = 2.0
) -> TurnTaking:
    """All metrics for already-merged ``user`` and ``agent`` spans."""
    tt = TurnTaking(duration_s=duration_s, user_turns=len(user))
    user_starts = [s for s, _ in user]
    for _us, ue in user:
        nxt = next(((a_s, a_e) for a_s, a_e in agent if a_s >= ue), None)
        if nxt is None or any(ue <= s < nxt[0] for s in user_starts):
            tt.no_responses += 1
            continue
        tt.latencies.append({"user_end_s": ue, "agent_start_s": nxt[0], "latency_s": nxt[0] - ue})
    for us, _ue in user:
        for a_s, a_e in agent:
            if a_s < us < a_e:
                latency = a_e - us
                tt.barge_ins.append(
                    {
                        "user_start_s": us,
                        "agent_end_s": a_e,
                        "yield_latency_s": latency,
                        "yielded": latency <= yield_window_s,
                    }
                )
                break
    for a_s, _a_e in agent:
        if any(us < a_s < ue for us, ue in user):
            tt.agent_interruptions.append(a_s)
    tt.time_to_first_agent_audio_s = agent[0][0] if agent else None
    tt.overlap_s = _intersection(user, agent)
    tt.agent_talk_s = sum(e - s for s, e in agent)
    tt.user_talk_s = sum(e - s for s, e in user)
    both = _union(user + agent)
    tt.mutual_silence_s = max(0.0, duration_s - sum(e - s for s, e in both))
    gaps = [b[0] - a[1] for a, b in itertools.pairwise(both)]
    tt.longest_dead_air_s = max(gaps, default=0.0)
    return tt
