"""Canonical JSON and hashes of tool/DB state.

A final state is compared with an expected DB by hash, so two states that mean
the same must serialise the same: keys sorted, floats normalised (1.0 == 1),
``"none"``/``"null"`` strings read as null, volatile keys dropped, and lists
that the scenario declares order-independent sorted.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterable
from typing import Any

#: Keys dropped before hashing: per-session bookkeeping, not state.
VOLATILE_KEYS = frozenset({"session"})


def normalise(
    value: Any,
    *,
    order_independent: Iterable[str] = (),
    _path: str = "",
) -> Any:
    """Return ``value`` in canonical form (see the module docstring)."""
    unordered = frozenset(order_independent)
    return _normalise(value, unordered, _path)


def _normalise(value: Any, unordered: frozenset[str], path: str) -> Any:
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key in sorted(value, key=str):
            if key in VOLATILE_KEYS:
                continue
            child = f"{path}.{key}" if path else str(key)
            out[str(key)] = _normalise(value[key], unordered, child)
        return out
    if isinstance(value, list | tuple):
        items = [_normalise(v, unordered, path) for v in value]
        leaf = path.rsplit(".", 1)[-1]
        if path in unordered or leaf in unordered:
            items.sort(key=lambda v: json.dumps(v, sort_keys=True))
        return items
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return None
        if value.is_integer():
            return int(value)
        return round(value, 9)
    if isinstance(value, str) and value.strip().lower() in {"none", "null"}:
        return None
    return value


def canonical_json(value: Any, *, order_independent: Iterable[str] = ()) -> str:
    """Compact, key-sorted JSON of the canonical form."""
    return json.dumps(
        normalise(value, order_independent=order_independent),
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )


def state_hash(value: Any, *, order_independent: Iterable[str] = ()) -> str:
    """SHA-256 hex digest of :func:`canonical_json`."""
    text = canonical_json(value, order_independent=order_independent)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
