"""Repeated trials: how the K copies of a scenario in one run are named and grouped.

``vae run --repeat K`` runs each scenario K times as separate sessions. Each
copy is frozen in the run as its own scenario named ``<name>#<k>`` (k = 1..K),
so everything keyed by scenario name — resume classification, latest
attempts, rescoring, export — works on trials unchanged, and each copy gets
its own noise seed (seeds derive from the run seed and the scenario name).
The bridge writes these names and the scorer groups by them, and since the two
never import each other, the rule lives here, once.
"""

from __future__ import annotations

import re

_TRIAL = re.compile(r"^(?P<base>.+)#(?P<k>[1-9][0-9]*)$")


def trial_name(base: str, k: int) -> str:
    """The name of trial ``k`` (1-based) of scenario ``base``."""
    return f"{base}#{k}"


def split_trial(name: str) -> tuple[str, int | None]:
    """``("book", 2)`` for ``"book#2"``; ``(name, None)`` for a scenario run once."""
    m = _TRIAL.match(name)
    if m is None:
        return name, None
    return m.group("base"), int(m.group("k"))


def base_name(name: str) -> str:
    return split_trial(name)[0]
