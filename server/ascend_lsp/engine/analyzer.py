"""Text in, findings out: one parse, all rules in one pass per top-level statement.

`analyze_with(text, settings, previous=..., edit=..., rules=...)` re-walks only the top-level statements
(or the class member) an edit touches and shifts the findings of the others, as long as the
edit leaves the imports alone and no syntax error's report can depend on lines it did not
re-parse; otherwise it analyses the whole text.
"""

from __future__ import annotations

import ast
import gc
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from .checker import Checker
from .config import Settings
from .model import Finding, Range, Severity
from .noqa import noqa_map, suppressed
from .registry import RuleSet
from .packaging import document_kind
from ..knowledge.api_tables import Tables, load_tables
from .packaging_analysis import packaging_findings
from .text import SourceText, split_lines, starts_block
from .backend_members import (backend_methods, backend_named, cuda_classes, device_method, method_reasons,
                              opt_in_class)
from .guards import GuardFacts, backend_class, class_branches, held_tests, may_test_backend, torch_target
from .walk import (CLASS, MODULE, VALUE, ModuleContext, ModuleImports, Scope, class_header, class_member, class_members,
                   context_of, module_context, walk)

if TYPE_CHECKING:
    from ..project import ProjectContext

MAX_RECOVERIES = 25
NOTHING: tuple[Finding, ...] = ()
NO_FACTS: Mapping[str, Range] = MappingProxyType({})


@dataclass(slots=True)
class Span:
    """A top-level statement's lines (0-based, inclusive) and its findings before noqa.
    A class keeps its header and each body statement apart, so an edit inside one method
    re-walks that method only."""

    start: int
    end: int
    findings: Sequence[Finding]  # read only: NOTHING is shared
    binds: bool  # contains a module-level import: editing it changes every statement
    facts: Mapping[str, Range] = field(default_factory=dict)  # for the "module" handlers; read only
    header: "Span | None" = None  # a class: its decorators and bases
    children: "list[Span] | None" = None  # a class: its body statements
    member: ast.Constant | None = None  # a class body statement: the string it assigns (walk.class_member)
    broken: Broken | None = None  # lines recovery blanked out; `findings` are their syntax errors
    # A class body import: the class scope's imports after it, for re-walking a later member.
    class_imports: dict[str, str] | None = None
    backend: str | None = None  # a class of one backend: "cuda", "npu" or "other" (guards.backend_class)
    # a class with a method named for a device (engine/backend_members.py): what one member's
    # findings say depends on those methods
    per_backend: bool = False
    # a class beside its NPU variant or for a CUDA-only library (backend_members.py): the reason
    # each member's CUDA names carry (Checker.cuda_member), from its header and the whole text
    beside: str = ""
    device_method: bool = False  # a class body statement: a method named for a device (backend_members.device_method)
    owner: tuple[str, int] | None = None  # a class: its name and the 0-based line of its `class`


@dataclass(slots=True)
class Analysis:
    findings: list[Finding]  # after selection, noqa and per-file ignores, sorted
    errors: list[str] = field(default_factory=list)  # rules that crashed (for the log)
    spans: list[Span] = field(default_factory=list)
    module: ModuleContext | None = None
    syntax_errors: int = 0
    settings: Settings | None = None
    tables: Tables | None = None  # those the findings came from (a changed extra table is a new object)
    walked: int = 0  # top-level statements walked for this result (fewer when incremental)
    # With analyze_with(references=True): every name or chain resolved through the imports, as
    # (range, qualified name, called or a base class, only a type: a hint or isinstance()).
    references: list[tuple[Range, str, bool, bool]] | None = None
    # Lines a trailing noqa comment would change (a launch script's: shell_script.py);
    # None: the text is Python's, whose tokens say (cli/noqa_writer.py).
    no_comment: frozenset[int] | None = None
    text_facts: dict = field(default_factory=dict)  # what the rules read of the whole text (Checker.text_fact)


@dataclass(frozen=True, slots=True)
class TextEdit:
    """Which lines of the previous text an edit replaced: [first, last] (0-based,
    inclusive) of the old text, and how many lines the new text gained (may be < 0)."""

    first: int
    last: int
    delta: int


def tables_for(settings: Settings, rules: RuleSet) -> Tables:
    """The tables for these settings; the user's extra tables may name only the rules that
    tables drive."""
    extra = tuple((p, os.path.getmtime(p) if os.path.exists(p) else 0.0) for p in settings.extra_mappings)
    return load_tables(settings.torch_npu_version, settings.mindspore_version, extra, rules.table_driven)


# --- parsing with recovery -----------------------------------------------------------------
@dataclass(slots=True)
class Broken:
    """Lines [start, end) that recovery blanked out, and the syntax errors (0-based line,
    column, message) that made it. A `member` is one statement of a top-level class body.
    `local`: a parse of these lines alone finds the same errors, so an edit elsewhere
    cannot change them (an open bracket above can make a line an error that is not).
    `lone`: the same while no other block is broken (an unmatched closing bracket; a local
    block is lone too)."""

    start: int
    end: int
    errors: list[tuple[int, int, str]]
    member: bool
    local: bool
    lone: bool


# Errors whose report depends on the rest of the file: Python tokenizes all of it to look
# for these, so one elsewhere can take their place (a triple-quoted string swallows it).
UNSTABLE = ("triple-quoted", "EOF", "unexpected indent", "unindent does not match")
# An unmatched closing bracket is reported where it stands when the rest of the file parses.
# Beside another broken block it may not be: an open bracket there matches it, or its report
# takes the place of that block's and an error after it in its own block is reported instead.
UNMATCHED = "unmatched"
CLASS_LINE = re.compile(r"class\b")
AFTER_HEADER = re.compile(r"expected an indented block after .* on line (\d+)$")


def parse(text: str) -> tuple[ast.Module, list[Broken]]:
    """The module's AST and the blocks recovery blanked out. A broken statement of a
    top-level class body (a method being typed), or else the broken top-level block, is
    blanked and the rest parsed again, so the statements around it are still checked."""
    if "\0" not in text:
        try:
            return ast.parse(text), []  # almost every file: no copy of its lines
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            pass  # parsed again below, where the error is located and recovered from
    lines = split_lines(text)
    blocks: list[Broken] = []
    if "\0" in text:
        # Python refuses the whole text for a NUL byte and names no place: report the first
        # one where it is, and parse the rest with spaces in their place.
        line = next(index for index, content in enumerate(lines) if "\0" in content)
        error = (line, lines[line].index("\0"), "source contains a NUL byte (a binary file?)")
        _add(blocks, Broken(line, line + 1, [error], False, True, True))
        lines = [content.replace("\0", " ") for content in lines]
    for _ in range(MAX_RECOVERIES):
        try:
            return ast.parse("".join(lines)), blocks
        except SyntaxError as exc:
            error = _error(lines, exc)
        except (ValueError, RecursionError, MemoryError) as exc:  # null bytes, absurd nesting
            _add(blocks, Broken(0, max(len(lines), 1), [(0, 0, str(exc) or type(exc).__name__)], False, False,
                                False))
            return ast.Module(body=[], type_ignores=[]), blocks
        if not lines:
            break
        line = error[0]
        # Blanking a member did not help (its stand-in `pass` is wrong there): the whole block.
        narrow = not any(b.member and b.start <= line < b.end for b in blocks)
        start, end, indent = _block(lines, line, narrow)
        lone = _alone(lines, start, end, indent) == error and not any(kind in error[2] for kind in UNSTABLE) \
            and not _past_the_code(lines, line)
        local = lone and UNMATCHED not in error[2]
        for index in range(start, end):
            lines[index] = _blank(lines[index])
        if indent is not None:  # keep the class body non-empty
            lines[start] = indent + "pass" + lines[start][1:]
        _add(blocks, Broken(start, end, [error], indent is not None, local, lone))
    return ast.Module(body=[], type_ignores=[]), blocks


def _past_the_code(lines: list[str], line: int) -> bool:
    """Whether no code is left from `line` on: Python reported the end of the text, which in
    a region of a file is not the end (a decorator whose statement recovery blanked out
    decorates the next statement in the whole text)."""
    return all(not rest.strip() or rest.lstrip().startswith("#") for rest in lines[line:])


def _alone(lines: list[str], start: int, end: int, indent: str | None) -> tuple[int, int, str] | None:
    """The first syntax error of lines [start, end) parsed alone (a member inside a class)."""
    head = "\n" * start if indent is None else "\n" * (start - 1) + "class _:\n"
    chunk = split_lines(head + "".join(lines[start:end]))
    try:
        ast.parse("".join(chunk))
    except SyntaxError as exc:
        return _error(chunk, exc)
    except (ValueError, RecursionError, MemoryError):
        return None
    return None


def _error(lines: list[str], exc: SyntaxError) -> tuple[int, int, str]:
    line = min(max((exc.lineno or 1) - 1, 0), max(len(lines) - 1, 0))
    col = max((exc.offset or 1) - 1, 0)
    header = AFTER_HEADER.search(exc.msg or "")
    if header and 0 < int(header.group(1)) <= len(lines):
        # Reported on the line after the header, which may be the next statement: the
        # header is what is broken.
        line = int(header.group(1)) - 1
        col = len(lines[line]) - len(lines[line].lstrip())
    return line, col, exc.msg


def _block(lines: list[str], line: int, narrow: bool) -> tuple[int, int, str | None]:
    """The lines to blank for an error on `line`: [start, end), and the member's indentation
    when it is one statement of a top-level class body."""
    start = line
    while start > 0 and not starts_block(lines[start]):
        start -= 1
    end = line + 1
    while end < len(lines) and not starts_block(lines[end]):
        end += 1
    if narrow and line > start and CLASS_LINE.match(lines[start]):
        indent = next((body[:len(body) - len(body.lstrip())] for body in lines[start + 1:end]
                       if body.strip() and not body.lstrip().startswith("#")), "")
        if indent:
            first = line
            while first > start and not _starts_member(lines[first], indent):
                first -= 1
            last = line + 1
            while last < end and not _starts_member(lines[last], indent):
                last += 1
            if first > start:
                return first, last, indent
    return start, end, None


def _starts_member(line: str, indent: str) -> bool:
    return line.startswith(indent) and starts_block(line[len(indent):])


def _add(blocks: list[Broken], block: Broken) -> None:
    """Add `block`, merged with those it overlaps; kept in line order."""
    for other in [b for b in blocks if b.start < block.end and block.start < b.end]:
        blocks.remove(other)
        block = Broken(min(block.start, other.start), max(block.end, other.end), other.errors + block.errors,
                       block.member and other.member, block.local and other.local, block.lone and other.lone)
    blocks.append(block)
    blocks.sort(key=lambda b: b.start)


def _blank(line: str) -> str:
    """A blank line with the same line break. The space keeps a "\n" apart from a lone
    "\r" ending the line before, which would otherwise make them one break."""
    ending = line[len(line.rstrip("\r\n")):]
    return " " + ending if ending else ""


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
    if checker.facts:  # an empty one is not kept (below): the next statement may use it
        checker.facts = {}
    if checker.backend_tests is None:
        lowered = checker.source.text.lower()
        checker.backend_tests = may_test_backend(lowered) and GuardFacts(
            checker.text_fact("held-tests", _held_tests), torch_target(checker.settings.torch_npu_version, checker.project),
            "trt" in lowered or "tensorrt" in lowered)
    checker.run(walk(items, checker.module.scope, checker.backend_tests, checker.attribute_names))
    # Most statements find nothing: they share one empty list and dict (a span per
    # statement is kept, 1.7 million of them in 10 MB of `x = 1` lines).
    findings = checker.findings[before:] if len(checker.findings) > before else NOTHING
    return Span(start, end, findings, binds, checker.facts or NO_FACTS)


def _statement(checker: Checker, stmt: ast.stmt, scope: Scope, owner: tuple[str, int] | None = None) -> Span:
    """`owner`: the module class whose body `stmt` stands in (its name, its `class`'s 0-based line)."""
    if type(stmt) in (ast.FunctionDef, ast.AsyncFunctionDef) and (scope.kind == MODULE or owner is not None):
        body = checker.range(stmt.body[0])  # type: ignore[attr-defined]  # not its decorators and defaults, run at import
        # a method's body runs where its class is made: the calls of the class are read (call_sites.py)
        name, line = owner if owner is not None else (stmt.name, stmt.lineno - 1)  # type: ignore[attr-defined]
        checker.top_function = (name, line, (body.start_line, body.start_col))
    try:
        span = _walk(checker, [(stmt, scope, VALUE, None)], _span_start(stmt), stmt.end_lineno - 1, _binds(stmt))
    finally:
        checker.top_function = None
    if scope.kind == CLASS:
        span.member = class_member(stmt)
    return span


def _class(header: Span, children: list[Span], backend: str | None, per_backend: bool,
           owner: tuple[str, int] | None, beside: str) -> Span:
    parts = [header, *children]
    facts: dict[str, Range] = {}
    for part in parts:
        for fact, where in part.facts.items():
            facts.setdefault(fact, where)
    return Span(header.start, header.end, [f for part in parts for f in part.findings], False, facts, header,
                children, backend=backend, per_backend=per_backend, owner=owner, beside=beside)


def _held_tests(checker: Checker) -> dict[str, str]:
    """The module's globals and instance attributes that hold a CUDA test (guards.held_tests): a fact of the whole text."""
    return held_tests(checker.source.text)


def _cuda_classes(checker: Checker) -> dict[str, str]:
    """The module's classes beside their NPU variants (backend_members.cuda_classes): a fact of the whole text."""
    return cuda_classes(checker.source.text)


def _check(checker: Checker, stmts: list[ast.stmt], blocks: list[Broken]) -> list[Span]:
    """Spans of the statements, and of the blocks recovery blanked out, in line order."""
    spans = [_broken(checker, b) for b in blocks if not b.member]
    module_scope = checker.module.scope
    for stmt in stmts:
        if type(stmt) is not ast.ClassDef:
            spans.append(_statement(checker, stmt, module_scope))
            continue
        first, last = _span_start(stmt), stmt.end_lineno - 1
        inside = [b for b in blocks if b.member and first < b.start <= last]
        body = [child for child in stmt.body if not any(b.start <= child.lineno - 1 < b.end for b in inside)] \
            if inside else stmt.body
        end = max([last] + [b.end - 1 for b in inside])
        backend = backend_class(stmt)  # a backend of a per-backend scheme says so itself
        classes = checker.text_fact("cuda-classes", _cuda_classes)
        beside_npu = checker.cuda_member = "" if backend else (classes.get(stmt.name, "")
                                                               or opt_in_class(stmt))
        header = _walk(checker, class_header(stmt, module_scope), first, end, False)
        scope = Scope(module_scope, CLASS, class_members(body))
        checker.enclosing = class_branches(backend, body)
        methods = method_reasons(stmt.name, body)
        children = []
        owner = (stmt.name, stmt.lineno - 1)
        for child in body:
            checker.cuda_member = beside_npu or methods.get(id(child), "")
            children.append(_member(checker, child, scope, owner))
            children[-1].device_method = device_method(child)
        checker.enclosing, checker.cuda_member = [], ""
        children += [_broken(checker, b) for b in inside]
        if inside:  # else in the body's order already
            children.sort(key=lambda span: span.start)
        spans.append(_class(header, children, backend, bool(backend_methods(body)), owner, beside_npu))
    if blocks:  # else in the module's order already
        spans.sort(key=lambda span: span.start)
    return spans


def _member(checker: Checker, stmt: ast.stmt, scope: Scope, owner: tuple[str, int]) -> Span:
    span = _statement(checker, stmt, scope, owner)
    if span.binds:
        span.class_imports = dict(scope.imports)
    return span


def _broken(checker: Checker, block: Broken) -> Span:
    findings = [_syntax_finding(checker.source, line, col, msg, checker.settings, checker.rules) for line, col, msg in block.errors]
    return Span(block.start, block.end - 1, findings, False, broken=block)


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
            extra: list[Finding], errors: list[str], module: ModuleContext | None, walked: int,
            rules: RuleSet) -> Analysis:
    noqa = noqa_map(source)
    ignored = settings.ignored_in(path)
    findings = [f for span in spans for f in span.findings]
    findings.extend(extra)
    kept = [f for f in findings
            if not suppressed(f, noqa, rules) and not (ignored and f.code.startswith(ignored)
                                                      and rules.suppressible(f.code))]
    kept.sort(key=lambda f: (f.range, f.code))
    syntax_errors = sum(len(b.errors) for b in _blocks(spans))
    return Analysis(kept, errors, spans, module, syntax_errors, settings, tables, walked)


def _blocks(spans: list[Span]) -> list[Broken]:
    """The blanked-out blocks among the spans and their class members."""
    return [s.broken for span in spans for s in [span, *(span.children or ())] if s.broken is not None]


def analyze_with(text: str, settings: Settings | None = None, path: str | None = None,
            previous: Analysis | None = None, edit: TextEdit | None = None, references: bool = False, *,
            rules: RuleSet, index: SourceText | None = None, project: ProjectContext | None = None,
            kind: str | None = None) -> Analysis:
    """`index`: the text's SourceText, if the caller has one to use afterwards (its lines are
    split once). `project`: the file's project (handlers read it as `checker.project`). `kind`:
    the document's kind when the caller knows it (an editor's language id: "shell"); else the
    path and the first line decide (packaging.document_kind)."""
    # An AST has no reference cycles, but building one triggers the cyclic collector over
    # and over (a third of the time of a 1 MiB file). Another thread may have paused it
    # already; only the one that paused it resumes it.
    paused = gc.isenabled()
    gc.disable()
    try:
        return _analyze(text, settings, path, previous, edit, references, rules, index, project, kind)
    finally:
        if paused:
            gc.enable()


def _analyze(text: str, settings: Settings | None, path: str | None, previous: Analysis | None,
             edit: TextEdit | None, references: bool, rules: RuleSet, index: SourceText | None,
             project: ProjectContext | None, kind: str | None) -> Analysis:
    settings = settings or Settings()
    kind = kind or document_kind(path, text)
    source = index if index is not None and index.text is text else SourceText(text)
    tables = tables_for(settings, rules)
    if kind is not None:  # a packaging file or a launch script (DESIGN: those are documents too)
        findings, errors, no_comment = packaging_findings(source, settings, tables, path, kind, rules, project)
        span = Span(0, max(len(source.lines) - 1, 0), findings, False)
        analysis = _finish(source, settings, tables, path, [span], [], errors, None, 1, rules)
        analysis.references = []  # no Python API is named in a packaging file
        analysis.no_comment = no_comment
        return analysis
    if previous is not None and edit is not None and not references:
        incremental = _reanalyze(source, settings, tables, path, previous, edit, rules, project)
        if incremental is not None:
            return incremental
    refs: list[tuple[Range, str, bool, bool]] | None = [] if references else None
    checked = _check_pieces(source, settings, tables, path, rules, refs, project) \
        if len(source.lines) > PIECE_LINES else None
    if checked is None:
        tree, blocks = parse(text)
        module = module_context(tree)
        checker = Checker(source, module, settings, tables, path, rules, project)
        spans = _check_and_note(checker, tree.body, blocks, refs)
    else:
        module, checker, spans = checked
    extra = _module_findings(checker, spans)
    analysis = _finish(source, settings, tables, path, spans, extra, checker.errors, module, len(spans), rules)
    analysis.references = refs
    analysis.text_facts = checker.text_facts
    return analysis


def _check_and_note(checker: Checker, stmts: list[ast.stmt], blocks: list[Broken],
                    refs: list[tuple[Range, str, bool, bool]] | None) -> list[Span]:
    """`_check`, adding the names it resolved to `refs` (when given) as ranges: a piece's
    AST is not kept for them."""
    if refs is not None:
        checker.references = []
    spans = _check(checker, stmts, blocks)
    if refs is not None:
        refs.extend((checker.source.range_of(ref.node), ref.qualname, ref.call is not None, ref.type_only)
                    for ref in checker.references)
    return spans


# A long text is parsed and walked a piece at a time, so that its whole AST is never held:
# Python's `ast` takes about 2.4 KB a statement, 4.3 GB for 10 MB of `x = 1` lines. A piece
# is PIECE_LINES lines or more (top-level statements), and there are about MAX_PIECES at
# most: each is parsed after blank lines that keep its line numbers, which cost ~20 ns each.
PIECE_LINES = 20_000
MAX_PIECES = 32
MERGES = 3  # a piece that does not parse alone is parsed with the next, up to this many times


def _cuts(lines: list[str]) -> list[int]:
    """Lines where the text may be cut into pieces, with 0 and the end: each starts a
    top-level statement by its first character (a cut inside a string or a bracket makes
    a piece that does not parse alone)."""
    size = max(PIECE_LINES, len(lines) // MAX_PIECES)
    cuts, at = [0], size
    while at < len(lines):
        if starts_block(lines[at]) and not lines[at - 1].startswith("@"):
            cuts.append(at)
            at += size
        else:
            at += 1
    return cuts + [len(lines)]


def _parsed(start: int, lines: list[str]) -> list[ast.stmt] | None:
    """The statements of `lines`, the text's lines from line `start` on, or None when they
    do not parse alone."""
    try:
        return ast.parse("\n" * start + "".join(lines)).body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _check_pieces(source: SourceText, settings: Settings, tables: Tables | None, path: str | None, rules: RuleSet,
                  refs: list | None, project: ProjectContext | None) -> tuple[ModuleContext, Checker, list[Span]] | None:
    """The module context and the spans of a long text, parsed a piece at a time: first
    the pieces that name `import`, for their imports (they bind in every piece), then each
    piece to walk it. Every piece parses alone, so each cut lies between statements (the
    first piece starts the module and ends where a statement ends, and so on). None when
    the pieces do not parse (a syntax error, or a long string across a cut): the text is
    then parsed whole, with recovery."""
    lines = source.lines
    cuts = _cuts(lines)
    if len(cuts) == 2 or "\0" in source.text:
        return None
    pieces: list[tuple[int, int]] = []
    parts = []
    at = 0
    while at < len(cuts) - 1:
        end = at + 1
        if at and not any("import" in line for line in lines[cuts[at]:cuts[end]]):
            pieces.append((cuts[at], cuts[end]))  # binds nothing: parsed once, below
            at = end
            continue
        body = _parsed(cuts[at], lines[cuts[at]:cuts[end]])
        while body is None and end < min(at + MERGES, len(cuts) - 1):
            end += 1
            body = _parsed(cuts[at], lines[cuts[at]:cuts[end]])
        if body is None:
            return None
        parts.append(ModuleImports.of(body, first=at == 0))
        pieces.append((cuts[at], cuts[end]))
        at = end
    checker = Checker(source, context_of(parts), settings, tables, path, rules, project)
    spans: list[Span] = []
    for start, end in pieces:
        body = _parsed(start, lines[start:end])
        if body is None:  # a piece without imports, cut inside a string: the whole text then
            if refs:
                refs.clear()
            return None
        spans.extend(_check_and_note(checker, body, [], refs))
    return checker.module, checker, spans


def _syntax_finding(source: SourceText, line: int, col: int, msg: str, settings: Settings,
                    rules: Mapping[str, Any]) -> Finding:
    text = source.line(line)
    col = min(col, len(text))
    end = len(text) if col >= len(text.rstrip()) else col + 1
    return Finding("E999", Range(line, col, line, max(end, col)), rules["E999"].message.format(name=msg),
                   settings.severity_for("E999", Severity.ERROR))


def _shift(findings: Sequence[Finding], delta: int, first: int) -> Sequence[Finding]:
    """Findings of a statement below the edit, moved by `delta` lines; fix edits above
    the edit (import insertions) stay where they are."""
    if not delta:
        return findings

    def move(rng: Range) -> Range:
        return _move(rng, delta, first)

    return [
        Finding(f.code, move(f.range), _renumbered(f.message, delta) if f.code == "E999" else f.message, f.severity,
                tuple(replace(fix, edits=tuple(replace(e, range=move(e.range)) for e in fix.edits)) for fix in f.fixes),
                f.deprecated, f.origin, f.extra,
                tuple(r if r.path else replace(r, range=move(r.range)) for r in f.related))
        for f in findings
    ]


LINE_NUMBER = re.compile(r"(on line |at line )(\d+)")


def _renumbered(message: str, delta: int) -> str:
    """A syntax error message that names a line ("... after 'for' statement on line 24") of
    a block that moved."""
    return LINE_NUMBER.sub(lambda m: f"{m.group(1)}{int(m.group(2)) + delta}", message)


def _move(rng: Range, delta: int, first: int) -> Range:
    if rng.start_line < first:
        return rng
    return Range(rng.start_line + delta, rng.start_col, rng.end_line + delta, rng.end_col)


def _reanalyze(source: SourceText, settings: Settings, tables: Tables | None, path: str | None,
               previous: Analysis, edit: TextEdit, rules: RuleSet, project: ProjectContext | None) -> Analysis | None:
    """Re-walk only the statements the edit touched, recovering from syntax errors among
    them as a full analysis would; None when that is not sound."""
    if previous.module is None or previous.settings != settings or previous.tables is not tables:
        return None
    if not _stable(_blocks(previous.spans)):
        return None  # an error elsewhere may depend on the edited lines
    if _tangled(previous.spans) or any(_tangled(s.children) for s in previous.spans if s.children):
        return None  # recovery blanked lines inside a statement it then parsed (a header split in two)
    module = previous.module
    if edit.first <= module.import_line:
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
    checker = Checker(source, module, settings, tables, path, rules, project)
    if checker.test_file:
        return None  # its top level decides the severity in every test (engine/test_suites.py)
    if any(checker.text_fact(key, read) != value for key, (read, value) in previous.text_facts.items()):
        return None  # the findings kept from the previous text were made with another fact
    if len(touched) == 1 and spans[touched[0]].children is not None:
        middle = _reanalyze_member(checker, spans[touched[0]], edit, previous.syntax_errors)
        if middle is not None:
            return _assemble(checker, source, settings, path, module, before, middle, after, edit)  # None: full
    if _ends_in_a_decorator(source.lines, region_start, region_end, ""):
        return None
    if all(s.broken is not None for s in before):
        return None  # the module's first statement: a string there is its docstring (ModuleImports.of)
    # Blank lines before the region keep ast's line numbers right (cheaper than shifting them).
    chunk = "\n" * region_start + "".join(source.lines[region_start:region_end + 1])
    tree, blocks = parse(chunk)
    if not _recovered_alike(source.lines, blocks, region_start, region_end, previous.syntax_errors):
        return None
    if any(_binds(stmt) for stmt in tree.body):
        return None
    middle = _check(checker, tree.body, blocks)
    return _assemble(checker, source, settings, path, module, before, middle, after, edit)


def _reanalyze_member(checker: Checker, cls: Span, edit: TextEdit, errors: int) -> list[Span] | None:
    """Re-walk the one statement of a class body that the edit lies within, or None."""
    inside = [c for c in cls.children if c.start <= edit.first and edit.last <= c.end]
    if len(inside) != 1 or inside[0].binds or inside[0].device_method:
        return None  # (a method named for a device: its class's other members read it)
    child = inside[0]
    index = cls.children.index(child)
    # What the class body's imports before it bound (methods do not see them; decorators
    # and default values do).
    imports = next((c.class_imports for c in reversed(cls.children[:index]) if c.class_imports is not None), {})
    end = child.end + edit.delta
    lines = checker.source.lines
    if _ends_in_a_decorator(lines, child.start, end, _indentation(lines[child.start])):
        return None
    chunk = "\n" * (child.start - 1) + "class _:\n" + "".join(lines[child.start:end + 1])
    tree, blocks = parse(chunk)
    if len(tree.body) != 1 or type(tree.body[0]) is not ast.ClassDef:
        return None  # the edit made a top-level statement of its own
    body = tree.body[0].body
    if blocks:
        # Broken: recovery of the chunk blanks what a full analysis would blank when the
        # whole member is broken, its errors lie in it, and the class around it leads the
        # full recovery to the same member.
        if not all(b.member and b.lone and b.start == child.start and b.errors[-1][0] <= end for b in blocks) \
                or any(not any(b.start <= stmt.lineno - 1 < b.end for b in blocks) for stmt in body) \
                or child.member is not None or not _member_recovery_reaches(lines, cls, child) \
                or not _indented_like_siblings(lines, cls, child, edit) \
                or errors + sum(len(b.errors) for b in blocks) >= MAX_RECOVERIES:
            return None
        new = _broken(checker, blocks[0]) if len(blocks) == 1 else None
        if new is None:
            return None
    else:
        if len(body) != 1 or _span_start(body[0]) != child.start or body[0].end_lineno - 1 > end \
                or _binds(body[0]) or not _indented_like_siblings(lines, cls, child, edit) \
                or device_method(body[0]) or backend_named(getattr(body[0], "name", "")):
            return None  # (a member named for a device: its class's other members read it)
        old, now = child.member, class_member(body[0])
        if (old and old.value) != (now and now.value):
            return None  # the class's string constants changed, and they are read together
        members = tuple(now if c is child else c.member for c in cls.children if c.member is not None)
        scope = Scope(checker.module.scope, CLASS, members)
        for name, qualname in imports.items():
            scope.bind(name, qualname)
        checker.enclosing, checker.cuda_member = class_branches(cls.backend, body), cls.beside
        new = _statement(checker, body[0], scope, cls.owner)
        checker.enclosing, checker.cuda_member = [], ""
    later = [_moved(c, edit) for c in cls.children[index + 1:]]
    header = Span(cls.header.start, cls.header.end + edit.delta, cls.header.findings, False, cls.header.facts)
    return [_class(header, cls.children[:index] + [new] + later, cls.backend, cls.per_backend, cls.owner, cls.beside)]


def _ends_in_a_decorator(lines: list[str], first: int, last: int, indent: str) -> bool:
    """Whether the last statement that lines [first, last] start at `indent` is a decorator:
    in the whole text it decorates the statement after them (one whose statement recovery
    blanked out, or one being typed), which these lines parsed alone do not have."""
    for index in range(last, first - 1, -1):
        if _starts_member(lines[index], indent):
            return lines[index][len(indent):].startswith("@")
    return False


def _tangled(spans: list[Span]) -> bool:
    return any(a.end >= b.start for a, b in zip(spans, spans[1:]))


def _indented_like_siblings(lines: list[str], cls: Span, child: Span, edit: TextEdit) -> bool:
    """Whether the re-parsed member starts where its siblings do: alone under `class _:`
    any indentation parses, in its class a different one is an error."""
    index = cls.children.index(child)
    if index > 0:
        sibling = lines[cls.children[index - 1].start]
    elif index + 1 < len(cls.children):
        sibling = lines[cls.children[index + 1].start + edit.delta]
    else:
        return True
    first = lines[child.start]
    return _indentation(first) == _indentation(sibling)


def _indentation(line: str) -> str:
    return line[:len(line) - len(line.lstrip())]


def _stable(blocks: list[Broken]) -> bool:
    """Whether the errors of these blocks, all a file has, stay what they are while lines
    outside them change."""
    return all(b.local for b in blocks) or (len(blocks) == 1 and blocks[0].lone)


# Strings (a single-quoted one ends with its line) and comments, whose brackets are text.
STRINGS_AND_COMMENTS = re.compile(r"""("{3}|'{3})(?:\\.|(?!\1).)*?\1|(["'])(?:\\.|[^\\\r\n])*?\2|#[^\r\n]*""",
                                  re.DOTALL)
BRACKETS = re.compile(r"[()\[\]{}]")


def _open_among_others(lines: list[str], blocks: list[Broken]) -> bool:
    """A block that leaves a bracket open, and another syntax error somewhere. Python goes
    on tokenizing after an error, inside the open bracket: what it reports then depends on
    every other broken block (a bracket closed there, or an error there reported first)."""
    return len(blocks) > 1 and any(_leaves_open("".join(lines[b.start:b.end])) for b in blocks)


def _leaves_open(text: str) -> bool:
    depth = 0
    for bracket in BRACKETS.findall(STRINGS_AND_COMMENTS.sub("", text)):
        depth = depth + 1 if bracket in "([{" else max(depth - 1, 0)
    return depth > 0


def _recovered_alike(lines: list[str], blocks: list[Broken], first: int, last: int, errors: int) -> bool:
    """Whether recovery in lines [first, last] alone blanked what it blanks in the whole text:
    each block begins inside, its errors depend on its own lines (a lone block's while it is
    the file's only one: `_assemble` checks), and one that runs to the end stops there in the
    whole text too."""
    if errors + sum(len(b.errors) for b in blocks) >= MAX_RECOVERIES:
        return False
    for block in blocks:
        if block.start < first or not block.lone or any(line > last for line, _, _ in block.errors):
            return False
        if block.end > last and last + 1 < len(lines) and not starts_block(lines[last + 1]):
            return False
    return True


def _member_recovery_reaches(lines: list[str], cls: Span, child: Span) -> bool:
    """Whether recovery in the whole text, going back from inside `child` to its top-level
    block, stops at the class line and narrows to members at `child`'s indentation."""
    head = next((i for i in range(cls.start, child.start) if CLASS_LINE.match(lines[i])), None)
    if head is None or any(starts_block(lines[i]) for i in range(head + 1, child.start)):
        return False
    first = lines[child.start]
    indent = next((body[:len(body) - len(body.lstrip())] for body in lines[head + 1:child.start + 1]
                   if body.strip() and not body.lstrip().startswith("#")), "")
    return bool(indent) and first.startswith(indent) and starts_block(first[len(indent):])


def _moved(span: Span, edit: TextEdit) -> Span:
    """The span below an edit, its lines moved (what it says of its class kept)."""
    return replace(span, start=span.start + edit.delta, end=span.end + edit.delta,
                   findings=_shift(span.findings, edit.delta, edit.first),
                   facts={fact: _move(where, edit.delta, edit.first) for fact, where in span.facts.items()},
                   header=_moved(span.header, edit) if span.header else None,
                   children=[_moved(c, edit) for c in span.children] if span.children is not None else None,
                   broken=_moved_block(span.broken, edit.delta) if span.broken else None)


def _moved_block(block: Broken, delta: int) -> Broken:
    return Broken(block.start + delta, block.end + delta,
                  [(line + delta, col, _renumbered(msg, delta)) for line, col, msg in block.errors],
                  block.member, block.local, block.lone)


def _assemble(checker: Checker, source: SourceText, settings: Settings, path: str | None, module: ModuleContext,
              before: list[Span], middle: list[Span], after: list[Span], edit: TextEdit) -> Analysis | None:
    all_spans = before + middle + [_moved(s, edit) for s in after]
    blocks = _blocks(all_spans)
    if not _stable(blocks) or _open_among_others(source.lines, blocks):
        return None
    extra = _module_findings(checker, all_spans)
    analysis = _finish(source, settings, checker.tables, path, all_spans, extra, checker.errors, module,
                       len(middle), checker.rule_set)
    analysis.text_facts = checker.text_facts
    return analysis
