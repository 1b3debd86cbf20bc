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
from ..engine.text import LINE_BREAK, SourceText, split_lines
from .positions import from_units

logger = logging.getLogger(__name__)


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
        index = self.index
        line = max(position.line, 0)
        if line >= len(index.lines):
            return len(index.lines) - 1, len(index.text)
        col = from_units(index.line(line), max(position.character, 0), self._position_codec.encoding)
        return line, index.line_offsets[line] + col

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


def _line_delta(old: str, start: int, end: int, text: str) -> int:
    """How many lines replacing old[start:end] with `text` adds, counted with one character
    of context on each side: "\\n" typed after a lone "\\r" (or "\\r" before a lone "\\n")
    makes one break of two, and deleting what stood between them likewise."""
    before, after = old[max(start - 1, 0):start], old[end:end + 1]
    return len(LINE_BREAK.findall(before + text + after)) - len(LINE_BREAK.findall(old[max(start - 1, 0):end + 1]))


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
