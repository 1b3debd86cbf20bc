"""What the server analyses: an open text document, or a notebook whose code cells are
analysed together (so an import in cell 1 resolves in cell 3). Each is a `Subject`, with
the state of its analyses; its text, taken for one analysis, is a `Snapshot` (snapshot.py)."""

from __future__ import annotations

import asyncio
import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pygls.uris import to_fs_path
from pygls.workspace import Workspace

from ..engine.analyzer import Analysis, TextEdit
from ..engine.packaging import document_kind
from ..sources import MAX_BYTES
from .edits import compose
from .notebooks import join_cells
from .snapshot import View

if TYPE_CHECKING:
    from .diagnostics import Result


@dataclass(slots=True)
class Subject:
    uri: str
    notebook: bool = False
    # Analysis state, owned by the scheduler (event loop thread only).
    base: Analysis | None = None  # the last analysis, the starting point of the next
    edits: list[tuple[int, TextEdit | None]] = field(default_factory=list)  # (version, lines) since `base`
    result: Result | None = None  # of the newest analysis (maybe of an older version)
    timer: asyncio.TimerHandle | None = None
    running: bool = False
    last_change: float = 0.0
    waiters: list[asyncio.Future] = field(default_factory=list)
    published: dict[str, str] = field(default_factory=dict)  # uri → result id pushed to the client
    runs_stamp: int = 0  # bumped when a "Run on NPU" result arrives

    def note_edit(self, version: int, edit: TextEdit | None) -> None:
        self.edits.append((version, edit))

    def pending_edit(self, version: int) -> TextEdit | None:
        """The edits since `base` up to `version` as one, or None if any was not a line edit."""
        combined: TextEdit | None = None
        for seen, edit in self.edits:
            if seen > version:
                break
            if edit is None:
                return None
            combined = edit if combined is None else compose(combined, edit)
        return combined

    def settle(self, version: int, analysis: Analysis) -> None:
        self.base = analysis
        self.edits = [(v, e) for v, e in self.edits if v > version]


class Documents:
    """Open subjects by URI; cells are found through their notebook."""

    def __init__(self) -> None:
        self.subjects: dict[str, Subject] = {}

    def open(self, uri: str, notebook: bool = False) -> Subject:
        subject = self.subjects[uri] = Subject(uri, notebook)
        return subject

    def close(self, uri: str) -> Subject | None:
        return self.subjects.pop(uri, None)

    def find(self, workspace: Workspace, uri: str) -> Subject | None:
        """The subject that covers the client document `uri` (a text document or a cell)."""
        subject = self.subjects.get(uri)
        if subject is not None:
            return subject
        notebook = workspace.get_notebook_document(cell_uri=uri)
        return self.subjects.get(notebook.uri) if notebook is not None else None

    @staticmethod
    def version(workspace: Workspace, subject: Subject) -> int | None:
        if subject.notebook:
            notebook = workspace.get_notebook_document(notebook_uri=subject.uri)
            return notebook.version if notebook is not None else None
        document = workspace.text_documents.get(subject.uri)
        return document.version if document is not None else None

    @staticmethod
    def text_and_views(workspace: Workspace, subject: Subject) -> tuple[int, str, tuple[View, ...]] | None:
        if subject.notebook:
            notebook = workspace.get_notebook_document(notebook_uri=subject.uri)
            if notebook is None:
                return None
            text, cells = join_cells(notebook, workspace)
            return notebook.version, text, tuple(View(c.uri, c.first, c.count, c.version, c.tail) for c in cells)
        document = workspace.text_documents.get(subject.uri)
        if document is None:
            return None
        text = document.source
        return document.version or 0, text, (View(subject.uri, 0, sys.maxsize, document.version),)


# Language ids that make a document one of the engine's kinds whatever its name (`.bashrc`,
# a script without a suffix or a `#!`, `docker/cuda`); any other is read by its path (packaging.document_kind).
# A YAML or JSON document is a config (one only when its keys make it a framework's, config_files.py)
# unless its name makes it an environment.yml or a compose file.
LANGUAGE_KINDS = {"shellscript": "shell", "dockerfile": "dockerfile", "dockercompose": "compose", "yaml": "config",
                  "json": "config", "jsonc": "config"}


def language_kind(workspace: Workspace, uri: str) -> str | None:
    document = workspace.text_documents.get(uri)
    kind = LANGUAGE_KINDS.get(document.language_id or "") if document is not None else None
    if kind == "config":
        path = to_fs_path(uri)
        named = document_kind(path) if path else None
        return named if named in ("environment", "compose") else kind
    return kind


def subject_path(uri: str) -> str | None:
    return to_fs_path(uri)


def workspace_folders(workspace: Workspace) -> list[str]:
    """The paths of the workspace folders (the root when the client names none)."""
    folders = [to_fs_path(f.uri) for f in workspace.folders.values()] or [workspace.root_path]
    return [f for f in folders if f]


def too_large(text: str) -> str | None:
    """Why an open document (or a notebook's joined cells) is not analysed: over the limit
    `lsp-check` applies to files, in UTF-8 bytes as a file's size. None: it is analysed.
    Memory-cheap: a code point is at most 4 bytes, and `isascii` is a flag of the string."""
    if len(text) <= MAX_BYTES // 4:
        return None
    size = len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))
    if size <= MAX_BYTES:
        return None
    return f"too large to check ({size / 2**20:.1f} MiB; the limit is {MAX_BYTES / 2**20:.0f} MiB)"
