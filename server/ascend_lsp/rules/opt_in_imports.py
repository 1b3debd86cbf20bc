"""A use of a name that only opt-in imports bind: `if is_flash_attn_2_available(): from flash_attn
import flash_attn_func` makes the import info (harmless_calls.import_with_fallback); the class
that calls `flash_attn_func` runs only where that import ran, so its calls are opt-in too.
The imports are read from the whole file, parsed here once per analysis: only a file with a
use of a CUDA library's name gets that far."""

from __future__ import annotations

import ast

from ..engine.checker import Checker, Reference
from ..engine.model import Related, Severity
from .harmless_calls import blocks, feature_test, holding, import_with_fallback

OPT_IN_BINDING = (" (`{name}` is bound only by an import that runs where the package is installed or its feature "
                  "is on (the related import): on an NPU host it does not, and this code is that feature's.)")


def _tree(checker: Checker) -> ast.Module | None:
    """The file's module, parsed once per analysis; None where it does not parse (the
    engine's recovery is not repeated here: the finding then keeps its severity)."""
    source = checker.source
    key = ("module-tree", id(source))
    known = checker.derived.get(key)
    if known is None or known[0] is not source:
        try:
            tree: ast.Module | None = ast.parse(source.text)
        except (SyntaxError, ValueError):
            tree = None
        known = checker.derived[key] = (source, tree)
    return known[1]  # type: ignore[return-value]


def _binds(alias: ast.alias, stmt: ast.Import | ast.ImportFrom, name: str) -> bool:
    if alias.asname is not None:
        return alias.asname == name
    return (alias.name.partition(".")[0] if type(stmt) is ast.Import else alias.name) == name


def _visible_imports(tree: ast.Module, line: int) -> list[ast.Import | ast.ImportFrom]:
    """The module's imports outside functions and classes (in its if/try/with blocks too), and
    those of the innermost function holding `line`: the ones an analysis of that function
    sees again (an edit among the module's imports re-analyses every statement)."""
    found: list[ast.Import | ast.ImportFrom] = []
    pending: list[ast.stmt] = list(tree.body)
    while pending:
        stmt = pending.pop()
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            found.append(stmt)
        else:
            pending.extend(child for block in blocks(stmt) for child in block)
    functions = [f for f in ast.walk(tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
                 and f.lineno <= line <= (f.end_lineno or f.lineno)]
    if functions:
        innermost = max(functions, key=lambda f: f.lineno)
        found.extend(n for n in ast.walk(innermost) if isinstance(n, (ast.Import, ast.ImportFrom)))
    return found


def _opt_in(checker: Checker, tree: ast.Module, stmt: ast.Import | ast.ImportFrom, alias: ast.alias) -> bool:
    """The import runs only where its package is installed, or under a test of its feature."""
    if import_with_fallback(checker, stmt):
        return True
    functions = [f for f in ast.walk(tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
                 and f.lineno <= stmt.lineno <= (f.end_lineno or f.lineno)]
    body = max(functions, key=lambda f: f.lineno).body if functions else tree.body
    module = (stmt.module or "") if type(stmt) is ast.ImportFrom else alias.name
    words = {module.partition(".")[0].lower(), (alias.asname or alias.name).partition(".")[0].lower()}
    return feature_test(checker, stmt, words, holding(stmt, body)) is not None


def opt_in_binding(checker: Checker, ref: Reference) -> tuple[Severity, str, Related] | None:
    """Info, the reason and the first import, for a use whose first name every import that
    binds it in the file binds opt-in (a fallback of another kind, `else: flash_attn_func =
    None`, runs where the import does not: it is not the package)."""
    first = ref.node
    while type(first) is ast.Attribute:
        first = first.value
    if type(first) is not ast.Name:
        return None
    tree = _tree(checker)
    if tree is None:
        return None
    imports = [(stmt, alias) for stmt in _visible_imports(tree, ref.node.lineno)
               for alias in stmt.names if _binds(alias, stmt, first.id)]
    if not imports or not all(_opt_in(checker, tree, stmt, alias) for stmt, alias in imports):
        return None
    stmt, alias = min(imports, key=lambda pair: pair[0].lineno)
    related = Related(checker.range(alias), f"`{first.id}` imported here, opt-in")
    return Severity.INFO, OPT_IN_BINDING.format(name=first.id), related
