"""What lsp-check learns of a file: plain data, cheap to send between processes and to cache."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(slots=True)
class Record:
    """One finding as the CLI reports it: plain data, cheap to send between processes."""

    code: str
    message: str
    severity: int
    line: int  # 0-based, in the engine text
    col: int
    end_line: int
    end_col: int
    cell: str  # "cell 3" for notebooks
    cell_line: int  # 0-based line within the cell (or the file)
    source_line: str  # the line, or the part of a long line around the finding (excerpt())
    source_col: int  # where `col` falls in `source_line`
    fix_title: str = ""
    fix_applicability: str = ""  # safe | unsafe | display | ""
    edits: list = field(default_factory=list)  # [(line, col, end_line, end_col, text)]
    extra: dict = field(default_factory=dict)
    # [(path, cell, cell_line, line, col, end_line, end_col, message)]: path "" for this file, whose
    # lines and cells the numbers are of (engine.model.Related); another file's have no cell
    related: list = field(default_factory=list)

    def fields(self) -> tuple:
        """The fields in order, as `Record(*fields)` takes them (not copied, unlike
        dataclasses.astuple, which copies every edit and dict: the cache only marshals them)."""
        return tuple([getattr(self, name) for name in _RECORD_FIELDS])


_RECORD_FIELDS = Record.__slots__


@dataclass(slots=True)
class FileResult:
    path: str
    records: list[Record] = field(default_factory=list)
    error: str = ""  # the file could not be checked
    fixed: int = 0  # fixes applied (--fix)
    diff: str = ""  # --diff
    rule_errors: list[str] = field(default_factory=list)
    skipped_write: str = ""  # why a fix was not written
    lines: int = 0
    references: list | None = None  # API references (report), see references.api_references
    noqa_added: int = 0  # --add-noqa
    noqa_refused: list[str] = field(default_factory=list)  # findings --add-noqa could not suppress, and why
