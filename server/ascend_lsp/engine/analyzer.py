"""Text in, findings out: one parse, all rules in one pass per top-level statement.

`analyze(text, settings, previous=..., edit=...)` re-walks only the top-level statements
an edit touches and shifts the findings of the others, as long as the edit leaves the
imports alone and the file parses; otherwise it analyses the whole text.
"""

from __future__ import annotations

import ast
import hashlib
import os
from dataclasses import dataclass, field, replace

from .checker import Checker
from .config import Settings
from .model import Finding, Range, Severity
from .noqa import noqa_map, suppressed
from .packaging import document_kind
from .tables import Tables, load_tables
from .text import SourceText, split_lines
from .walk import CLASS, VALUE, ModuleContext, Scope, class_header, class_member, class_members, module_context, walk

MAX_RECOVERIES = 25
BLOCK_CONTINUATIONS = ("else", "elif", "except", "finally", ")", "]", "}")


@dataclass(slots=True)
class Span:
    """A top-level statement's lines (0-based, inclusive) and its findings before noqa.
    A class keeps its header and each body statement apart, so an edit inside one method
    re-walks that method only."""

    start: int
    end: int
    findings: list[Finding]
    binds: bool  # contains a module-level import: editing it changes every statement
    facts: dict[str, Range] = field(default_factory=dict)  # for the "module" handlers
    header: "Span | None" = None  # a class: its decorators and bases
    children: "list[Span] | None" = None  # a class: its body statements
    member: ast.Constant | None = None  # a class body statement: the string it assigns (walk.class_member)


@dataclass(slots=True)
class Analysis:
    findings: list[Finding]  # after selection, noqa and per-file ignores, sorted
    errors: list[str] = field(default_factory=list)  # rules that crashed (for the log)
    spans: list[Span] = field(default_factory=list)
    module: ModuleContext | None = None
    syntax_errors: int = 0
    settings: Settings | None = None
    tables: Tables | None = None  # those the findings came from (a changed extra table is a new object)
    digest: str = ""  # of the text, for caches
    walked: int = 0  # top-level statements walked for this result (fewer when incremental)
    # With analyze(references=True): every name or chain resolved through the imports, as
    # (range, qualified name, called or a base class, only a type: a hint or isinstance()).
    references: list[tuple[Range, str, bool, bool]] | None = None


@dataclass(frozen=True, slots=True)
class TextEdit:
    """Which lines of the previous text an edit replaced: [first, last] (0-based,
    inclusive) of the old text, and how many lines the new text gained (may be < 0)."""

    first: int
    last: int
    delta: int


def tables_for(settings: Settings) -> Tables:
    extra = tuple((p, os.path.getmtime(p) if os.path.exists(p) else 0.0) for p in settings.extra_mappings)
    return load_tables(settings.torch_npu_version, settings.mindspore_version, extra)


def _digest(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


# --- parsing with recovery -----------------------------------------------------------------
def _starts_block(line: str) -> bool:
    return bool(line) and not line[0].isspace() and line[0] != "#" and not line.startswith(BLOCK_CONTINUATIONS)


def parse(text: str) -> tuple[ast.Module, list[tuple[int, int, str]]]:
    """The module's AST and its syntax errors (0-based line, column, message). A broken
    top-level block is blanked out and the rest parsed again, so the statements before
    and after it are still checked."""
    lines = split_lines(text)
    errors: list[tuple[int, int, str]] = []
    for _ in range(MAX_RECOVERIES):
        try:
            return ast.parse("".join(lines)), errors
        except SyntaxError as exc:
            line = min(max((exc.lineno or 1) - 1, 0), max(len(lines) - 1, 0))
            errors.append((line, max((exc.offset or 1) - 1, 0), exc.msg))
        except (ValueError, RecursionError, MemoryError) as exc:  # null bytes, absurd nesting
            errors.append((0, 0, str(exc) or type(exc).__name__))
            return ast.Module(body=[], type_ignores=[]), errors
        if not lines:
            break
        start = line
        while start > 0 and not _starts_block(lines[start]):
            start -= 1
        end = line + 1
        while end < len(lines) and not _starts_block(lines[end]):
            end += 1
        for index in range(start, end):
            lines[index] = "\n"
    return ast.Module(body=[], type_ignores=[]), errors


def _span_start(stmt: ast.stmt) -> int:
    decorators = getattr(stmt, "decorator_list", None)
    return (decorators[0].lineno if decorators else stmt.lineno) - 1


def _binds(stmt: ast.stmt) -> bool:
    if type(stmt) in (ast.Import, ast.ImportFrom):
        return True
    if type(stmt) in (ast.If, ast.Try, ast.With, ast.For, ast.While) or type(stmt).__name__ == "TryStar":
        return any(type(n) in (ast.Import, ast.ImportFrom) for n in ast.walk(stmt)
                   if not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)))
    return False


# --- the analysis --------------------------------------------------------------------------
def _walk(checker: Checker, items: list, start: int, end: int, binds: bool) -> Span:
    before = len(checker.findings)
    checker.facts = {}
    checker.run(walk(items, checker.module.scope))
    return Span(start, end, checker.findings[before:], binds, checker.facts)


def _statement(checker: Checker, stmt: ast.stmt, scope: Scope) -> Span:
    span = _walk(checker, [(stmt, scope, VALUE, None)], _span_start(stmt), stmt.end_lineno - 1, _binds(stmt))
    if scope.kind == CLASS:
        span.member = class_member(stmt)
    return span


def _class(header: Span, children: list[Span]) -> Span:
    parts = [header, *children]
    facts: dict[str, Range] = {}
    for part in parts:
        for fact, where in part.facts.items():
            facts.setdefault(fact, where)
    return Span(header.start, header.end, [f for part in parts for f in part.findings], False, facts, header,
                children)


def _check(checker: Checker, stmts: list[ast.stmt]) -> list[Span]:
    spans = []
    module_scope = checker.module.scope
    for stmt in stmts:
        if type(stmt) is not ast.ClassDef:
            spans.append(_statement(checker, stmt, module_scope))
            continue
        header = _walk(checker, class_header(stmt, module_scope), _span_start(stmt), stmt.end_lineno - 1, False)
        scope = Scope(module_scope, CLASS, class_members(stmt.body))
        spans.append(_class(header, [_statement(checker, child, scope) for child in stmt.body]))
    return spans


def _module_findings(checker: Checker, spans: list[Span]) -> list[Finding]:
    """Findings about the whole file, from the facts its statements noted."""
    if not checker.handlers["module"]:
        return []
    facts: dict[str, Range] = {}
    for span in spans:
        for fact, where in span.facts.items():
            facts.setdefault(fact, where)
    before = len(checker.findings)
    checker.run_module(facts)
    return checker.findings[before:]


def _finish(source: SourceText, settings: Settings, tables: Tables | None, path: str | None, spans: list[Span],
            extra: list[Finding], errors: list[str], module: ModuleContext | None, syntax_errors: int,
            walked: int) -> Analysis:
    noqa = noqa_map(source)
    ignored = settings.ignored_in(path)
    findings = [f for span in spans for f in span.findings]
    findings.extend(extra)
    kept = [f for f in findings
            if not suppressed(f, noqa) and not (ignored and f.code != "E999" and f.code.startswith(ignored))]
    kept.sort(key=lambda f: (f.range, f.code))
    return Analysis(kept, errors, spans, module, syntax_errors, settings, tables, _digest(source.text), walked)


def analyze(text: str, settings: Settings | None = None, path: str | None = None,
            previous: Analysis | None = None, edit: TextEdit | None = None, references: bool = False) -> Analysis:
    settings = settings or Settings()
    kind = document_kind(path)
    if kind is not None:  # a packaging file (DESIGN: those are documents too)
        from .documents import analyze_packaging

        return analyze_packaging(text, settings, path, kind)
    source = SourceText(text)
    tables = tables_for(settings)
    if previous is not None and edit is not None and not references:
        incremental = _reanalyze(source, settings, tables, path, previous, edit)
        if incremental is not None:
            return incremental
    tree, syntax = parse(text)
    module = module_context(tree)
    checker = Checker(source, module, settings, tables, path)
    if references:
        checker.references = []
    spans = _check(checker, tree.body)
    extra = [_syntax_finding(source, line, col, msg, settings) for line, col, msg in syntax]
    extra += _module_findings(checker, spans)
    analysis = _finish(source, settings, tables, path, spans, extra, checker.errors, module, len(syntax), len(spans))
    if references:
        analysis.references = [(source.range_of(ref.node), ref.qualname, ref.call is not None, ref.type_only)
                               for ref in checker.references]
    return analysis


def _syntax_finding(source: SourceText, line: int, col: int, msg: str, settings: Settings) -> Finding:
    from ..rules import RULES

    text = source.line(line)
    col = min(col, len(text))
    end = len(text) if col >= len(text.rstrip()) else col + 1
    return Finding("E999", Range(line, col, line, max(end, col)), RULES["E999"].message.format(name=msg),
                   settings.severity_for("E999", Severity.ERROR))


def _shift(findings: list[Finding], delta: int, first: int) -> list[Finding]:
    """Findings of a statement below the edit, moved by `delta` lines; fix edits above
    the edit (import insertions) stay where they are."""
    if not delta:
        return findings

    def move(rng: Range) -> Range:
        return _move(rng, delta, first)

    return [
        Finding(f.code, move(f.range), f.message, f.severity,
                tuple(replace(fix, edits=tuple(replace(e, range=move(e.range)) for e in fix.edits)) for fix in f.fixes),
                f.deprecated, f.origin, f.extra)
        for f in findings
    ]


def _move(rng: Range, delta: int, first: int) -> Range:
    if rng.start_line < first:
        return rng
    return Range(rng.start_line + delta, rng.start_col, rng.end_line + delta, rng.end_col)


def _reanalyze(source: SourceText, settings: Settings, tables: Tables | None, path: str | None,
               previous: Analysis, edit: TextEdit) -> Analysis | None:
    """Re-walk only the statements the edit touched; None when that is not sound."""
    if previous.syntax_errors or previous.module is None or previous.settings != settings \
            or previous.tables is not tables:
        return None
    module = previous.module
    if edit.first < module.import_line:
        return None  # the edit is among the imports
    spans = previous.spans
    touched = [i for i, s in enumerate(spans) if s.end >= edit.first and s.start <= edit.last]
    if any(spans[i].binds for i in touched):
        return None
    lo = min([edit.first] + [spans[i].start for i in touched])
    hi = max([edit.last] + [spans[i].end for i in touched])
    # Extend to the blank/comment gap boundaries so the region starts and ends between statements.
    before = [s for s in spans if s.end < lo]
    after = [s for s in spans if s.start > hi]
    region_start = before[-1].end + 1 if before else 0
    region_end = (after[0].start + edit.delta - 1) if after else len(source.lines) - 1
    checker = Checker(source, module, settings, tables, path)
    if len(touched) == 1 and spans[touched[0]].children is not None:
        middle = _reanalyze_member(checker, spans[touched[0]], edit)
        if middle is not None:
            return _assemble(checker, source, settings, path, module, before, middle, after, edit)
    # Blank lines before the region keep ast's line numbers right (cheaper than shifting them).
    chunk = "\n" * region_start + "".join(source.lines[region_start:region_end + 1])
    try:
        tree = ast.parse(chunk)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if any(_binds(stmt) for stmt in tree.body):
        return None
    middle = _check(checker, tree.body)
    return _assemble(checker, source, settings, path, module, before, middle, after, edit)


def _reanalyze_member(checker: Checker, cls: Span, edit: TextEdit) -> list[Span] | None:
    """Re-walk the one statement of a class body that the edit lies within, or None."""
    inside = [c for c in cls.children if c.start <= edit.first and edit.last <= c.end]
    if len(inside) != 1 or any(c.binds for c in cls.children):
        return None
    child = inside[0]
    end = child.end + edit.delta
    lines = checker.source.lines
    chunk = "\n" * (child.start - 1) + "class _:\n" + "".join(lines[child.start:end + 1])
    try:
        tree = ast.parse(chunk)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    body = tree.body[0].body if tree.body else []
    if len(body) != 1 or _span_start(body[0]) != child.start or body[0].end_lineno - 1 != end:
        return None
    old, now = child.member, class_member(body[0])
    if (old and old.value) != (now and now.value):
        return None  # the class's string constants changed, and they are read together
    members = tuple(now if c is child else c.member for c in cls.children if c.member is not None)
    new = _statement(checker, body[0], Scope(checker.module.scope, CLASS, members))
    index = cls.children.index(child)
    later = [_moved(c, edit) for c in cls.children[index + 1:]]
    header = Span(cls.header.start, cls.header.end + edit.delta, cls.header.findings, False, cls.header.facts)
    return [_class(header, cls.children[:index] + [new] + later)]


def _moved(span: Span, edit: TextEdit) -> Span:
    return Span(span.start + edit.delta, span.end + edit.delta, _shift(span.findings, edit.delta, edit.first),
                span.binds, {fact: _move(where, edit.delta, edit.first) for fact, where in span.facts.items()},
                _moved(span.header, edit) if span.header else None,
                [_moved(c, edit) for c in span.children] if span.children is not None else None, span.member)


def _assemble(checker: Checker, source: SourceText, settings: Settings, path: str | None, module: ModuleContext,
              before: list[Span], middle: list[Span], after: list[Span], edit: TextEdit) -> Analysis:
    all_spans = before + middle + [_moved(s, edit) for s in after]
    extra = _module_findings(checker, all_spans)
    return _finish(source, settings, checker.tables, path, all_spans, extra, checker.errors, module, 0, len(middle))
