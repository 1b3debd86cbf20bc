"""A notebook as one Python text: its code cells joined in order, each after a marker
line, with magics (`%pip`, `!ls`) made `pass` with the line in a comment
(source_codec.hide_magics); and the way back for fix-all."""

from __future__ import annotations

from dataclasses import dataclass

from lsprotocol import types
from pygls.workspace import Workspace

from ..source_codec import CELL_MARK, CELL_MARK_RE, hide_magics, show_magic
from ..engine.text import split_lines

# Python cells of any notebook type. (A selector without `notebook` is also valid LSP, but
# lsprotocol's converter cannot read it back, which breaks pygls-based clients.)
NOTEBOOK_SYNC = types.NotebookDocumentSyncOptions(
    notebook_selector=[types.NotebookDocumentFilterWithNotebook("*", cells=[types.NotebookCellLanguage("python")])],
)


@dataclass(frozen=True, slots=True)
class Cell:
    uri: str
    first: int  # 0-based line of the joined text where the cell's code starts
    count: int  # lines of the cell
    version: int | None
    tail: str | None  # the last line, when the code does not end with a line break


def join_cells(notebook: types.NotebookDocument, workspace: Workspace) -> tuple[str, list[Cell]]:
    parts: list[str] = []
    cells: list[Cell] = []
    line = 0
    for index, cell in enumerate(notebook.cells):
        if cell.kind != types.NotebookCellKind.Code:
            continue
        document = workspace.text_documents.get(cell.document)
        if document is None or document.language_id not in (None, "python"):
            continue
        code = document.source
        lines = hide_magics(code)
        if not lines:
            lines = ["\n"]
        elif not lines[-1].endswith(("\n", "\r")):
            lines[-1] += "\n"
        parts.append(CELL_MARK.format(index=index))
        line += 1
        tail = None if code.endswith(("\n", "\r")) else code.rpartition("\n")[2].rpartition("\r")[2]
        cells.append(Cell(cell.document, line, len(lines), document.version, tail))
        parts.extend(lines)
        line += len(lines)
    return "".join(parts), cells


def split_cells(text: str, cells: list[Cell]) -> dict[str, str]:
    """Cell URI → its code, from a joined (and fixed) text."""
    chunks: list[list[str]] = []
    for line in split_lines(text):
        if CELL_MARK_RE.match(line.rstrip("\r\n")):
            chunks.append([])
        elif chunks:
            chunks[-1].append(show_magic(line))
    out = {}
    for cell, lines in zip(cells, chunks):
        code = "".join(lines)
        out[cell.uri] = code if cell.tail is None else code.removesuffix("\n")
    return out
