"""The literal text of a string's source: what a fix may rewrite (never an f-string's `{...}`)."""

from __future__ import annotations


def literal_text_spans(segment: str, fstring: bool) -> list[tuple[int, int]]:
    """The (start, end) spans of `segment` that are literal text: all of it, or in an
    f-string the parts outside replacement fields (`{{` and `}}` are literal braces)."""
    if not fstring:
        return [(0, len(segment))]
    spans, start, depth, i = [], 0, 0, 0
    while i < len(segment):
        char = segment[i]
        if depth == 0 and char in "{}" and segment[i + 1:i + 2] == char:
            i += 2
            continue
        if char == "{":
            if depth == 0:
                spans.append((start, i))
            depth += 1
        elif char == "}" and depth:
            depth -= 1
            if depth == 0:
                start = i + 1
        i += 1
    spans.append((start, len(segment)))
    return spans
