"""What "Run on NPU" leaves in the editor: the mark of each function's last result per
document, shown as a RUN001 diagnostic on the function's name (RUN002 on the lines that
construct the first divergent module and the first overflowing one) and as a table in the
hover; and the runner pool that produces them (runs.py is the feature: the lenses and the commands)."""

from __future__ import annotations

import re
import sys
import threading
from dataclasses import dataclass

from lsprotocol import types

from ..engine.model import Severity
from ..rules.pages import rule_url
from .positions import Lines
from .snapshot import Snapshot

CODE = "RUN001"
LAYER_CODE = "RUN002"


@dataclass(frozen=True, slots=True)
class RunMark:
    """The last result of running one function of a document."""

    function: str
    severity: Severity
    summary: str  # the diagnostic's message
    markdown: str  # the hover
    data: dict  # the diagnostic's data: status, target, verdict per output
    layers: tuple[LayerMark, ...] = ()  # with "find the layer": where the first divergence and overflow are built


@dataclass(frozen=True, slots=True)
class LayerMark:
    """The first divergent (or first overflowing) module of a run, on the line of this document
    that constructs it."""

    line: int  # 0-based
    severity: Severity
    summary: str
    data: dict  # module, class, verdict, decided by, call line


def def_name_at(line: str, function: str) -> tuple[int, int] | None:
    """Columns of `function`'s name on its `def` line, if this is that line."""
    found = re.match(rf"[ \t]*(?:async[ \t]+)?def[ \t]+({re.escape(function)})\b", line)
    return (found.start(1), found.end(1)) if found else None


def run_diagnostics(snapshot: Snapshot, lines: Lines) -> list[types.Diagnostic]:
    """RUN001 on each function that was run and still exists (found by its `def` line)."""
    out = []
    for mark in snapshot.runs:
        for index, line in enumerate(lines.lines):
            if "def" in line and (cols := def_name_at(line, mark.function)):
                out.append(types.Diagnostic(
                    range=types.Range(lines.position(index, cols[0]), lines.position(index, cols[1])),
                    message=mark.summary, severity=types.DiagnosticSeverity(int(mark.severity)), code=CODE,
                    code_description=types.CodeDescription(href=rule_url(CODE, snapshot.settings.docs_url)), source="ascend-lsp",
                    data={"run": mark.data}))
                break
        for layer in mark.layers:
            if layer.line >= len(lines.lines):
                continue
            text = lines.lines[layer.line]
            start = len(text) - len(text.lstrip())
            out.append(types.Diagnostic(
                range=types.Range(lines.position(layer.line, start), lines.position(layer.line, len(text.rstrip()))),
                message=layer.summary, severity=types.DiagnosticSeverity(int(layer.severity)), code=LAYER_CODE,
                code_description=types.CodeDescription(href=rule_url(LAYER_CODE, snapshot.settings.docs_url)),
                source="ascend-lsp", data={"layer": layer.data}))
    return out


def layer_hover(marks: dict[str, RunMark], line: int) -> str | None:
    """The per-layer table, on a line where a run's first divergence (or overflow) is constructed."""
    return next((mark.markdown for mark in marks.values() if any(layer.line == line for layer in mark.layers)), None)


class Runs:
    """The runner pool (started on the first run) and the marks of each document."""

    def __init__(self) -> None:
        self.marks: dict[str, dict[str, RunMark]] = {}
        self._pool = None
        self._lock = threading.Lock()

    @property
    def pool(self):
        with self._lock:
            if self._pool is None:
                from ..runner import RunnerPool

                self._pool = RunnerPool(default_interpreter=sys.executable)
            return self._pool

    def close(self) -> None:
        if self._pool is not None:
            self._pool.close()
