"""Re-create the README's screenshots: the demo's report, and agent v1 vs v2.

    python scripts/screenshots.py              # writes docs/img/*.png
    python scripts/screenshots.py --keep work/ # also keeps the database and reports

What it does, so anyone can check the pictures are real:

1. ``vae demo`` on the example suite (agent "v1") into a fresh database;
2. ``vae demo`` again on a copy of the suite whose scripted agent was changed
   in two scenarios ("v2"): it books the wrong date in ``airline_change_flight``
   (a regression) and the right one in ``airline_wrong_date`` (a fix); the
   demo compares the new run with the previous one by itself;
3. opens both reports in headless Chromium (Debian's, off the network) at
   1280x800 and saves the first screen of the v1 report, one failing session
   opened, and the comparison section of the v2 report.

Needs what the report's browser test needs: ``bash scripts/ci_setup_browser.sh``.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SUITE = ROOT / "examples" / "suite"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--no-first-run", "--disable-sync"]  # fmt: skip

#: Agent v2: (file, old text, new text) edits of the scripted agent (first occurrence:
#: the agent script comes before the scenario's reference answer).
AGENT_V2 = [
    ("airline_change_flight.yaml", 'new_date: "2026-03-14"}', 'new_date: "2026-03-15"}'),
    ("airline_change_flight.yaml", "now flies on March 14", "now flies on March 15"),
    ("airline_wrong_date.yaml", 'new_date: "2026-03-21"}', 'new_date: "2026-03-20"}'),
    ("airline_wrong_date.yaml", "now on March 21", "now on March 20"),
]


def demo(db: Path, suite: Path, report: Path) -> None:
    cmd = [sys.executable, "-m", "vae.cli.main", "demo", "--db", str(db), "--suite", str(suite),
           "-o", str(report)]  # fmt: skip
    print("$", " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True, cwd=ROOT)


def agent_v2(folder: Path) -> Path:
    v2 = folder / "suite-agent-v2"
    shutil.copytree(SUITE, v2)
    for name, old, new in AGENT_V2:
        path = v2 / name
        text = path.read_text(encoding="utf-8")
        if old not in text:
            raise SystemExit(f"{path}: {old!r} not found; update AGENT_V2 in {__file__}")
        path.write_text(text.replace(old, new, 1), encoding="utf-8")  # the agent script only
    return v2


def shoot(v1: Path, v2: Path, out: Path) -> list[Path]:
    from playwright.sync_api import sync_playwright

    chromium = shutil.which("chromium")
    out.mkdir(parents=True, exist_ok=True)
    written = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, args=FLAGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            page.goto(v1.resolve().as_uri())
            written.append(out / "report.png")
            page.screenshot(path=written[-1])
            # The sticky filter bar would sit over an element screenshot.
            page.add_style_tag(content=".controls{position:static}")
            session = page.locator("details.session[data-verdict=failed]").first
            session.scroll_into_view_if_needed()
            written.append(out / "session.png")
            session.screenshot(path=written[-1])
            page.goto(v2.resolve().as_uri())
            written.append(out / "compare-first-screen.png")
            page.screenshot(path=written[-1])
            written.append(out / "compare.png")
            page.locator("section.baseline").screenshot(path=written[-1])
        finally:
            browser.close()
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "img")
    parser.add_argument("--keep", type=Path, default=None, help="keep the work files here")
    args = parser.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="vae-shots-"))
    work.mkdir(parents=True, exist_ok=True)
    db = work / "vae-demo.db"
    if db.exists():
        raise SystemExit(f"{db} exists: give an empty --keep folder")
    v1, v2 = work / "report-agent-v1.html", work / "report-agent-v2.html"
    demo(db, SUITE, v1)
    demo(db, agent_v2(work), v2)
    for path in shoot(v1, v2, args.out):
        print("wrote", path.relative_to(ROOT) if path.is_relative_to(ROOT) else path)
    if args.keep is None:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
