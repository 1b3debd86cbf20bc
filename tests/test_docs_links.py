"""The README leads: it stays short, links every page under docs/, and every relative link in
it and in docs/ resolves."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


def links(path: Path) -> list[str]:
    """Relative targets, as paths from the repository root."""
    out = []
    for target in LINK.findall(path.read_text(encoding="utf-8")):
        if "://" not in target and not target.startswith("mailto:"):
            out.append((path.parent / target).resolve().relative_to(ROOT).as_posix())
    return out


def test_readme_is_short_and_links_every_page() -> None:
    readme = ROOT / "README.md"
    assert len(readme.read_text(encoding="utf-8").split("\n")) <= 120
    linked = set(links(readme))
    pages = {p.relative_to(ROOT).as_posix() for p in (ROOT / "docs").glob("*.md")}
    assert pages - linked == set(), "link these from the README"
    assert "docs/rules/README.md" in linked


def test_every_relative_link_resolves() -> None:
    docs = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "docs" / "rules" / "README.md"]
    broken = [(d.relative_to(ROOT).as_posix(), t) for d in docs for t in links(d)
              if not (ROOT / t).exists()]
    assert not broken
