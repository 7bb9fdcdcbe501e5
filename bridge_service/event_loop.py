"""Which asyncio event loop the bridge process runs on: the standard one or uvloop.

The bridge's hot path is the event loop itself (timers, task steps, socket
callbacks from grpc.aio's poller), so a faster loop implementation can lower
its CPU per session. ``uvloop`` is optional (``pip install 'vae[fast]'``);
the standard loop always works and stays the default until the benchmark
shows a gain (``benchmarks/bridge.py --bridge-loop uvloop``). Chosen by
``vae bridge serve --event-loop`` / ``VAE_EVENT_LOOP``:

- ``asyncio``: the standard loop;
- ``uvloop``: uvloop, or a clear error when it is not installed;
- ``auto``: uvloop when installed, else the standard loop.
"""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

CHOICES = ("asyncio", "uvloop", "auto")


class EventLoopError(RuntimeError):
    """The requested event loop is not available."""


def loop_factory(choice: str) -> tuple[str, Callable[[], asyncio.AbstractEventLoop] | None]:
    """The loop's name and a factory for it (None: asyncio's default)."""
    if choice not in CHOICES:
        raise EventLoopError(f"unknown event loop {choice!r}; use one of {', '.join(CHOICES)}")
    if choice == "asyncio":
        return "asyncio", None
    try:
        uvloop: Any = importlib.import_module("uvloop")
    except ImportError as exc:
        if choice == "auto":
            return "asyncio", None
        raise EventLoopError(
            "uvloop is not installed: pip install 'vae[fast]' (or use --event-loop asyncio)"
        ) from exc
    factory: Callable[[], asyncio.AbstractEventLoop] = uvloop.new_event_loop
    return "uvloop", factory


def run(main: Coroutine[Any, Any, T], choice: str = "asyncio") -> T:
    """``asyncio.run`` on the chosen loop."""
    _, factory = loop_factory(choice)
    if factory is None:
        return asyncio.run(main)
    with asyncio.Runner(loop_factory=factory) as runner:
        return runner.run(main)
