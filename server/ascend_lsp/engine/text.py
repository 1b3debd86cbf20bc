"""Source text with a line index: byte, code-point and UTF-16 column conversions."""

from __future__ import annotations

import re

from .model import Range

# str.splitlines also breaks at form feeds, \x85, \u2028 and others; Python's tokenizer
# and LSP clients break only at \r\n, \r and \n.
LINE_BREAK = re.compile(r"\r\n|\r|\n")
_OTHER_BREAKS = re.compile("[\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


def split_lines(text: str) -> list[str]:
    """Lines with their endings, split where Python and LSP clients split them."""
    if _OTHER_BREAKS.search(text) is None:
        return text.splitlines(keepends=True)
    return _LINE.findall(text)


def line_texts(text: str) -> list[str]:
    """The lines without their endings (as `LINE_BREAK.split`, so "a\\n" is ["a", ""]), at
    the speed of `str.splitlines` when no other character would break there."""
    if _OTHER_BREAKS.search(text) is not None:
        return LINE_BREAK.split(text)
    lines = text.splitlines()
    if not text or text.endswith(("\n", "\r")):
        lines.append("")
    return lines


class SourceText:
    """Text split into lines once. `ast` reports UTF-8 byte columns; findings use code
    points; the LSP speaks UTF-16. ASCII lines (almost all) skip the conversions."""

    __slots__ = ("text", "lines", "_offsets")

    def __init__(self, text: str) -> None:
        self.text = text
        self.lines = split_lines(text) or [""]
        if text.endswith(("\n", "\r")):
            self.lines.append("")
        self._offsets: list[int] | None = None

    # --- lines -------------------------------------------------------------------------
    def line(self, index: int) -> str:
        """Line `index` (0-based) without its line ending; '' past the end."""
        if 0 <= index < len(self.lines):
            return self.lines[index].rstrip("\r\n")
        return ""

    @property
    def line_offsets(self) -> list[int]:
        if self._offsets is None:
            offsets, total = [], 0
            for line in self.lines:
                offsets.append(total)
                total += len(line)
            self._offsets = offsets
        return self._offsets

    def offset(self, line: int, col: int) -> int:
        """Absolute code-point offset of (line, col), clamped to the text."""
        offsets = self.line_offsets
        if line >= len(offsets):
            return len(self.text)
        return min(offsets[line] + col, offsets[line] + len(self.line(line)))

    def position(self, offset: int) -> tuple[int, int]:
        import bisect

        offsets = self.line_offsets
        line = bisect.bisect_right(offsets, offset) - 1
        return line, offset - offsets[line]

    # --- columns -----------------------------------------------------------------------
    def col_from_bytes(self, line: int, byte_col: int) -> int:
        text = self.line(line)
        if text.isascii():
            return byte_col
        return len(text.encode("utf-8")[:byte_col].decode("utf-8", errors="ignore"))

    def range_of(self, node) -> Range:
        """The range of an `ast` node (1-based lines, byte columns) in code points."""
        line, end_line = node.lineno - 1, node.end_lineno - 1
        return Range(
            line,
            self.col_from_bytes(line, node.col_offset),
            end_line,
            self.col_from_bytes(end_line, node.end_col_offset),
        )

    def segment(self, rng: Range) -> str:
        return self.text[self.offset(rng.start_line, rng.start_col) : self.offset(rng.end_line, rng.end_col)]


def utf16_col(line_text: str, col: int) -> int:
    """Code-point column → UTF-16 code units (characters beyond the BMP count twice)."""
    if line_text.isascii():
        return col
    return col + sum(1 for ch in line_text[:col] if ord(ch) > 0xFFFF)


def col_from_utf16(line_text: str, units: int) -> int:
    """UTF-16 code units → code-point column."""
    if line_text.isascii():
        return units
    seen = 0
    for index, ch in enumerate(line_text):
        if seen >= units:
            return index
        seen += 2 if ord(ch) > 0xFFFF else 1
    return len(line_text)
