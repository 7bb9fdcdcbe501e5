"""Re-create docs/img/waterfall.png: the pipecat example's own spans in vae's report.

    python scripts/screenshot_traces.py              # writes docs/img/waterfall.png
    python scripts/screenshot_traces.py --keep work/ # also keeps the database and report

What it does, so anyone can check the picture is real: it runs the commands of
docs/traces.md ("A pipecat agent") as written — a bridge receiving OTLP, the
pipecat example bot exporting pipecat's own tracing to it, a run, a rescore,
the report — in a fresh folder, then opens the report in headless Chromium
(Debian's, off the network) and saves the session's per-turn waterfall.

Needs the pipecat venv (``scripts/setup_pipecat_env.sh``) and the browser of the
report test (``bash scripts/ci_setup_browser.sh``).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from scripts.screenshots import FLAGS  # noqa: E402
from tests.docs.test_shell_blocks import blocks  # noqa: E402


def run_the_docs(folder: Path) -> Path:
    (block,) = [b for b in blocks(ROOT / "docs" / "traces.md")
                if "examples/pipecat_bot/bot.py" in b.text and b.language == "bash"]  # fmt: skip
    shutil.copytree(ROOT / "examples", folder / "examples",
                    ignore=shutil.ignore_patterns("node_modules", "__pycache__"))  # fmt: skip
    (folder / ".pipecat-venv").symlink_to((ROOT / ".pipecat-venv").resolve())
    bin_dir = folder / "bin"
    bin_dir.mkdir()
    vae = bin_dir / "vae"
    vae.write_text(f'#!/bin/sh\nexec {sys.executable} -m vae.cli.main "$@"\n')
    vae.chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
           "PYTHONPATH": str(ROOT)}  # fmt: skip
    print(block.text, flush=True)
    subprocess.run(["bash", "-euo", "pipefail", "-c", block.script()], cwd=folder, env=env,
                   check=True, timeout=300)  # fmt: skip
    return folder / "traced.html"


def shoot(report: Path, out: Path) -> Path:
    from playwright.sync_api import sync_playwright

    out.parent.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=shutil.which("chromium"), args=FLAGS,
                                     headless=True)  # fmt: skip
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.goto(report.resolve().as_uri())
            page.add_style_tag(content=".controls{position:static}")
            session = page.locator("details.session").first
            session.evaluate("el => el.open = true")
            heading = page.locator("h3", has_text="Agent spans per turn").first
            heading.scroll_into_view_if_needed()
            box_h = heading.bounding_box()
            box_w = page.locator(".turn-waterfall").first.bounding_box()
            assert box_h is not None and box_w is not None
            clip = {"x": box_w["x"] - 8, "y": box_h["y"] - 8, "width": box_w["width"] + 16,
                    "height": box_w["y"] + box_w["height"] - box_h["y"] + 16}  # fmt: skip
            page.screenshot(path=out, clip=clip)
        finally:
            browser.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", type=Path, default=None, help="keep the work folder here")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "img" / "waterfall.png")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        report = run_the_docs(folder)
        print("wrote", shoot(report, args.out))


if __name__ == "__main__":
    main()
