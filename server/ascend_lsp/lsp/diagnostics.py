"""Findings → LSP diagnostics, with each fix and the noqa edit precomputed into
`Diagnostic.data` (so a code action needs no analysis); pull diagnostics with result ids,
push as the fallback, and workspace diagnostics for open and on-disk files."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from dataclasses import dataclass

from lsprotocol import types
from pygls.uris import from_fs_path

from ..engine.analyzer import Analysis
from ..engine.config import Settings
from ..engine.model import Applicability, Finding, Related
from ..engine.noqa import add_noqa
from ..rules import RULE_SET, RULES
from ..rules.pages import rule_url
from ..engine.text import line_texts
from .edits import changed_span
from .positions import Lines, range_json, to_units
from .run_marks import run_diagnostics
from .snapshot import Snapshot, View

SOURCE = "ascend-lsp"


@dataclass(slots=True)
class Report:
    """The diagnostics of one client document, and their result id (a digest of the
    content, so an edit that changes no finding answers "unchanged")."""

    items: list[types.Diagnostic]
    result_id: str
    # (range, code, message) → the item: a code action's diagnostic must be one of them, and
    # its fixes are the item's, made from the text this report is of
    by_key: dict[tuple, types.Diagnostic]


@dataclass(slots=True)
class Result:
    """An analysis of one snapshot and the diagnostics of each of its client documents."""

    version: int
    generation: int
    analysis: Analysis
    snapshot: Snapshot
    reports: dict[str, Report]  # client document URI → its diagnostics
    unchecked: str | None = None  # why the text was not analysed (too large)


def convert(analysis: Analysis, snapshot: Snapshot) -> dict[str, Report]:
    """One report per view. Runs in the analysis thread."""
    lines = Lines(line_texts(snapshot.text), snapshot.encoding)
    per_view: dict[str, list[tuple[types.Diagnostic, dict]]] = {v.uri: [] for v in snapshot.views}
    no_comment = analysis.no_comment or frozenset()
    for finding in analysis.findings:
        view = snapshot.view_at(finding.range.start_line)
        if view is not None:
            noqa = RULE_SET.suppressible(finding.code) and finding.range.start_line not in no_comment
            per_view[view.uri].append(_diagnostic(finding, view, snapshot, lines, noqa))
    if snapshot.runs and len(snapshot.views) == 1:
        per_view[snapshot.views[0].uri].extend(
            (d, {"range": range_json(d.range), "code": d.code, "message": d.message, "severity": int(d.severity)})
            for d in run_diagnostics(snapshot, lines))
    return {uri: _report(pairs) for uri, pairs in per_view.items()}


def unchecked_reports(snapshot: Snapshot, reason: str) -> dict[str, Report]:
    """The reports of a text that is not analysed: one diagnostic at the start of its first
    client document, saying why (other cells: none)."""
    message = f"ascend-lsp: not checked: {reason}"
    start = types.Position(0, 0)
    diagnostic = types.Diagnostic(types.Range(start, start), message, types.DiagnosticSeverity.Warning, source=SOURCE)
    per_view: dict[str, list[tuple[types.Diagnostic, dict]]] = {v.uri: [] for v in snapshot.views}
    per_view[snapshot.views[0].uri].append((diagnostic, {"message": message}))
    return {uri: _report(pairs) for uri, pairs in per_view.items()}


def _report(pairs: list[tuple[types.Diagnostic, dict]]) -> Report:
    digest = hashlib.blake2b(json.dumps([plain for _, plain in pairs], sort_keys=True).encode(), digest_size=12)
    by_key: dict[tuple, types.Diagnostic] = {}
    for diagnostic, _ in pairs:
        by_key.setdefault(diagnostic_key(diagnostic), diagnostic)
    return Report([d for d, _ in pairs], digest.hexdigest(), by_key)


def diagnostic_key(diagnostic: types.Diagnostic) -> tuple:
    r = diagnostic.range
    return (r.start.line, r.start.character, r.end.line, r.end.character, diagnostic.code, diagnostic.message)


def _diagnostic(finding: Finding, view: View, snapshot: Snapshot, lines: Lines,
                noqa: bool) -> tuple[types.Diagnostic, dict]:
    """`noqa`: whether to offer the `# noqa` edit (a rule that allows it, on a line that takes a comment)."""
    rng = lines.range(finding.range, view.first)
    data: dict = {"fixes": [fix for fix in (_fix_data(f, view, snapshot, lines) for f in finding.fixes) if fix]}
    if noqa:
        data["noqa"] = _noqa_data(finding, view, lines)
    rule = RULES.get(finding.code)
    related = [placed for placed in (_related(r, snapshot, lines) for r in finding.related) if placed]
    message = finding.message
    if related and not snapshot.related:
        message += "".join(f"\n{r.message} ({_line_of(r.location, view.uri)})" for r in related)
    diagnostic = types.Diagnostic(
        range=rng,
        message=message,
        severity=types.DiagnosticSeverity(int(finding.severity)),
        code=finding.code,
        code_description=types.CodeDescription(href=rule_url(rule.code, snapshot.settings.docs_url)) if rule else None,
        source=SOURCE,
        tags=[types.DiagnosticTag.Deprecated] if finding.deprecated else None,
        related_information=related if related and snapshot.related else None,
        data=data,
    )
    plain = {"range": range_json(rng), "code": finding.code, "message": message,
             "severity": int(finding.severity), "deprecated": finding.deprecated, "data": data,
             "related": [[r.location.uri, range_json(r.location.range), r.message] for r in related]}
    return diagnostic, plain


def _related(related: Related, snapshot: Snapshot, lines: Lines) -> types.DiagnosticRelatedInformation | None:
    """A related location: in this text (the client document, or the cell, it lies in), or
    the start of a line of another file (engine.model.Related); None outside every document."""
    rng = related.range
    if related.path:
        start = types.Position(rng.start_line, 0)
        location = types.Location(from_fs_path(related.path) or related.path, types.Range(start, start))
    else:
        view = snapshot.view_at(rng.start_line)
        if view is None:
            return None
        location = types.Location(view.uri, lines.range(rng, view.first))
    return types.DiagnosticRelatedInformation(location, related.message)


def _line_of(location: types.Location, uri: str) -> str:
    """Where a related location is, for a message: `line 4`, or `file.py:4` in another document."""
    line = location.range.start.line + 1
    return f"line {line}" if location.uri == uri else f"{os.path.basename(location.uri)}:{line}"


def _fix_data(fix, view: View, snapshot: Snapshot, lines: Lines) -> dict | None:
    """A fix as plain JSON: edits with client ranges, each naming its document when it
    is not the diagnostic's own (an import added to another notebook cell)."""
    if fix.applicability is Applicability.DISPLAY or not fix.edits:
        return None  # advice only: the message already says it
    edits = []
    for edit in fix.edits:
        placed = _place(edit, snapshot, lines)
        if placed is None:
            return None  # the edit leaves the client document (spans notebook cells)
        target, entry = placed
        if target.uri != view.uri:
            entry["uri"] = target.uri
        edits.append(entry)
    return {"title": fix.title, "safe": fix.applicability is Applicability.SAFE, "edits": edits, "style": fix.style}


def _place(edit, snapshot: Snapshot, lines: Lines) -> tuple[View, dict] | None:
    rng = edit.range
    target = snapshot.view_at(rng.start_line)
    if target is not None:
        if rng.end_line >= target.first + target.count:
            return None
        return target, {"range": range_json(lines.range(rng, target.first)), "newText": edit.new_text}
    # An insertion just below a cell (an import after the last import of cell 1) is an
    # append to that cell.
    before = snapshot.view_at(rng.start_line - 1)
    if (before is None or (rng.start_col, rng.end_line, rng.end_col) != (0, rng.start_line, 0)
            or rng.start_line != before.first + before.count):
        return None
    if before.tail is None:
        end = types.Position(before.count, 0)
        return before, {"range": range_json(types.Range(end, end)), "newText": edit.new_text}
    end = types.Position(before.count - 1, to_units(before.tail, len(before.tail), snapshot.encoding))
    return before, {"range": range_json(types.Range(end, end)), "newText": "\n" + edit.new_text.removesuffix("\n")}


def _noqa_data(finding: Finding, view: View, lines: Lines) -> dict:
    line = finding.range.start_line
    old = lines.line(line)
    start, end, new = changed_span(old, add_noqa(old, finding.code))
    rng = types.Range(lines.position(line, start, view.first), lines.position(line, end, view.first))
    return {"range": range_json(rng), "newText": new}


# --- workspace files on disk -----------------------------------------------------------
def _everywhere(settings: Settings) -> Callable[[str], Settings]:
    """The workspace folder's settings for each of its files (the store is read on the loop only)."""
    return lambda _path: settings


def workspace_files(folders: dict[str, Settings]) -> list[str]:
    """The files of the workspace folders (folder → its settings) `lsp-check` would check,
    but notebooks (which the client sends as notebook documents): .py, packaging files and
    launch scripts."""
    from ..discovery import discover

    found: list[str] = []
    for folder, settings in folders.items():
        if os.path.isdir(folder):
            found.extend(p for p in discover([folder], _everywhere(settings)) if not p.endswith(".ipynb"))
    return found
