"""`# noqa` and `# noqa: NPU101, NPU2` comments."""

from __future__ import annotations

import bisect
import re

from .model import Finding
from .registry import RuleSet
from .text import SourceText

# Spaces but no line break (`[^\S\r\n]`): a comment ends with its line, so the whole text can be
# searched at once.
NOQA = re.compile(r"#[^\S\r\n]*noqa(?::[^\S\r\n]*(?P<codes>[A-Z]+[0-9]*(?:(?:[^\S\r\n]|,)+[A-Z]+[0-9]*)*))?",
                  re.IGNORECASE)
ALL = frozenset({""})  # the empty prefix matches every code


def noqa_map(source: SourceText) -> dict[int, frozenset[str]]:
    """0-based line → code prefixes suppressed there (ALL for a bare `# noqa`)."""
    out: dict[int, frozenset[str]] = {}
    offsets = None
    for found in NOQA.finditer(source.text):
        if offsets is None:
            offsets = source.line_offsets
        index = bisect.bisect_right(offsets, found.start()) - 1
        if index in out:
            continue  # the first on a line counts
        codes = found.group("codes")
        out[index] = ALL if not codes else frozenset(c.upper() for c in re.split(r"[\s,]+", codes) if c)
    return out


def suppressed(finding: Finding, noqa: dict[int, frozenset[str]], rules: RuleSet) -> bool:
    codes = noqa.get(finding.range.start_line)
    if codes is None or not rules.suppressible(finding.code):
        return False
    return any(finding.code.startswith(prefix) for prefix in codes)


def add_noqa(line: str, code: str) -> str:
    """`line` with `code` added to its noqa comment (or a new one)."""
    found = NOQA.search(line)
    if found is None:
        body = line.rstrip()
        return f"{body}  # noqa: {code}"
    codes = found.group("codes")
    if not codes:
        return line  # a bare noqa already covers everything
    if code in re.split(r"[\s,]+", codes.upper()):
        return line
    return line[: found.end("codes")] + f", {code}" + line[found.end("codes"):]
