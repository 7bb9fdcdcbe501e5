"""Type checks for every field the importer reads from a NeMo ``metrics.json``.

Why: the importer used to coerce whatever it found (``stop_reason: 42``
became ``bot_error``, ``clean_exit: "yes"`` became false, ``judge_score:
"high"`` sat beside a passed JUDGE_PASSED). A value of the wrong type is now a
listed problem and is dropped, so the rest of the importer sees only values of
the documented types, and a missing value stays missing (never a verdict).
"""

from __future__ import annotations

from typing import Any

_NUMBER = (int, float)
#: Verdict fields: a boolean, or the framework's "N/A".
_VERDICT = "verdict"
_RATE = "rate"

#: key -> expected kind: a tuple of types, "verdict" (bool or "N/A"), "rate" (number or "N/A").
FIELDS: dict[str, Any] = {
    "stop_reason": (str,),
    "clean_exit": (bool,),
    "total_turns": (int,),
    "duration_seconds": _NUMBER,
    "scenario_duration": _NUMBER,
    "scenario_name": (str,),
    "scenario_directory": (str,),
    "turns": (list,),
    "latencies": (list,),
    "latency_stats": (dict,),
    "token_usage": (dict,),
    "judge_score": _NUMBER,
    "judge_passed": _VERDICT,
    "is_action_match": _VERDICT,
    "db_state_match": _VERDICT,
    "is_successful": _VERDICT,
    "is_task_successful": _VERDICT,
    "insufficient_agent_turns": (bool,),
    "db_state_assertion_pass_rate": _RATE,
    "nl_assertion_pass_rate": _RATE,
    "db_state_expected_hash": (str, type(None)),
    "db_state_actual_hash": (str, type(None)),
}
_USAGE_KEYS = ("n_calls", "prompt", "completion")


def _ok(value: Any, kind: Any) -> bool:
    if kind == _VERDICT:
        return isinstance(value, bool) or value == "N/A"
    if kind == _RATE:
        number = isinstance(value, _NUMBER) and not isinstance(value, bool)
        return number or value == "N/A"
    if isinstance(value, bool) and bool not in kind:
        return False  # True is an int in Python; never a count or a duration here
    return isinstance(value, kind)


def _expected(kind: Any) -> str:
    if kind == _VERDICT:
        return 'a boolean or "N/A"'
    if kind == _RATE:
        return 'a number or "N/A"'
    names = {
        str: "a string",
        bool: "a boolean",
        int: "an integer",
        float: "a number",
        list: "a list",
        dict: "an object",
        type(None): "null",
    }
    if int in kind and float in kind:
        kind = tuple(k for k in kind if k is not int)
    return " or ".join(dict.fromkeys(names.get(k, k.__name__) for k in kind))


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def check_metrics(metrics: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """``metrics`` without its wrong-typed fields, and one problem line per field dropped."""
    clean = dict(metrics)
    problems: list[str] = []
    for key, kind in FIELDS.items():
        if key not in clean:
            continue
        value = clean[key]
        if not _ok(value, kind):
            problems.append(
                f"metrics.json: {key}: expected {_expected(kind)}, got "
                f"{type(value).__name__} {_shown(value)}; ignored"
            )
            del clean[key]
    usage = clean.get("token_usage")
    if isinstance(usage, dict):
        fixed: dict[str, Any] = {}
        for side, totals in usage.items():
            if not isinstance(totals, dict):
                problems.append(f"metrics.json: token_usage.{side}: expected an object; ignored")
                continue
            good = {}
            for k, v in totals.items():
                if k in _USAGE_KEYS and not _ok(v, (int,)):
                    problems.append(
                        f"metrics.json: token_usage.{side}.{k}: expected an integer, got "
                        f"{type(v).__name__} {_shown(v)}; ignored"
                    )
                    continue
                good[k] = v
            fixed[side] = good
        clean["token_usage"] = fixed
    return clean, problems
