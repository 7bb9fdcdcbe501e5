"""The docs hold together: every link lands, every page is reachable, the README is short.

The README is what a newcomer reads first, in about ten minutes; everything
else lives in ``docs/``, one page per topic. So: every relative link of every
page points to a file that exists and, with a ``#fragment``, to a heading of
that page (GitHub's anchors); the README links every page of ``docs/``; and the
README stays within about 250 lines.
"""

from __future__ import annotations

import re
from pathlib import Path

from tests.docs.test_shell_blocks import ROOT, documents

LINK = re.compile(r"\]\(([^)\s]+)\)")
README_LINES = 250


def _without_blocks(path: Path) -> str:
    """The page without its fenced blocks (headings keep their inline code)."""
    text = path.read_text(encoding="utf-8")
    return re.sub(r"^(`{3,}|~{3,}).*?^\1", "", text, flags=re.S | re.M)


def _prose(path: Path) -> str:
    """The page without fenced blocks and inline code (which may look like links)."""
    return re.sub(r"`[^`\n]*`", "", _without_blocks(path))


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    found: set[str] = set()
    for heading in re.findall(r"^#+\s+(.+)$", _without_blocks(path), re.M):
        base = _slug(heading.replace("`", ""))
        name, n = base, 1
        while name in found:
            name, n = f"{base}-{n}", n + 1
        found.add(name)
    return found


def test_every_relative_link_lands() -> None:
    broken = []
    for doc in documents():
        for target in LINK.findall(_prose(doc)):
            if re.match(r"[a-z]+:", target):
                continue
            path, _, fragment = target.partition("#")
            dest = (doc.parent / path).resolve() if path else doc.resolve()
            where = f"{doc.relative_to(ROOT)} -> {target}"
            if not dest.exists():
                broken.append(f"{where}: no such file")
            elif fragment and dest.suffix == ".md" and fragment not in anchors(dest):
                broken.append(f"{where}: no such heading")
    assert not broken, "\n".join(broken)


def test_the_readme_links_every_page_and_stays_short() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    linked = {t.partition("#")[0] for t in LINK.findall(readme)}
    pages = {p.relative_to(ROOT).as_posix() for p in (ROOT / "docs").glob("*.md")}
    assert pages - linked == set(), "README.md does not link these pages"
    assert len(readme.splitlines()) <= README_LINES


def test_the_anchor_rule_matches_github() -> None:
    cases = {
        "Transcription (vae rescore --transcribe)": "transcription-vae-rescore---transcribe",
        "pytest: pytest --vae-suite examples/suite": "pytest-pytest---vae-suite-examplessuite",
    }
    for heading, anchor in cases.items():
        assert _slug(heading) == anchor
