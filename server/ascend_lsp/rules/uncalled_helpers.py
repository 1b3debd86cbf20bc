"""The functions of a setup.py that nothing calls, and the names it imports for them alone.

setup.py is run, never imported: a top-level function that no code of the file names (or that
only other such functions name) never runs, whatever CUDA it would build (mmdet's
`make_cuda_ext` beside `ext_modules=[]`). Read from the whole text (Checker.text_fact), since a
call added anywhere changes it; only for files named setup.py, where no other module can call
them."""

from __future__ import annotations

import ast
import os
from dataclasses import dataclass

from ..engine.checker import Checker
from ..engine.model import Severity

UNCALLED = " (In `{name}`, which nothing in setup.py calls: setup.py is run, not imported, so it never runs.)"
IMPORTED_FOR = (" (Used only in {names}, which nothing in setup.py calls: setup.py is run, not imported, so it never "
                "runs; importing it works on any host.)")


@dataclass(frozen=True, slots=True)
class Uncalled:
    functions: tuple[tuple[str, int, int], ...] = ()  # (name, first line, last line), 1-based
    imports: tuple[tuple[str, tuple[str, ...]], ...] = ()  # an imported name → the uncalled functions using it


def _read(checker: Checker) -> Uncalled:
    try:
        tree = ast.parse(checker.source.text)
    except (SyntaxError, ValueError, RecursionError):
        return Uncalled()  # what does not parse cannot show that nothing calls a function
    functions = {stmt.name: stmt for stmt in tree.body
                 if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and not stmt.decorator_list}
    loads: dict[str, list[int]] = {}
    for node in ast.walk(tree):
        if type(node) is ast.Name and type(node.ctx) is ast.Load:
            loads.setdefault(node.id, []).append(node.lineno)
    spans: dict[str, tuple[int, int]] = {}
    changed = True
    while changed:  # a function that only uncalled ones call is uncalled too
        changed = False
        for name, func in functions.items():
            if name in spans:
                continue
            own = (func.lineno, func.end_lineno or func.lineno)
            if all(own[0] <= line <= own[1] or any(a <= line <= b for a, b in spans.values())
                   for line in loads.get(name, ())):
                spans[name] = own
                changed = True
    imports = []
    for stmt in tree.body:
        if not isinstance(stmt, (ast.Import, ast.ImportFrom)):
            continue
        for alias in stmt.names:
            bound = alias.asname or alias.name.partition(".")[0]
            holders = [next((f for f, (a, b) in spans.items() if a <= line <= b), None) for line in loads.get(bound, ())]
            if holders and None not in holders:
                imports.append((bound, tuple(sorted(set(holders)))))
    return Uncalled(tuple((name, a, b) for name, (a, b) in spans.items()), tuple(imports))


def _uncalled(checker: Checker) -> Uncalled | None:
    if checker.path is None or os.path.basename(checker.path) != "setup.py":
        return None
    return checker.text_fact("setup-uncalled", _read)


def uncalled_place(checker: Checker, node: ast.AST) -> tuple[Severity, str] | None:
    """Info and the reason for code in a function of setup.py that nothing calls."""
    found = _uncalled(checker)
    line = getattr(node, "lineno", 0)
    name = next((name for name, a, b in found.functions if a <= line <= b), None) if found else None
    return (Severity.INFO, UNCALLED.format(name=name)) if name is not None else None


def uncalled_import(checker: Checker, alias: ast.alias) -> tuple[Severity, str] | None:
    """Info and the reason for a name setup.py imports only for functions nothing calls."""
    found = _uncalled(checker)
    bound = alias.asname or alias.name.partition(".")[0]
    holders = next((names for name, names in found.imports if name == bound), None) if found else None
    if holders is None:
        return None
    return Severity.INFO, IMPORTED_FOR.format(names=", ".join(f"`{name}`" for name in holders))
