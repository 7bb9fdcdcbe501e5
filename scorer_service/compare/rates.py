"""Run-level rates of two scorings side by side, with the change.

Rates come from each scoring's stored summary, so they are exactly what each
scoring reported: success and task success, each signal, the judge's mean,
latency p50/p95, pass^k and pass@k when both runs repeated scenarios, and per
domain success — each beside its undecided (``unscored``) count so a rate
is never read without how many sessions it left out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from vae.recordings.models import ScoringRecord
from vae.scorer_service import signals


@dataclass(frozen=True)
class RateDelta:
    name: str
    a: float | None
    b: float | None
    #: "rate" (0..1, shown as %), "seconds" or "score"; a lower latency is better.
    unit: str = "rate"
    unscored_a: int = 0
    unscored_b: int = 0

    @property
    def change(self) -> float | None:
        return None if self.a is None or self.b is None else self.b - self.a

    @property
    def better(self) -> bool | None:
        """Whether B is better than A (None: no change or not comparable)."""
        d = self.change
        if d is None or abs(d) < 1e-12:
            return None
        return d < 0 if self.unit == "seconds" else d > 0

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "a": self.a,
            "b": self.b,
            "change": self.change,
            "unit": self.unit,
            "better": self.better,
            "unscored_a": self.unscored_a,
            "unscored_b": self.unscored_b,
        }


def _num(v: Any) -> float | None:
    return float(v) if isinstance(v, int | float) and not isinstance(v, bool) else None


def _dict(v: Any) -> dict[str, Any]:
    return v if isinstance(v, dict) else {}


def _unscored(block: dict[str, Any], key: str) -> int:
    return int(_dict(block.get(key)).get("unscored", 0) or 0)


def rate_deltas(a: ScoringRecord | None, b: ScoringRecord | None) -> list[RateDelta]:
    sa = dict(a.summary) if a else {}
    sb = dict(b.summary) if b else {}
    out = [
        RateDelta("success rate", _num(sa.get("success_rate")), _num(sb.get("success_rate")),
                  unscored_a=_unscored(sa, signals.IS_SUCCESSFUL),
                  unscored_b=_unscored(sb, signals.IS_SUCCESSFUL)),
        RateDelta("task success rate", _num(sa.get("task_success_rate")),
                  _num(sb.get("task_success_rate")),
                  unscored_a=_unscored(sa, signals.IS_TASK_SUCCESSFUL),
                  unscored_b=_unscored(sb, signals.IS_TASK_SUCCESSFUL)),
    ]  # fmt: skip
    for key in ("pass_hat_k", "pass_at_k"):
        ka, kb = _dict(sa.get(key)), _dict(sb.get(key))
        label = "pass^" if key == "pass_hat_k" else "pass@"
        for k in sorted(set(ka) & set(kb), key=int):
            out.append(RateDelta(f"{label}{k}", _num(ka[k]), _num(kb[k])))
    da, db = _dict(sa.get("domains")), _dict(sb.get("domains"))
    for d in sorted(set(da) | set(db)):
        ba, bb = _dict(da.get(d)), _dict(db.get(d))
        out.append(
            RateDelta(f"domain {d or '(none)'}", _num(ba.get("success_rate")),
                      _num(bb.get("success_rate")),
                      unscored_a=_unscored(ba, signals.IS_SUCCESSFUL),
                      unscored_b=_unscored(bb, signals.IS_SUCCESSFUL))
        )  # fmt: skip
    ga, gb = _dict(sa.get("signals")), _dict(sb.get("signals"))
    for name in signals.SUCCESS_SIGNALS:
        ra, rb = _dict(ga.get(name)), _dict(gb.get(name))
        if ra.get("rate") is None and rb.get("rate") is None:
            continue
        out.append(
            RateDelta(name, _num(ra.get("rate")), _num(rb.get("rate")),
                      unscored_a=int(ra.get("unscored", 0) or 0),
                      unscored_b=int(rb.get("unscored", 0) or 0))
        )  # fmt: skip
    if sa.get("judge_mean") is not None or sb.get("judge_mean") is not None:
        out.append(
            RateDelta("judge mean", _num(sa.get("judge_mean")), _num(sb.get("judge_mean")), "score")
        )
    la, lb = _dict(sa.get("latency")), _dict(sb.get("latency"))
    for p in ("p50_s", "p95_s"):
        if la.get(p) is not None or lb.get(p) is not None:
            out.append(RateDelta(f"latency {p[:3]}", _num(la.get(p)), _num(lb.get(p)), "seconds"))
    return out
