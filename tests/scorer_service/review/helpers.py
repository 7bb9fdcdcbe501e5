"""``vae review`` as a user runs it (a real process on loopback), and Chromium to drive it.

:func:`serving` starts ``python -m vae.cli.main review … --json``, reads the one
JSON line it prints (the URL with its token) and stops it with SIGTERM at the
end, checking it stopped cleanly. :func:`open_url` is the report tests'
headless Chromium, pointed at a URL, recording console errors and every
request that leaves the page's own origin.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from tests.conftest import require_tool
from tests.scorer_service.report.browser import FLAGS, Watch, _playwright

ROOT = Path(__file__).resolve().parents[3]


@contextmanager
def serving(db: Path, run: str, *args: str) -> Iterator[dict[str, Any]]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "vae.cli.main", "review", run, "--db", str(db), "--json", *args],
        cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], 60)
        line = proc.stdout.readline() if ready else ""
        if not line:
            proc.kill()
            _, err = proc.communicate(timeout=10)
            raise AssertionError(f"vae review did not start: {err[-2000:]}")
        yield json.loads(line)
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=20)
    assert proc.returncode == 0, err[-2000:]
    assert out == "", "--json prints one document and nothing after it"
    assert "review page stopped" in err


def request(
    url: str, *, method: str = "GET", body: Any = None, headers: dict[str, str] | None = None
) -> tuple[int, bytes]:
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=30) as reply:
            return reply.status, reply.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


@contextmanager
def open_url(url: str, *, height: int = 900) -> Iterator[tuple[Any, Watch]]:
    chromium = require_tool(
        "chromium", "bash scripts/ci_setup_browser.sh (apt-get install chromium)"
    )
    sync_api = _playwright()
    watch = Watch()
    origin = "{0.scheme}://{0.netloc}/".format(urlsplit(url))
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, args=FLAGS, headless=True)
        try:
            page = browser.new_context(viewport={"width": 1280, "height": height}).new_page()
            page.on("console", lambda m: watch.errors.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: watch.errors.append(str(e)))
            page.on("request", lambda r: None if r.url.startswith(origin)
                    else watch.requests.append(r.url))  # fmt: skip
            page.goto(url)
            yield page, watch
        finally:
            browser.close()
