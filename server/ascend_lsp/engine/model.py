"""The values every adapter (LSP, CLI) consumes: findings, fixes, edits, ranges."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field


class Severity(enum.IntEnum):
    # Ordered like LSP DiagnosticSeverity so adapters can pass the value through.
    ERROR = 1
    WARNING = 2
    INFO = 3
    HINT = 4

    @classmethod
    def parse(cls, text: str) -> "Severity":
        try:
            return cls[text.strip().upper()]
        except KeyError:
            raise ValueError(f"unknown severity {text!r} (error, warning, info, hint)") from None


class Applicability(enum.Enum):
    SAFE = "safe"  # meaning kept: applied by --fix and fix-all
    UNSAFE = "unsafe"  # needs review: only with --unsafe-fixes
    DISPLAY = "display"  # shown as advice, never applied


@dataclass(frozen=True, slots=True, order=True)
class Range:
    """0-based lines; columns in code points of the line (not bytes, not UTF-16)."""

    start_line: int
    start_col: int
    end_line: int
    end_col: int


@dataclass(frozen=True, slots=True)
class Edit:
    range: Range
    new_text: str


FIX_STYLES = ("npu", "portable")


@dataclass(frozen=True, slots=True)
class Fix:
    title: str
    edits: tuple[Edit, ...]
    applicability: Applicability
    # "npu" (torch_npu's names) or "portable" (torch.accelerator's) where a finding's fixes
    # come in both styles (rules/portable_fixes.py); "" where there is one way to fix it
    style: str = ""


@dataclass(frozen=True, slots=True)
class Related:
    """A place a finding's reader needs beside its own: CUDA code a reported guard holds, or
    where a fact from another file comes from. `path` is that file's, "" for the finding's own
    text. In another file only the line counts: the adapters read no other file to place a
    column, and show the line's start."""

    range: Range
    message: str
    path: str = ""


@dataclass(slots=True)
class Finding:
    code: str
    range: Range
    message: str
    severity: Severity
    fixes: tuple[Fix, ...] = ()
    deprecated: bool = False
    origin: str = ""  # the table (and version) the fact came from, when table-driven
    extra: dict = field(default_factory=dict)  # rule-specific facts an adapter may show (hover)
    related: tuple[Related, ...] = ()  # in position order

    @property
    def fix(self) -> Fix | None:
        return self.fixes[0] if self.fixes else None
