"""The server's copy of each open document. pygls's `TextDocument` finds lines with
`str.splitlines()`, which also breaks at form feeds, U+2028 and others, so an incremental
change after an Emacs page break lands on the wrong line. Here lines break where the
client breaks them (`engine/text.py`), and each change records which lines it replaced
for the incremental analysis."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from urllib.parse import unquote

from lsprotocol import types
from pygls.workspace import TextDocument
from pygls.workspace import Workspace as PyglsWorkspace

from ..engine.analyzer import TextEdit
from ..engine.text import LINE_BREAK, SourceText, count_breaks, split_lines
from .documents import too_large
from .positions import from_units

logger = logging.getLogger(__name__)
SCAN_BLOCK = 1 << 20  # characters: what `_line_start` searches at a time


class Document(TextDocument):
    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._index: SourceText | None = None
        self.edits: list[TextEdit | None] = []  # since the last `take_edits`, None: whole text

    @property
    def index(self) -> SourceText:
        source = self.source
        if self._index is None or self._index.text is not source:
            self._index = SourceText(source)
        return self._index

    @property
    def lines(self) -> Sequence[str]:
        return tuple(split_lines(self.source))

    def take_edits(self) -> list[TextEdit | None]:
        edits, self.edits = self.edits, []
        return edits

    def offset_of(self, position: types.Position) -> tuple[int, int]:
        """(line, code-point offset) of a client position; a position past the end of its
        line or of the text means the end (LSP), a negative one the start."""
        if too_large(self.source) is not None:
            return self._scanned_offset(position)
        index = self.index
        line = max(position.line, 0)
        if line >= len(index.lines):
            return len(index.lines) - 1, len(index.text)
        col = from_units(index.line(line), max(position.character, 0), self._position_codec.encoding)
        return line, index.line_offsets[line] + col

    def _scanned_offset(self, position: types.Position) -> tuple[int, int]:
        """`offset_of` in a document over the size limit, which is not analysed: found by
        counting line breaks instead of in its line index (millions of short lines take
        some fifteen times the text in the index)."""
        text, line = self.source, max(position.line, 0)
        start = _line_start(text, line)
        if start is None:
            return count_breaks(text), len(text)
        end = LINE_BREAK.search(text, start)
        content = text[start:end.start() if end else len(text)]
        return line, start + from_units(content, max(position.character, 0), self._position_codec.encoding)

    def _apply_incremental_change(self, change: types.TextDocumentContentChangePartial) -> None:
        old = self.source
        (first, start), (last, end) = self.offset_of(change.range.start), self.offset_of(change.range.end)
        if end < start:
            (first, start), (last, end) = (last, end), (first, start)
        self._source = old[:start] + change.text + old[end:]
        self._index = None
        self.edits.append(TextEdit(first, last, _line_delta(old, start, end, change.text)))

    def _apply_full_change(self, change: types.TextDocumentContentChangeEvent) -> None:
        super()._apply_full_change(change)
        self._index = None
        self.edits.append(None)


def _line_start(text: str, line: int) -> int | None:
    """Where 0-based `line` of `text` starts (None: past the end), found a block at a time:
    the breaks of a block are counted without a list of them, and only the block that holds
    the line is searched."""
    at, seen = 0, 0
    while seen < line:
        if at >= len(text):
            return None
        end = min(at + SCAN_BLOCK, len(text))
        if text[end - 1:end + 1] == "\r\n":
            end += 1  # one break, not one in each block
        count = count_breaks(text, at, end)
        if seen + count >= line:
            for found in LINE_BREAK.finditer(text, at, end):
                seen += 1
                if seen == line:
                    return found.end()
        seen, at = seen + count, end
    return at


def _line_delta(old: str, start: int, end: int, text: str) -> int:
    """How many lines replacing old[start:end] with `text` adds, counted with one character
    of context on each side: "\\n" typed after a lone "\\r" (or "\\r" before a lone "\\n")
    makes one break of two, and deleting what stood between them likewise."""
    lo = max(start - 1, 0)
    added = 0
    last = ""  # counted part by part: joining them would copy a large paste once more
    for part in (old[lo:start], text, old[end:end + 1]):
        if part:
            added += count_breaks(part) - (last == "\r" and part[0] == "\n")
            last = part[-1]
    return added - count_breaks(old, lo, end + 1)


class Workspace(PyglsWorkspace):
    """pygls's workspace, whose text documents (and notebook cells) are `Document`s."""

    def _create_text_document(self, doc_uri: str, source: str | None = None, version: int | None = None,
                              language_id: str | None = None) -> TextDocument:
        return Document(doc_uri, source=source, version=version, language_id=language_id,
                        sync_kind=self._sync_kind, position_codec=self._position_codec)

    def update_text_document(self, text_doc: types.VersionedTextDocumentIdentifier,
                             change: types.TextDocumentContentChangeEvent) -> None:
        if unquote(text_doc.uri) not in self.text_documents:
            logger.warning("ignored a change to %s, which is not open", text_doc.uri)
            return
        super().update_text_document(text_doc, change)
