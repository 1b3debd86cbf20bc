"""Which lines the client's edits replaced, in the engine's `TextEdit` terms, so the
engine can re-walk only the top-level statements they touched."""

from __future__ import annotations

from ..engine.analyzer import TextEdit


def compose(a: TextEdit, b: TextEdit) -> TextEdit:
    """`a` then `b` (whose lines count in the text `a` produced) as one edit of the text
    before `a`."""
    new_last = a.last + a.delta  # last line of the text `a` wrote
    first = min(a.first, b.first)
    last = a.last if b.last <= new_last else max(a.last, b.last - a.delta)
    return TextEdit(first, last, a.delta + b.delta)


def changed_span(old: str, new: str) -> tuple[int, int, str]:
    """The smallest (start, end, replacement) that turns `old` into `new` (offsets in `old`)."""
    limit = min(len(old), len(new))
    start = 0
    while start < limit and old[start] == new[start]:
        start += 1
    end = 0
    while end < limit - start and old[len(old) - 1 - end] == new[len(new) - 1 - end]:
        end += 1
    # Never split a \r\n pair: clients count it as one line break.
    if 0 < start < len(old) and old[start - 1] == "\r" and old[start] == "\n":
        start -= 1
    stop = len(old) - end
    if 0 < stop < len(old) and old[stop - 1] == "\r" and old[stop] == "\n":
        stop, end = stop + 1, end - 1
    return start, stop, new[start:len(new) - end]


def line_col(lines: list[str], text: str, offset: int) -> tuple[int, int]:
    """(line, code-point column) of `offset` in `text` whose client lines are `lines`."""
    seen = 0
    for index, body in enumerate(lines):
        end = seen + len(body)
        if offset <= end or index == len(lines) - 1:
            return index, min(offset - seen, len(body))
        seen = end + (2 if text.startswith("\r\n", end) else 1)
    return 0, 0
