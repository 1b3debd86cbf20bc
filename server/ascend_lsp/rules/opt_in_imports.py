"""A use of a name that only opt-in imports bind: `if is_flash_attn_2_available(): from flash_attn
import flash_attn_func` makes the import info (harmless_calls.import_with_fallback); the class
that calls `flash_attn_func` runs only where that import ran, so its calls are opt-in too.

The imports read are the module's (outside functions and classes) and those of the function
holding the use: what an analysis of that function sees again, since an edit of a top-level
statement that imports re-analyses every statement. The module's are parsed here a top-level
statement at a time, from the lines that start an import, so that a syntax error elsewhere
changes nothing; one that does not parse binds nothing, as in the engine, which blanks it.

Code after such an import in its block is opt-in too: `try: import flash_attn;
config._attn_implementation = "flash_attention_2" except ImportError: ...` sets it only where
the import ran; so is code under a test that the package is installed (`if
is_flash_attn_2_available():`, without arguments: transformers' `kernels_fallback_ok=True` is
True without it) (after_opt_in_import, for NPU307)."""

from __future__ import annotations

import ast
import re

from ..engine.checker import Checker, Reference
from ..engine.model import Related, Severity
from ..engine.text import starts_block
from ..engine.walk import last_name
from .advice_matching import inside
from .harmless_calls import blocks, feature_test, holding, import_with_fallback, statement_path
from .statement_facts import innermost_function, statement_facts

OPT_IN_BINDING = (" (`{name}` is bound only by an import that runs where the package is installed or its feature "
                  "is on (the related import): on an NPU host it does not, and this code is that feature's.)")
AFTER_IMPORT = (" (After the import of `{module}` in the same block, which is opt-in (the related import: where "
                "the package is missing the code goes on without it): on an NPU host that import fails or is "
                "skipped, and this never runs.)")
AVAILABLE = (" (Under `{test}`, which is True only where the package is installed (the related test): on an NPU host "
             "without it this never runs.)")
# a test that a package is installed: `is_flash_attn_2_available` names `flash_attn` (its release after it);
# also `is_<package>_installed`
AVAILABILITY_NAME = re.compile(r"is_([a-z]\w*?)(?:_\d+)?_(?:available|installed)")
IMPORT_LINE = re.compile(r"[ \t]*(?:from[ \t]+[\w.]+[ \t]+)?import\b")
DEFINITIONS = ("def ", "async ", "class ", "@")


def _top_level(lines: list[str], index: int) -> tuple[int, int]:
    """The first and last line of the top-level statement holding line `index`, by indentation."""
    first = next((i for i in range(index, -1, -1) if starts_block(lines[i])), 0)
    last = next((i for i in range(index + 1, len(lines)) if starts_block(lines[i])), len(lines)) - 1
    return first, last


Import = tuple[ast.Import | ast.ImportFrom, list[ast.stmt]]  # an import and the statements it lies in


def _module_imports(checker: Checker) -> list[Import]:
    """The imports outside functions and classes, each with its top-level statement, once per
    analysis (a top-level statement that does not parse holds none)."""
    source = checker.source
    key = ("module-imports", id(source))
    known = checker.derived.get(key)
    if known is None or known[0] is not source:
        found: list[Import] = []
        lines, done = source.lines, -1
        for index, line in enumerate(lines):
            if index <= done or not IMPORT_LINE.match(line):
                continue
            first, done = _top_level(lines, index)
            if lines[first].startswith(DEFINITIONS):
                continue  # a function's or a class's imports are not the module's
            try:
                body = ast.parse("\n" * first + "".join(lines[first:done + 1])).body
            except (SyntaxError, ValueError):
                continue  # as the engine's recovery blanks it: it binds nothing
            pending: list[ast.stmt] = list(body)
            while pending:
                stmt = pending.pop()
                if isinstance(stmt, (ast.Import, ast.ImportFrom)):
                    found.append((stmt, body))
                else:
                    pending.extend(child for block in blocks(stmt) for child in block)
        known = checker.derived[key] = (source, found)
    return known[1]  # type: ignore[return-value]


def _binds(alias: ast.alias, stmt: ast.Import | ast.ImportFrom, name: str) -> bool:
    if alias.asname is not None:
        return alias.asname == name
    return (alias.name.partition(".")[0] if type(stmt) is ast.Import else alias.name) == name


def _opt_in(checker: Checker, stmt: ast.Import | ast.ImportFrom, alias: ast.alias, body: list[ast.stmt]) -> bool:
    """The import runs only where its package is installed, or under a test of its feature in
    `body` (its function's, or its top-level statement)."""
    if import_with_fallback(checker, stmt):
        return True
    module = (stmt.module or "") if type(stmt) is ast.ImportFrom else alias.name
    words = {module.partition(".")[0].lower(), (alias.asname or alias.name).partition(".")[0].lower()}
    return feature_test(checker, stmt, words, holding(stmt, body)) is not None


def opt_in_binding(checker: Checker, ref: Reference) -> tuple[Severity, str, Related] | None:
    """Info, the reason and the first import, for a use whose first name every import that
    binds it (the module's, its function's) binds opt-in (a binding of another kind, `else:
    flash_attn_func = None`, runs where the import does not: it is not the package)."""
    first = ref.node
    while type(first) is ast.Attribute:
        first = first.value
    if type(first) is not ast.Name:
        return None
    module = _module_imports(checker)
    function = innermost_function(statement_facts(checker), ref.node)
    local: list[Import] = [(n, function.body) for n in ast.walk(function)  # type: ignore[attr-defined]
                           if isinstance(n, (ast.Import, ast.ImportFrom))] if function is not None else []
    imports = [(stmt, alias, body) for stmt, body in (*module, *local)
               for alias in stmt.names if _binds(alias, stmt, first.id)]
    if not imports or not all(_opt_in(checker, stmt, alias, body) for stmt, alias, body in imports):
        return None
    stmt, alias, _ = min(imports, key=lambda found: found[0].lineno)
    related = Related(checker.range(alias), f"`{first.id}` imported here, opt-in")
    return Severity.INFO, OPT_IN_BINDING.format(name=first.id), related


def or_opt_in_binding(checker: Checker, ref: Reference,
                      remark: tuple[Severity | None, str] | None) -> tuple[tuple[Severity | None, str] | None,
                                                                          tuple[Related, ...]]:
    """`remark`, or where the code shows none, the one opt_in_binding gives (`try: import apex;
    register(apex.normalization.FusedRMSNorm) except ImportError: pass`), with its import."""
    if remark is None and (bound := opt_in_binding(checker, ref)) is not None:
        return bound[:2], bound[2:]
    return remark, ()


def after_opt_in_import(checker: Checker, node: ast.AST, packages: frozenset[str]) -> tuple[Severity, str, Related] | None:
    """Info, the reason and the import (or the test), for code that runs only where one of
    `packages` is installed, nearest first: after its import in a block holding it, the body of
    a `try:` whose handler goes on without it or of an `if is_<package>_available():`
    (import_with_fallback); or in the body of such an `if` (transformers' `if
    is_flash_attn_2_available():`, False without the package and a GPU)."""
    for block, index in reversed(statement_path(checker, node)):
        stmt = block[index]
        if type(stmt) is ast.If and any(inside(node, child) for child in stmt.body):
            tests = stmt.test.values if type(stmt.test) is ast.BoolOp and type(stmt.test.op) is ast.And else [stmt.test]
            test = next((t for t in tests if type(t) is ast.Call and not t.args and not t.keywords
                         and _tests_package(last_name(t.func), packages)), None)
            if test is not None:
                shown = checker.source.segment(checker.range(test))
                return Severity.INFO, AVAILABLE.format(test=shown), Related(checker.range(test), f"`{shown}` tested here")
        for before in block[:index]:
            if not isinstance(before, (ast.Import, ast.ImportFrom)):
                continue
            modules = [(before.module or "", before) if type(before) is ast.ImportFrom else (alias.name, alias)
                       for alias in before.names]
            found = next(((module, where) for module, where in modules if module.partition(".")[0] in packages), None)
            if found is not None and import_with_fallback(checker, before):
                related = Related(checker.range(found[1]), f"`{found[0]}` imported here, opt-in")
                return Severity.INFO, AFTER_IMPORT.format(module=found[0]), related
    return None


def _tests_package(name: str, packages: frozenset[str]) -> bool:
    """`is_flash_attn_available`, `is_flash_attn_2_available` for `flash_attn`."""
    found = AVAILABILITY_NAME.fullmatch(name)
    return found is not None and found.group(1) in packages
