"""What one analysis reads: the text of an open document or a notebook's joined cells, taken
on the event loop with everything else the analysis needs, and where each client document
(the document itself, or each cell) lies in that text."""

from __future__ import annotations

import bisect
from dataclasses import dataclass

from ..engine.analyzer import Analysis, TextEdit
from ..engine.config import Settings
from ..project import ProjectContext


@dataclass(frozen=True, slots=True)
class View:
    """A client document inside an analysed text: lines [first, first + count)."""

    uri: str
    first: int
    count: int
    version: int | None
    tail: str | None = None  # a cell's last line, when its code has no final line break


@dataclass(frozen=True, slots=True)
class Snapshot:
    """Everything one analysis needs, taken on the event loop so the worker thread
    reads nothing that changes under it."""

    version: int
    generation: int  # of the settings
    text: str
    path: str | None
    settings: Settings
    views: tuple[View, ...]
    previous: Analysis | None
    edit: TextEdit | None  # lines changed since `previous`; None: analyse everything
    encoding: str
    runs: tuple = ()  # RunMarks of this document ("Run on NPU" results)
    runs_stamp: int = 0
    project: ProjectContext | None = None  # the file's project (project.py)
    kind: str | None = None  # what the editor's language id says the document is ("shell"); None: its path decides
    related: bool = False  # the client shows a diagnostic's related information (else the message says it)

    def view_at(self, line: int) -> View | None:
        index = bisect.bisect_right([v.first for v in self.views], line) - 1
        if index < 0:
            return None
        view = self.views[index]
        return view if line < view.first + view.count else None
