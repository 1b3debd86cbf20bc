"""Whether a dtype the code names is only compared with: an operand of `==`, `!=`, `in` or `is`
(`x.dtype == torch.float64`, `dtype not in (torch.float16, torch.float64)`), alone or in the
display it is compared with. A test of a dtype makes no tensor of it. Read from the text before
the name: on its line, or, for a display written one item a line, back to the line that opens it."""

from __future__ import annotations

import ast
import re

from ..engine.checker import Checker
from ..engine.text import SourceText

DTYPE_TEST = re.compile(r"(?:==|!=|\bin\b|\bis\b(?:\s+not)?)\s*[\[({]?[\w.,\s]*$")
# `for dtype in (torch.float64, ...)`, `[f(d) for d in (...)]`: a loop over dtypes, each one used
LOOP = re.compile(r"\bfor\b")
DISPLAY_ITEMS = re.compile(r"\s*(?:[\w.]+\s*,\s*)*")  # a line of a display's items: `torch.float32,`
DISPLAY_LINES = 40  # how far above its items a display may open


def dtype_test(checker: Checker, node: ast.AST) -> bool:
    """Whether the dtype `node` names is an operand of a comparison; not of the display a `for` walks."""
    where = checker.range(node)
    return compared_at(checker.source, where.start_line, where.start_col)


def compared_at(source: SourceText, line: int, col: int) -> bool:
    """Whether the name at 0-based (`line`, `col`) is an operand of a comparison."""
    before = source.line(line)[:col]
    above = line
    while not before.strip() and above > 0 and line - above < DISPLAY_LINES:
        above -= 1  # an item alone on its line: the lines above, back to the one that opens the display
        text = source.line(above)
        if not DISPLAY_ITEMS.fullmatch(text):
            before = text
    return DTYPE_TEST.search(before) is not None and LOOP.search(before) is None
