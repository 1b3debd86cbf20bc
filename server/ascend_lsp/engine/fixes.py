"""Applying fixes to text: non-overlapping, each fix whole or not at all, until stable."""

from __future__ import annotations

import bisect
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .analyzer import Analysis, analyze_with
from .registry import RuleSet
from .config import Settings
from .guards import NPU_WORD
from .model import Applicability, Edit, Finding, Fix
from .text import SourceText

if TYPE_CHECKING:
    from ..project import ProjectContext

MAX_PASSES = 10


def writes_npu(fix: Fix) -> bool:
    """Whether the fix writes something only the NPU has: torch_npu, `npu`, HCCL, an ASCEND_ variable."""
    return any(NPU_WORD.search(e.new_text.lower()) for e in fix.edits)


def applicable(fix: Fix | None, unsafe: bool, fix_style: str = "npu") -> bool:
    """Whether fix-all applies `fix`. In the portable style it writes nothing NPU-only: a fix
    offered in one style only (no `style`: rules/portable_fixes.py orders the fixes of the
    findings fixed in both) that would, is shown, not applied."""
    if fix is None or not fix.edits:
        return False
    if fix_style == "portable" and not fix.style and writes_npu(fix):
        return False
    return fix.applicability is Applicability.SAFE or (unsafe and fix.applicability is Applicability.UNSAFE)


def apply_edits(text: str, fixes: list[Fix]) -> tuple[str, int]:
    """Apply as many of `fixes` as do not overlap one another, in order; identical edits
    (two fixes adding the same import) are made once. Returns the text and the count."""
    source = SourceText(text)
    taken: dict[tuple[int, int, str], None] = {}
    spans: list[tuple[int, int]] = []
    applied = 0
    for fix in fixes:
        edits = [(source.offset(e.range.start_line, e.range.start_col),
                  source.offset(e.range.end_line, e.range.end_col), e.new_text) for e in fix.edits]
        fresh = [e for e in edits if e not in taken]
        if any(_overlaps(start, end, spans) for start, end, _ in fresh):
            continue
        for edit in fresh:
            taken[edit] = None
            bisect.insort(spans, edit[:2])
        applied += 1
    parts: list[str] = []
    at = 0  # one pass over the text: linear however many edits a line gets
    for start, end, new in sorted(taken, key=lambda e: (e[0], e[1])):
        parts += (text[at:start], new)
        at = end
    parts.append(text[at:])
    return "".join(parts), applied


def _overlaps(start: int, end: int, spans: list[tuple[int, int]]) -> bool:
    """Whether [start, end) conflicts with one of `spans` (sorted, pairwise compatible, so
    their ends rise too). Every conflict ends after `start`, and only spans that begin at
    or before `end` can conflict: walk left from there while they end after `start`."""
    index = bisect.bisect_right(spans, (end, sys.maxsize))
    while index > 0 and spans[index - 1][1] > start:
        index -= 1
        a, b = spans[index]
        if start < b and a < end:
            return True
        if start == end == a == b:
            continue  # two insertions at one point
        if start == end and a < start < b or a == b and start < a < end:
            return True
    return False


@dataclass(slots=True)
class FixResult:
    text: str
    applied: int
    analysis: Analysis  # of the final text
    remaining: list[Finding]


def fix_text_with(text: str, settings: Settings, path: str | None = None, unsafe: bool = False,
             codes: frozenset[str] | None = None, *, rules: RuleSet, project: ProjectContext | None = None) -> FixResult:
    """Apply the applicable fixes (of `codes`, if given) until none is left (`project`: as analyze's)."""
    total = 0
    analysis = analyze_with(text, settings, path, rules=rules, project=project)
    errors = dict.fromkeys(analysis.errors)  # a rule that failed on any pass failed
    for _ in range(MAX_PASSES):
        fixes = [f.fix for f in analysis.findings
                 if applicable(f.fix, unsafe, settings.fix_style) and (codes is None or f.code in codes)]
        if not fixes:
            break
        new_text, count = apply_edits(text, fixes)
        if not count or new_text == text:
            break
        total += count
        text = new_text
        analysis = analyze_with(text, settings, path, rules=rules, project=project)
        errors.update(dict.fromkeys(analysis.errors))
    analysis.errors = list(errors)
    return FixResult(text, total, analysis, analysis.findings)


__all__ = ["Edit", "FixResult", "apply_edits", "applicable", "fix_text_with", "writes_npu"]
