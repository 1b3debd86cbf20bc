"""Engine ranges (code points) ⇄ LSP ranges (the negotiated position encoding)."""

from __future__ import annotations

from lsprotocol import types

from ..engine.model import Range
from ..engine.text import col_from_utf16, utf16_col

UTF8, UTF16, UTF32 = types.PositionEncodingKind.Utf8, types.PositionEncodingKind.Utf16, types.PositionEncodingKind.Utf32


def to_units(line: str, col: int, encoding: str) -> int:
    """Code-point column → client units on `line`."""
    col = min(col, len(line))
    if encoding == UTF16:
        return utf16_col(line, col)
    if encoding == UTF8 and not line.isascii():
        return len(line[:col].encode("utf-8", "surrogatepass"))
    return col


def from_units(line: str, units: int, encoding: str) -> int:
    """Client units on `line` → code-point column (clamped to the line)."""
    if encoding == UTF16:
        return min(col_from_utf16(line, units), len(line))
    if encoding == UTF8 and not line.isascii():
        return len(line.encode("utf-8", "surrogatepass")[:units].decode("utf-8", "ignore"))
    return min(units, len(line))


class Lines:
    """The lines of one analysed text, and how to place a range of it in a client document
    that starts `first` lines into it (a notebook cell), in the client's units."""

    __slots__ = ("encoding", "lines")

    def __init__(self, lines: list[str], encoding: str) -> None:
        self.lines = lines  # without line endings
        self.encoding = encoding

    def line(self, index: int) -> str:
        return self.lines[index] if 0 <= index < len(self.lines) else ""

    def position(self, line: int, col: int, first: int = 0) -> types.Position:
        return types.Position(line - first, to_units(self.line(line), col, self.encoding))

    def range(self, rng: Range, first: int = 0) -> types.Range:
        return types.Range(self.position(rng.start_line, rng.start_col, first),
                           self.position(rng.end_line, rng.end_col, first))


def range_json(rng: types.Range) -> dict:
    """A range as it travels in `Diagnostic.data` (plain JSON, read back by `range_from_json`)."""
    return {"start": {"line": rng.start.line, "character": rng.start.character},
            "end": {"line": rng.end.line, "character": rng.end.character}}


def range_from_json(data: dict) -> types.Range:
    return types.Range(types.Position(**data["start"]), types.Position(**data["end"]))
