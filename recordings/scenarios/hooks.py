"""Importing a scenario's sync hook (``module:function``).

The bridge calls the hook during a session (``vae.bridge_service.session.sync``); the
scenario checks import it up front, so a typo fails before a run starts
rather than in the middle of a call.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

SyncHook = Callable[[dict[str, Any], dict[str, Any], dict[str, Any]], Any]


class SyncHookError(Exception):
    pass


def load_hook(path: str) -> SyncHook:
    """Import ``module:function``; raise SyncHookError saying what is missing."""
    module_name, _, attr = path.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise SyncHookError(f"cannot import {module_name!r}: {exc}") from exc
    hook = getattr(module, attr, None)
    if not callable(hook):
        raise SyncHookError(f"{module_name!r} has no function {attr!r}")
    return hook  # type: ignore[no-any-return]
