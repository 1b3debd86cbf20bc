"""Checking (and fixing) many files on every core, with a cache for unchanged files."""

from __future__ import annotations

import difflib
import os
from dataclasses import dataclass
from typing import Callable, Iterable

from ..analysis import analyze, fix_text
from ..engine.analyzer import tables_for
from ..engine.config import Settings
from ..engine.model import Finding, Related
from ..engine.text import SourceText
from ..knowledge.files import TableError
from ..project import ProjectContext, Projects
from ..rules import RULE_SET
from ..safe_write import WriteRefused, write_file
from .cache import Cache, settings_key
from .noqa_writer import with_noqa
from .references import api_references
from .results import FileResult, Record
from ..source_codec import Source, encode, read_source
from ..sources import SourceError, read_regular

EXCERPT = 120  # characters of a long line shown either side of a finding
CHUNK = 8


@dataclass(frozen=True, slots=True)
class Options:
    fix: bool = False
    unsafe_fixes: bool = False
    diff: bool = False
    add_noqa: bool = False
    references: bool = False  # also collect API references (the report needs them)
    trees: tuple[str, ...] = ()  # the real paths of the checked folders: a fixed link's target must be inside one

    @property
    def writes(self) -> bool:
        return self.fix or self.diff or self.add_noqa


def excerpt(text: SourceText, line: int, col: int) -> tuple[str, int]:
    """Line `line`, or the part of it within EXCERPT characters of `col` when the line is
    longer (marked with …), and where `col` falls in it. Bounded per finding (no copy of
    the whole line), so thousands of findings on one huge line stay linear."""
    if line >= len(text.lines):
        return "", 0
    full = text.lines[line]
    length = len(full) - (2 if full.endswith("\r\n") else 1 if full.endswith(("\r", "\n")) else 0)
    if length <= 2 * EXCERPT:
        return full[:length], col
    start = text.line_offsets[line]
    lo, hi = max(0, col - EXCERPT), min(length, col + EXCERPT)
    head, tail = "…" if lo else "", "…" if hi < length else ""
    return head + text.text[start + lo:start + hi] + tail, col - lo + len(head)


def records_of(source: Source, findings: list[Finding], index: SourceText | None = None) -> list[Record]:
    """The findings as records, with their lines' excerpts from `index` (the analysis's)
    when it is of the text."""
    out: list[Record] = []
    if not findings:  # most files: no line index to build
        return out
    text = index if index is not None and index.text is source.text else SourceText(source.text)
    for f in findings:
        cell, cell_line = source.location(f.range.start_line)
        fix = f.fix
        shown, shown_col = excerpt(text, f.range.start_line, f.range.start_col)
        out.append(Record(
            f.code, f.message, int(f.severity), f.range.start_line, f.range.start_col, f.range.end_line,
            f.range.end_col, cell, cell_line, shown, shown_col,
            fix.title if fix else "", fix.applicability.value if fix and fix.edits else "",
            [(e.range.start_line, e.range.start_col, e.range.end_line, e.range.end_col, e.new_text)
             for e in fix.edits] if fix else [],
            {k: v for k, v in f.extra.items() if isinstance(v, (str, int, float, bool, type(None)))},
            [_related(source, r) for r in f.related],
        ))
    return out


def _related(source: Source, related: Related) -> tuple:
    r = related.range
    cell, cell_line = ("", r.start_line) if related.path else source.location(r.start_line)
    return related.path, cell, cell_line, r.start_line, r.start_col, r.end_line, r.end_col, related.message


def write_atomically(source: Source, data: bytes, trees: tuple[str, ...] = ()) -> str:
    """Write `data` over `source.path` (a symlink's target, keeping the link) unless the file
    changed since it was read. Returns "" on success, else why it was not written."""
    try:
        raw, mtime_ns = read_regular(source.path, len(source.raw))
        if mtime_ns != source.mtime_ns or raw != source.raw:
            return "changed since it was read; not written"
        write_file(source.path, data, follow_links=True, within=trees)
    except SourceError:
        return "changed since it was read; not written"
    except WriteRefused as exc:
        return str(exc)
    return ""


def check_file(path: str, settings: Settings, options: Options, project: ProjectContext | None = None) -> FileResult:
    result = FileResult(path)
    index: SourceText | None = None
    try:
        source = read_source(path)
    except SourceError as exc:
        result.error = str(exc)
        return result
    try:
        if options.fix or options.diff:
            fixed = fix_text(source.text, settings, path, unsafe=options.unsafe_fixes, project=project)
            analysis = fixed.analysis  # what is left once the fixes are in
            if options.diff:  # only show what --fix would write
                result.fixed = fixed.applied
                result.rule_errors = analysis.errors
                result.diff = "".join(difflib.unified_diff(
                    source.text.splitlines(keepends=True), fixed.text.splitlines(keepends=True),
                    fromfile=path, tofile=path))
                return result
            if fixed.applied:
                result.skipped_write = write_atomically(source, encode(source, fixed.text), options.trees)
                if result.skipped_write:
                    analysis = analyze(source.text, settings, path, project=project)
                else:
                    result.fixed = fixed.applied
                    source.text = fixed.text
        else:
            index = SourceText(source.text)
            analysis = analyze(source.text, settings, path, references=options.references, index=index,
                               project=project)
        if options.references:
            result.references = api_references(analysis, tables_for(settings, RULE_SET))
    except TableError as exc:
        result.error = str(exc)
        return result
    except RecursionError:
        result.error = "too deeply nested to analyse"
        return result
    result.records = records_of(source, analysis.findings, index)
    result.rule_errors = analysis.errors
    result.lines = source.text.count("\n") + (not source.text.endswith("\n") and bool(source.text))
    if options.add_noqa and result.records:
        _add_noqa(source, result, options.trees, analysis.no_comment)
    return result


def _add_noqa(source: Source, result: FileResult, trees: tuple[str, ...], no_comment: frozenset[int] | None) -> None:
    """Suppress the file's findings with noqa comments; keep only the ones still firing."""
    targets = sorted({(r.line, r.code) for r in result.records})
    text, refused = with_noqa(source.text, targets, no_comment)
    if text != source.text:
        result.skipped_write = write_atomically(source, encode(source, text), trees)
        if result.skipped_write:
            return
    left = {(line, code) for line, code, _ in refused}
    result.noqa_added = len(targets) - len(left)
    result.noqa_refused = [f"{_line_label(source, line)}: {code} not suppressed: {why}" for line, code, why in refused]
    result.records = [r for r in result.records if (r.line, r.code) in left]


def _line_label(source: Source, line: int) -> str:
    cell, cell_line = source.location(line)
    return f"{cell}:{cell_line + 1}" if cell else str(line + 1)


# The run's projects, by number: a worker gets them once, when it starts (_share_projects), and
# each chunk only their numbers; a project's facts (its flags: every file's names) are too large
# to send with every chunk of eight files.
_PROJECTS: list[ProjectContext | None] = []


def _share_projects(projects: list[ProjectContext | None]) -> None:
    _PROJECTS[:] = projects


def _check_chunk(items: list[tuple[str, Settings, int]], options: Options) -> list[FileResult]:
    return [check_file(path, settings, options, _PROJECTS[project]) for path, settings, project in items]


def run_checks(items: list[tuple[str, Settings]], options: Options, cache: Cache | None,
               jobs: int | None = None, progress: Callable[[int], None] | None = None) -> list[FileResult]:
    """Check every (path, settings); files unchanged since the cached run are not read.
    `progress(n)` is called as each batch of `n` files is done."""
    use_cache = cache is not None and not options.writes
    # The projects as they are now (their operators scanned afresh), one per root. A result
    # depends on the settings and on the project's operators (NPU308): two projects with
    # equal settings have keys of their own.
    projects = Projects(fixed=True)
    keys: dict[tuple[Settings, ProjectContext | None], str] = {}
    found: dict[tuple[str, Settings], ProjectContext | None] = {}  # a folder's project, found once

    def project_of(path: str, settings: Settings) -> ProjectContext | None:
        folder = os.path.dirname(path)
        if (folder, settings) not in found:
            found[folder, settings] = projects.for_path(path, settings)
        return found[folder, settings]

    results: dict[str, FileResult] = {}
    todo = []
    for path, settings in items:
        project = project_of(path, settings)
        if use_cache:
            key = keys.get((settings, project)) or keys.setdefault((settings, project), settings_key(settings, project, cache))
            hit = cache.get(path, key, options.references)
            if hit is not None:
                results[path] = hit
                continue
        todo.append((path, settings, project))
    if progress is not None and len(results):
        progress(len(results))
    # Fail fast, once, on tables that cannot load, rather than once per file.
    # And scan the project's operators, pins, flags and calls here, once, not in every worker (they go along).
    for settings, project in {(s, p) for _, s, p in todo}:
        if settings.target == "torch_npu":
            tables_for(settings, RULE_SET)
            if project is not None:
                project.ops_digest(settings)
                project.pins_digest()
                project.python_digest()
    jobs = jobs or os.cpu_count() or 1
    shared = list({id(project): project for _, _, project in todo}.values())
    number = {id(project): n for n, project in enumerate(shared)}
    numbered = [(path, settings, number[id(project)]) for path, settings, project in todo]
    chunks = [numbered[i:i + CHUNK] for i in range(0, len(numbered), CHUNK)]
    if len(todo) < 4 or jobs == 1:
        _share_projects(shared)
        batches = (_check_chunk(chunk, options) for chunk in chunks)
        done = _collect(batches, progress)
    else:
        from concurrent.futures import ProcessPoolExecutor  # imported only when there are files to check

        with ProcessPoolExecutor(max_workers=min(jobs, len(chunks)), initializer=_share_projects,
                                 initargs=(shared,)) as pool:
            done = _collect(pool.map(_check_chunk, chunks, [options] * len(chunks)), progress)
    for (path, settings, project), result in zip(todo, done):
        results[path] = result
        if use_cache:
            cache.put(result, keys[settings, project])
    if use_cache:
        cache.save()
    return [results[path] for path, _ in items]


def _collect(batches: Iterable[list[FileResult]], progress: Callable[[int], None] | None) -> list[FileResult]:
    done = []
    for batch in batches:
        done.extend(batch)
        if progress is not None:
            progress(len(batch))
    return done
