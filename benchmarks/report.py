"""How big a 200-session report is and how fast it opens in headless Chromium.

    python benchmarks/report.py [--sessions 200] [--quick]

``--quick``: 20 sessions, pages opened twice each (a smoke run).

Builds a scored synthetic run (``n`` calls of ~8 s over four domains, a
quarter failing), writes its report twice — audio inside the HTML, and audio
as files beside it (``vae report --audio files``) — and opens each in Debian's
Chromium (Playwright, off the network), timing navigation until the page's
script has run. Baseline, measured in the same run: a plain HTML page of the
same byte size (one ``<pre>``), so the ratio shows what the report's markup,
SVG and script cost over just loading that many bytes.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.scorer_service.report.runs import make_large_run
from vae.recordings.read.reader import RecordingReader
from vae.scorer_service.report import report_data
from vae.scorer_service.report.html import render

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--no-first-run", "--disable-sync"]  # fmt: skip


def build(db: Path, run_id: str, out: Path, audio: str) -> float:
    started = time.perf_counter()
    folder = out.with_name(f"{out.stem}_audio") if audio == "files" else None
    with RecordingReader(db) as reader:
        data = report_data(reader, run_id, include_audio=audio == "inline", audio_dir=folder)
    out.write_text(render(data), encoding="utf-8")
    return time.perf_counter() - started


def open_times(pages: list[Path], repeats: int = 5) -> list[float]:
    from playwright.sync_api import sync_playwright

    chromium = shutil.which("chromium")
    medians = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, args=FLAGS, headless=True)
        try:
            for page_file in pages:
                times = []
                for _ in range(repeats):  # median of a few: the machine is shared
                    page = browser.new_page(viewport={"width": 1280, "height": 800})
                    started = time.perf_counter()
                    page.goto(page_file.as_uri(), wait_until="load")
                    page.wait_for_function("() => document.readyState === 'complete'")
                    times.append(time.perf_counter() - started)
                    page.close()
                medians.append(statistics.median(times))
        finally:
            browser.close()
    return medians


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sessions", type=int, default=200)
    parser.add_argument("--quick", action="store_true", help="20 sessions, 2 opens per page")
    args = parser.parse_args()
    repeats = 5
    if args.quick:
        args.sessions, repeats = 20, 2
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        db = work / "vae.db"
        run_id = make_large_run(db, args.sessions)
        inline, files = work / "inline.html", work / "files.html"
        build_inline = build(db, run_id, inline, "inline")
        build_files = build(db, run_id, files, "files")
        audio_bytes = sum(p.stat().st_size for p in (work / "files_audio").iterdir())
        plain = work / "plain.html"
        size = inline.stat().st_size
        line = "x" * 99 + "\n"
        plain.write_text(f"<!DOCTYPE html><pre>{line * (size // 100)}</pre>", encoding="utf-8")
        t_plain, t_inline, t_files = open_times([plain, inline, files], repeats)
        print(f"{args.sessions} sessions")
        print(
            f"  audio inline : {size / 1e6:5.1f} MB, built in {build_inline:.1f} s, "
            f"opens in {t_inline:.2f} s ({t_inline / t_plain:.1f}x a plain page that size)"
        )
        print(
            f"  audio files  : {files.stat().st_size / 1e6:5.1f} MB + {audio_bytes / 1e6:.1f} MB"
            f" of audio, built in {build_files:.1f} s, opens in {t_files:.2f} s"
        )
        print(f"  baseline     : plain {size / 1e6:.1f} MB page opens in {t_plain:.2f} s")


if __name__ == "__main__":
    main()
