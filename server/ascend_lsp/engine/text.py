"""Source text with a line index: byte, code-point and UTF-16 column conversions."""

from __future__ import annotations

import bisect
import itertools
import re

from .model import Range

# str.splitlines also breaks at form feeds, \x85, \u2028 and others; Python's tokenizer
# and LSP clients break only at \r\n, \r and \n.
LINE_BREAK = re.compile(r"\r\n|\r|\n")
_OTHER_BREAKS = re.compile("[\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


def _other_breaks(text: str) -> bool:
    """Whether `text` has a character str.splitlines would break at and we do not. For
    ASCII text (`isascii` is a flag of the string) a few `in` scans beat the regex."""
    if text.isascii():
        return "\x0c" in text or "\x0b" in text or "\x1c" in text or "\x1d" in text or "\x1e" in text
    return _OTHER_BREAKS.search(text) is not None


# the lines that go on a statement begun above them, at the same indentation
BLOCK_CONTINUATIONS = ("else", "elif", "except", "finally", ")", "]", "}")


def with_newlines(text: str) -> str:
    """The text with each line break written `\n` (`\r\n` and `\r` too): the same lines, for a
    reader that finds them by `\n`."""
    return LINE_BREAK.sub("\n", text) if "\r" in text else text


def indent_width(line: str) -> int:
    """The number of characters of `line`'s indentation."""
    return len(line) - len(line.lstrip())


def starts_block(line: str) -> bool:
    """Whether `line` (from its indentation on) begins a statement: not blank, not indented
    further, not a comment, not the `else`/`except`/closing bracket of one begun above."""
    return bool(line) and not line[0].isspace() and line[0] != "#" and not line.startswith(BLOCK_CONTINUATIONS)


def count_breaks(text: str, start: int = 0, end: int | None = None) -> int:
    """How many line breaks text[start:end] has (`\r\n` is one), as `LINE_BREAK.findall`
    would find, without a list of them or a copy of the text (a large paste has millions)."""
    return text.count("\n", start, end) + text.count("\r", start, end) - text.count("\r\n", start, end)


def split_lines(text: str) -> list[str]:
    """Lines with their endings, split where Python and LSP clients split them."""
    if not _other_breaks(text):
        return text.splitlines(keepends=True)
    return _LINE.findall(text)


def line_texts(text: str) -> list[str]:
    """The lines without their endings (as `LINE_BREAK.split`, so "a\\n" is ["a", ""]), at
    the speed of `str.splitlines` when no other character would break there."""
    if _other_breaks(text):
        return LINE_BREAK.split(text)
    lines = text.splitlines()
    if not text or text.endswith(("\n", "\r")):
        lines.append("")
    return lines


class SourceText:
    """Text split into lines once. `ast` reports UTF-8 byte columns; findings use code
    points; the LSP speaks UTF-16. ASCII lines (almost all) skip the conversions."""

    __slots__ = ("text", "lines", "_offsets", "_stripped")

    def __init__(self, text: str) -> None:
        self.text = text
        self.lines = split_lines(text) or [""]
        if text.endswith(("\n", "\r")):
            self.lines.append("")
        self._offsets: list[int] | None = None
        # line → (without its break, ASCII?, UTF-8 checkpoints): computed once per line, so
        # many findings on one long line cost the line once, not once each
        self._stripped: dict[int, tuple[str, bool, _Utf8Index | None]] = {}

    # --- lines -------------------------------------------------------------------------
    def line(self, index: int) -> str:
        """Line `index` (0-based) without its line ending; '' past the end."""
        return self._line(index)[0]

    def _line(self, index: int) -> tuple[str, bool, _Utf8Index | None]:
        known = self._stripped.get(index)
        if known is None:
            text = self.lines[index].rstrip("\r\n") if 0 <= index < len(self.lines) else ""
            ascii_ = text.isascii()
            known = self._stripped[index] = (text, ascii_, None if ascii_ else _Utf8Index(text))
        return known

    @property
    def line_offsets(self) -> list[int]:
        if self._offsets is None:
            self._offsets = list(itertools.accumulate(map(len, self.lines[:-1]), initial=0)) if self.lines else []
        return self._offsets

    def offset(self, line: int, col: int) -> int:
        """Absolute code-point offset of (line, col), clamped to the text."""
        offsets = self.line_offsets
        if line >= len(offsets):
            return len(self.text)
        return min(offsets[line] + col, offsets[line] + len(self.line(line)))

    def position(self, offset: int) -> tuple[int, int]:
        offsets = self.line_offsets
        line = bisect.bisect_right(offsets, offset) - 1
        return line, offset - offsets[line]

    # --- columns -----------------------------------------------------------------------
    def col_from_bytes(self, line: int, byte_col: int) -> int:
        _text, ascii_, index = self._line(line)
        return byte_col if ascii_ or index is None else index.col(byte_col)

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


class _Utf8Index:
    """UTF-8 byte column → code-point column for one line, with a checkpoint every STEP
    characters, so each lookup decodes at most STEP characters' bytes."""

    STEP = 256
    __slots__ = ("data", "starts")

    def __init__(self, text: str) -> None:
        self.data = text.encode("utf-8", "surrogatepass")
        self.starts = [0]  # byte offset of character k * STEP
        for at in range(0, len(text) - self.STEP, self.STEP):
            self.starts.append(self.starts[-1] + len(text[at:at + self.STEP].encode("utf-8", "surrogatepass")))

    def col(self, byte_col: int) -> int:
        block = bisect.bisect_right(self.starts, byte_col) - 1
        part = self.data[self.starts[block]:byte_col]
        return block * self.STEP + len(part.decode("utf-8", errors="ignore"))


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
