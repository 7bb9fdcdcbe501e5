"""ACTION_MATCH: the reference answer against the recorded write actions.

The established semantics (seed-system.md §3), with its bugs fixed:

- a one-item list is unwrapped to its item (on both sides);
- dict vs dict is a *subset* match: every reference key must be present and
  match, extra predicted keys pass (so the ``side``/``tool`` tags never hurt);
- a dict reference vs a list prediction matches the list's **last** item;
- list vs list is an order-independent one-to-one match — a real maximum
  matching, not the established greedy one, which could miss a valid pairing;
- numbers compare with a tolerance (``math.isclose``, rel 1e-5, abs 1e-8, as
  ``np.isclose``), and a numeric string compares as its number;
- strings honour ``ignore_capitalization`` (casefold), ``ignore_punctuation``
  (every Unicode punctuation character) and ``clean_text``, which really cleans:
  NFKC normalisation and whitespace trimmed and collapsed;
- ``disallow_extra_items`` or the run-wide strict flag require lists of equal
  length (a dict reference then needs exactly one predicted action);
- no reference: not applicable; a reference but no write action: failed.
"""

from __future__ import annotations

import math
import re
import unicodedata
from dataclasses import dataclass
from typing import Any

from vae.recordings.models import Verdict
from vae.scorer_service import signals
from vae.scorer_service.context import ScoringContext
from vae.scorer_service.scorer import SignalScore, passed_or_failed

_SPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class MatchOptions:
    ignore_capitalization: bool = False
    ignore_punctuation: bool = False
    clean_text: bool = False
    strict: bool = False


def normalise_text(text: str, opts: MatchOptions) -> str:
    if opts.clean_text:
        text = _SPACE.sub(" ", unicodedata.normalize("NFKC", text)).strip()
    if opts.ignore_punctuation:
        text = "".join(c for c in text if not unicodedata.category(c).startswith("P"))
        if opts.clean_text:
            text = _SPACE.sub(" ", text).strip()
    if opts.ignore_capitalization:
        text = text.casefold()
    return text


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            return None
    return None


def values_match(ref: Any, pred: Any, opts: MatchOptions) -> bool:
    if isinstance(ref, dict):
        return isinstance(pred, dict) and dict_subset(ref, pred, opts)
    if isinstance(ref, list):
        return isinstance(pred, list) and lists_match(ref, pred, opts)[0]
    if isinstance(ref, bool) or isinstance(pred, bool):
        return ref is pred or (ref == pred and type(ref) is type(pred))
    if ref is None or pred is None:
        return ref is None and pred is None
    a, b = _number(ref), _number(pred)
    if a is not None and b is not None and not (isinstance(ref, str) and isinstance(pred, str)):
        return math.isclose(a, b, rel_tol=1e-5, abs_tol=1e-8)
    if isinstance(ref, str) and isinstance(pred, str):
        return normalise_text(ref, opts) == normalise_text(pred, opts)
    return bool(ref == pred)


def dict_subset(ref: dict[str, Any], pred: dict[str, Any], opts: MatchOptions) -> bool:
    return all(k in pred and values_match(v, pred[k], opts) for k, v in ref.items())


def lists_match(ref: list[Any], pred: list[Any], opts: MatchOptions) -> tuple[bool, str]:
    """Order-independent one-to-one matching (maximum bipartite matching)."""
    if opts.strict and len(ref) != len(pred):
        return False, f"strict: {len(ref)} reference items, {len(pred)} predicted"
    edges = [[j for j, p in enumerate(pred) if values_match(r, p, opts)] for r in ref]
    owner: dict[int, int] = {}

    def augment(i: int, seen: set[int]) -> bool:
        for j in edges[i]:
            if j in seen:
                continue
            seen.add(j)
            if j not in owner or augment(owner[j], seen):
                owner[j] = i
                return True
        return False

    matched = sum(1 for i in range(len(ref)) if augment(i, set()))
    if matched < len(ref):
        return False, f"{matched} of {len(ref)} reference items matched a distinct action"
    return True, f"all {len(ref)} reference items matched"


def _unwrap(value: Any) -> Any:
    return value[0] if isinstance(value, list) and len(value) == 1 else value


def match_actions(reference: Any, prediction: Any, opts: MatchOptions) -> tuple[Verdict, str]:
    """The verdict and a one-line reason; see the module docstring for the rules."""
    if reference is None or reference == [] or reference == {}:
        return Verdict.NOT_APPLICABLE, "no reference answer"
    if prediction is None or prediction == [] or prediction == {}:
        return Verdict.FAILED, "no write action was recorded"
    ref, pred = _unwrap(reference), _unwrap(prediction)
    if isinstance(ref, dict) and isinstance(pred, list):
        if opts.strict:
            return Verdict.FAILED, f"strict: one reference item, {len(pred)} predicted"
        last = pred[-1]
        ok = isinstance(last, dict) and dict_subset(ref, last, opts)
        return passed_or_failed(ok), f"last of {len(pred)} actions {'matches' if ok else 'differs'}"
    if isinstance(ref, list) and isinstance(pred, dict):
        pred = [pred]
    if isinstance(ref, dict) and isinstance(pred, dict):
        ok = dict_subset(ref, pred, opts)
        return passed_or_failed(ok), "subset match" if ok else "reference is not a subset"
    if isinstance(ref, list) and isinstance(pred, list):
        ok, reason = lists_match(ref, pred, opts)
        return passed_or_failed(ok), reason
    return passed_or_failed(values_match(ref, pred, opts)), "value comparison"


class ActionMatchScorer:
    name = "action_match"
    version = "1"
    needs_audio = False

    async def score(self, ctx: ScoringContext) -> list[SignalScore]:
        sc = ctx.scenario
        opts = MatchOptions(
            ignore_capitalization=sc.ignore_capitalization,
            ignore_punctuation=sc.ignore_punctuation,
            clean_text=sc.clean_text,
            strict=sc.disallow_extra_items or ctx.strict_match,
        )
        prediction = ctx.write_actions
        verdict, reason = match_actions(sc.reference_answer, prediction, opts)
        detail = {
            "reference": sc.reference_answer,
            "prediction": prediction,
            "strict": opts.strict,
            "reason": reason,
        }
        return [SignalScore(signals.ACTION_MATCH, verdict, None, detail)]
