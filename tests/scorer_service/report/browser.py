"""Headless Chromium (Debian's) driven by Playwright, kept off the network.

``open_page`` yields a page that records console errors, page errors and every
request that is not the report file itself (or a ``data:`` URI), so each test
can assert that the report logged no error and fetched nothing.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import require_tool

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
    "--autoplay-policy=no-user-gesture-required",
]


@dataclass
class Watch:
    errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)


def _playwright() -> Any:
    try:
        from playwright import sync_api
    except ImportError:
        message = "playwright missing; install it with: bash scripts/ci_setup_browser.sh"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return sync_api


@contextmanager
def open_page(
    html_file: Path, *, javascript: bool = True, height: int = 800
) -> Iterator[tuple[Any, Watch]]:
    chromium = require_tool(
        "chromium", "bash scripts/ci_setup_browser.sh (apt-get install chromium)"
    )
    sync_api = _playwright()
    watch = Watch()
    own = html_file.resolve().as_uri()
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, args=FLAGS, headless=True)
        try:
            context = browser.new_context(
                viewport={"width": 1280, "height": height}, java_script_enabled=javascript
            )
            page = context.new_page()
            page.on("console", lambda m: watch.errors.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: watch.errors.append(str(e)))
            page.on(
                "request",
                lambda r: None
                if r.url == own or r.url.startswith("data:")
                or (r.url.startswith("file:") and "_audio/" in r.url)
                else watch.requests.append(r.url),
            )  # fmt: skip
            page.goto(own)
            yield page, watch
        finally:
            browser.close()
