"""Cross-side state sync for dual-sided scenarios.

When both sides have tools and state (a telecom caller's phone has its own),
a write action on one side may change the other side's world. The bridge keeps
a shadow copy of each side's state (starting from the scenario's initial
states), and for each recorded write action calls the scenario's sync hook::

    def hook(agent_db: dict, user_db: dict, action: dict) -> dict:
        return {"agent": {...delta...}, "user": {...delta...}}

``action`` is the recorded tool call (``name``, ``arguments``, ``result``,
``side``, ``call_id``). Each non-empty delta is deep-merged into that side's
shadow, pushed to that side's bot as a ``StateSync`` and recorded. A failing
hook is recorded and the session goes on without that delta.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from vae.recordings.models import Side
from vae.recordings.scenarios.hooks import SyncHookError, load_hook
from vae.recordings.scenarios.model import Scenario


def deep_merge(target: dict[str, Any], delta: dict[str, Any]) -> None:
    for key, value in delta.items():
        if isinstance(value, dict) and isinstance(target.get(key), dict):
            deep_merge(target[key], value)
        else:
            target[key] = copy.deepcopy(value)


@dataclass(frozen=True)
class Delta:
    side: Side
    sequence: int
    delta: dict[str, Any]


class StateSync:
    """Shadow states of both sides and the hook that links them."""

    def __init__(self, scenario: Scenario) -> None:
        assert scenario.sync_hook is not None
        self._hook = load_hook(scenario.sync_hook)
        self.shadow: dict[Side, dict[str, Any]] = {
            Side.AGENT: copy.deepcopy(scenario.initial_state),
            Side.USER: copy.deepcopy(scenario.initial_user_state),
        }
        self._sequence = {Side.AGENT: 0, Side.USER: 0}

    def on_write(self, action: dict[str, Any]) -> list[Delta]:
        """Deltas caused by one write action; raises SyncHookError if the hook fails."""
        try:
            result = self._hook(
                copy.deepcopy(self.shadow[Side.AGENT]),
                copy.deepcopy(self.shadow[Side.USER]),
                dict(action),
            )
        except Exception as exc:
            raise SyncHookError(f"sync hook failed: {type(exc).__name__}: {exc}") from exc
        if result is None:
            return []
        if not isinstance(result, dict):
            raise SyncHookError(f"sync hook returned {type(result).__name__}, not a mapping")
        deltas = []
        for side in (Side.AGENT, Side.USER):
            delta = result.get(str(side))
            if not delta:
                continue
            if not isinstance(delta, dict):
                raise SyncHookError(f"sync hook's {side} delta is not a mapping")
            deep_merge(self.shadow[side], delta)
            self._sequence[side] += 1
            deltas.append(Delta(side, self._sequence[side], delta))
        return deltas
