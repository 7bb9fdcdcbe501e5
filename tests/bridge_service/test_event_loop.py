"""Choosing the bridge's event loop: asyncio always works; uvloop only when installed."""

from __future__ import annotations

import asyncio
import importlib.util

import pytest

from vae.bridge_service.event_loop import EventLoopError, loop_factory, run


async def _loop_type() -> str:
    return type(asyncio.get_running_loop()).__module__


def test_the_standard_loop_runs() -> None:
    assert loop_factory("asyncio") == ("asyncio", None)
    assert run(_loop_type(), "asyncio").startswith("asyncio")


def test_uvloop_when_installed_and_a_clear_error_otherwise() -> None:
    with pytest.raises(EventLoopError, match="unknown event loop"):
        loop_factory("tokio")
    if importlib.util.find_spec("uvloop") is None:
        with pytest.raises(EventLoopError, match=r"pip install 'vae\[fast\]'"):
            loop_factory("uvloop")
        assert loop_factory("auto") == ("asyncio", None)
    else:
        assert loop_factory("auto")[0] == "uvloop"
        assert run(_loop_type(), "uvloop").startswith("uvloop")
