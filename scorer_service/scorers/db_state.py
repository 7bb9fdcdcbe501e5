"""DB_STATE_MATCH: each side's final state against its expected DB, by canonical hash.

Both states are canonicalised the same way (``vae.recordings.canonical``: sorted
keys, normalised floats and nulls, volatile keys dropped, the scenario's
declared order-independent lists sorted) and hashed. Unlike the established
tool, the user side is compared too whenever ``expected_user_db`` is given.
The hash is recomputed from the recorded state whenever the state was
recorded, so a new expected DB can be checked against last week's run. Only
when no state exists but a hash does (runs imported from the established
framework, which never wrote the final DB) are hashes compared directly: the
recorded hash against the expected DB's hash, or against the expected hash
the import kept in the side's extras (``expected_db_hash``).
A mismatch stores a readable diff (path, expected, actual) so it explains itself.
"""

from __future__ import annotations

from typing import Any

from vae.recordings.canonical import normalise, state_hash
from vae.recordings.models import Side, Verdict
from vae.scorer_service import signals
from vae.scorer_service.context import ScoringContext
from vae.scorer_service.scorer import SignalScore, passed_or_failed

#: Diff entries kept per side (a wrong DB can differ everywhere).
MAX_DIFF = 50
_MISSING = "<missing>"


def diff(expected: Any, actual: Any, path: str = "") -> list[dict[str, Any]]:
    """Differences between two canonical values as ``{path, expected, actual}`` rows."""
    if isinstance(expected, dict) and isinstance(actual, dict):
        out: list[dict[str, Any]] = []
        for key in sorted(set(expected) | set(actual)):
            child = f"{path}.{key}" if path else str(key)
            out.extend(diff(expected.get(key, _MISSING), actual.get(key, _MISSING), child))
        return out
    if isinstance(expected, list) and isinstance(actual, list) and len(expected) == len(actual):
        out = []
        for i, (e, a) in enumerate(zip(expected, actual, strict=True)):
            out.extend(diff(e, a, f"{path}[{i}]"))
        return out
    if expected == actual:
        return []
    return [{"path": path or "<root>", "expected": expected, "actual": actual}]


def compare_hashes(expected_hash: str, recorded_hash: str) -> dict[str, Any]:
    """A verdict from hashes alone: no state to diff, so the detail says so."""
    return {
        "expected_hash": expected_hash,
        "actual_hash": recorded_hash,
        "match": expected_hash == recorded_hash,
        "diff": [],
        "reason": "compared by hash only: the final state itself was not recorded",
    }


def compare_state(
    expected: Any,
    actual: Any,
    order_independent: list[str],
    recorded_hash: str | None = None,
) -> dict[str, Any]:
    exp_hash = state_hash(expected, order_independent=order_independent)
    if actual is None and recorded_hash:
        return compare_hashes(exp_hash, recorded_hash)
    if actual is None:
        return {
            "expected_hash": exp_hash,
            "actual_hash": None,
            "match": False,
            "diff": [],
            "reason": "no final state was recorded",
        }
    act_hash = state_hash(actual, order_independent=order_independent)
    rows: list[dict[str, Any]] = []
    if exp_hash != act_hash:
        rows = diff(
            normalise(expected, order_independent=order_independent),
            normalise(actual, order_independent=order_independent),
        )
    return {
        "expected_hash": exp_hash,
        "actual_hash": act_hash,
        "match": exp_hash == act_hash,
        "diff": rows[:MAX_DIFF],
        "diff_total": len(rows),
    }


class DbStateMatchScorer:
    name = "db_state_match"
    version = "1"
    needs_audio = False

    async def score(self, ctx: ScoringContext) -> list[SignalScore]:
        sc = ctx.scenario
        expected = {"agent": sc.expected_scenario_db, "user": sc.expected_user_db}
        sides: dict[str, dict[str, Any]] = {}
        for side, exp in expected.items():
            record = ctx.final_states.get(Side(side))
            recorded_hash = record.state_hash if record is not None else None
            if exp is not None:
                sides[side] = compare_state(
                    exp, ctx.state(side), sc.order_independent_lists, recorded_hash
                )
                continue
            expected_hash = sc.side(side).extras.get("expected_db_hash")
            if isinstance(expected_hash, str) and expected_hash and ctx.state(side) is None:
                sides[side] = compare_hashes(expected_hash, recorded_hash or "")
        if not sides:
            detail: dict[str, Any] = {"reason": "no expected DB"}
            return [SignalScore(signals.DB_STATE_MATCH, Verdict.NOT_APPLICABLE, None, detail)]
        ok = all(s["match"] for s in sides.values())
        return [SignalScore(signals.DB_STATE_MATCH, passed_or_failed(ok), None, {"sides": sides})]
