"""Rule pages: docs/rules/CODE.md and the rule index in docs/rules/README.md are generated
from the rule metadata. `python -m ascend_lsp.rules.docs [--check]` writes (or verifies) them."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..engine.registry import Rule
from . import RULES
from .location import location_lines, locate

ROOT = Path(__file__).resolve().parents[3]
INDEX_START, INDEX_END = "<!-- rule-index:start -->", "<!-- rule-index:end -->"
FIX_TEXT = {"always": "always available", "sometimes": "sometimes available", "never": "none"}


def page(rule: Rule) -> str:
    doc = rule.doc
    table = f"\n**Table:** `{rule.table}`  " if rule.table else ""
    what = doc.what if rule.on_type_only else (
        doc.what + " A class that is only named in a type hint or in `isinstance()`/`issubclass()` is not reported: "
        "naming it runs nothing.")
    opt_in = (f"\n**Default:** off. Opt-in because {rule.opt_in}: enable it with "
              f"`extend-select = [\"{rule.code}\"]` (or a prefix with digits, such as `\"{rule.code[:4]}\"`).  "
              if rule.opt_in else "")
    return (
        f"# {rule.code}: {rule.name}\n\n"
        f"**Severity:** {rule.severity.name.lower()} · **Fix:** {FIX_TEXT[rule.fix]} · "
        f"**Targets:** {', '.join(rule.targets)}  {table}{opt_in}\n\n"
        f"## What it does\n\n{what}\n\n"
        f"## Why\n\n{doc.why}\n\n"
        f"## Example\n\n```python\n{doc.example}\n```\n\n"
        f"## Fix\n\n{doc.fix}\n\n"
        f"## Source\n\n{doc.source}\n\n"
        f"## Where it lives\n\n" + "\n".join(location_lines(locate(rule))) + "\n\n" + suppression(rule)
    )


def suppression(rule: Rule) -> str:
    if not rule.suppressible:
        return "It cannot be suppressed: `# noqa`, `ignore` and `per-file-ignores` do not hide it.\n"
    return f"Suppress with `# noqa: {rule.code}`, or `ignore = [\"{rule.code}\"]` in `[tool.ascend-lsp]`.\n"


def index() -> str:
    rows = ["| code | name | severity | fix | what |", "|---|---|---|---|---|"]
    for rule in sorted(RULES.values(), key=lambda r: r.code):
        what = rule.doc.what.split(". ")[0].rstrip(".").replace("|", "\\|").replace("\n", " ")
        rows.append(f"| [{rule.code}]({rule.code}.md) | {rule.name} | {rule.severity.name.lower()} | "
                    f"{FIX_TEXT[rule.fix]} | {what} |")
    return "\n".join(rows)


def expected() -> dict[Path, str]:
    out = {ROOT / "docs" / "rules" / f"{code}.md": page(rule) for code, rule in RULES.items()}
    readme = ROOT / "docs" / "rules" / "README.md"
    if readme.exists():
        text = readme.read_text(encoding="utf-8")
        if INDEX_START in text and INDEX_END in text:
            head, _, rest = text.partition(INDEX_START)
            _, _, tail = rest.partition(INDEX_END)
            out[readme] = f"{head}{INDEX_START}\n{index()}\n{INDEX_END}{tail}"
    return out


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m ascend_lsp.rules.docs")
    parser.add_argument("--check", action="store_true", help="fail if a page is out of date")
    args = parser.parse_args()
    stale = []
    for path, text in expected().items():
        current = path.read_text(encoding="utf-8") if path.exists() else None
        if current != text:
            stale.append(path)
            if not args.check:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text, encoding="utf-8")
    for path in stale:
        print(f"{'stale' if args.check else 'wrote'}: {path.relative_to(ROOT)}")
    return 1 if stale and args.check else 0


if __name__ == "__main__":
    sys.exit(main())
