"""Where a rule's page is: the installed copy and the address diagnostics link."""

from __future__ import annotations

from pathlib import Path

from .. import DOCS_URL
from ..engine.config import env_docs_url


def packaged_page(code: str) -> Path:
    """The rule's page installed with the package (a checkout: docs/rules/ of the repository)."""
    here = Path(__file__).resolve().parent.parent
    packaged = here / "docs" / "rules"
    return (packaged if packaged.is_dir() else here.parents[1] / "docs" / "rules") / f"{code}.md"


def rule_url(code: str, docs_url: str = "") -> str:
    """The address of a rule's page: `docs_url` (a setting), else $ASCEND_LSP_DOCS_URL, else
    DOCS_URL. `{code}` in it is replaced by the code; a base without it gets `/<code>.md`;
    "packaged" is the installed copy's file: URI."""
    base = docs_url or env_docs_url() or DOCS_URL
    if base == "packaged":
        return packaged_page(code).as_uri()
    return base.replace("{code}", code) if "{code}" in base else f"{base.rstrip('/')}/{code}.md"
