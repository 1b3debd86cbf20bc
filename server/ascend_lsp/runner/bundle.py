"""The worker as one script: its modules (runner/worker/) joined in import order, so that it
can be shipped as source to an interpreter that has no ascend_lsp (command.py, pool.py).

A worker module imports the standard library at its top, anything else inside the function
that needs it (torch, numpy, mindspore: the user's packages), and its siblings only as
`from .module import name` at its top. The script drops those sibling imports, so all the
modules' top-level names share one namespace and must differ. A module that breaks a rule
is refused with the reason (BundleError), never shipped broken.
"""

from __future__ import annotations

import ast
import functools
import sys
from pathlib import Path

WORKER = Path(__file__).with_name("worker")
ENTRY = "serve"  # the loop; every other module is imported from it, directly or not
SCRIPT_NAME = "<ascend-lsp worker>"  # the script's file name in tracebacks
FUTURE = "__future__"


class BundleError(Exception):
    """A worker module that would make the script not self-contained, or not one namespace."""


@functools.cache
def worker_script() -> str:
    return bundle(WORKER)


def bundle(folder: Path, entry: str = ENTRY) -> str:
    """The modules of `folder` as one script: the package docstring, then each module
    after the ones it imports, `entry` last."""
    modules = {path.stem: _Module(path) for path in sorted(folder.glob("*.py"))
               if path.stem not in ("__init__", "__main__")}
    if entry not in modules:
        raise BundleError(f"no {entry}.py in {folder}")
    order = _import_order(modules, entry)
    unused = sorted(set(modules) - set(order))
    if unused:
        raise BundleError(f"{', '.join(m + '.py' for m in unused)} not imported by {entry}.py, directly or not")
    _check_namespace([modules[name] for name in order], modules)
    for name in order:
        if modules[name].main_guard and name != entry:
            raise BundleError(f"{name}.py has an `if __name__ == \"__main__\"` block: only {entry}.py, the last "
                              f"module of the script, may")
    package = folder / "__init__.py"
    parts = [package.read_text(encoding="utf-8").strip() + "\n" if package.is_file() else "",
             "from __future__ import annotations\n"]
    parts += [f"\n\n# {'-' * 20} {folder.name}/{name}.py\n\n{modules[name].body()}" for name in order]
    script = "".join(parts)
    compile(script, SCRIPT_NAME, "exec")
    return script


class _Module:
    """One worker module: what it defines and imports at its top, checked for the script."""

    def __init__(self, path: Path):
        self.name = path.name
        self.text = path.read_text(encoding="utf-8")
        self.tree = ast.parse(self.text, path.name)
        self.siblings: list[tuple[str, list[str]]] = []  # (module, names) imported from the package
        self.defined: dict[str, int] = {}  # name → line
        self.imported: dict[str, str] = {}  # name → what it is bound to (`os`, `os.path`)
        self.dropped: list[ast.stmt] = []  # docstring, __future__ and sibling imports
        self.main_guard = False
        for node in ast.walk(self.tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                self._check_import(node, top=node in self.tree.body)
        for index, node in enumerate(self.tree.body):
            self._top(index, node)

    def fail(self, node: ast.AST, why: str) -> BundleError:
        return BundleError(f"{self.name}:{getattr(node, 'lineno', 0)}: {why}")

    def _check_import(self, node: ast.Import | ast.ImportFrom, top: bool) -> None:
        if isinstance(node, ast.ImportFrom) and node.level:
            if not top or node.level != 1 or not node.module:
                raise self.fail(node, "a worker module imports its siblings as `from .module import name`, at its "
                                      "top (the script has no package to import from)")
            if any(alias.asname for alias in node.names):
                raise self.fail(node, f"`import ... as` from .{node.module}: the script keeps one name for each")
            return
        roots = [node.module] if isinstance(node, ast.ImportFrom) else [alias.name for alias in node.names]
        for root in (r.split(".")[0] for r in roots if r):
            if root == "ascend_lsp":
                raise self.fail(node, "imports ascend_lsp, which a worker's host may not have")
            if top and root != FUTURE and root not in sys.stdlib_module_names:
                raise self.fail(node, f"imports {root} at its top: only the standard library may be imported "
                                      f"before a job needs it (import {root} in the function that uses it)")

    def _top(self, index: int, node: ast.stmt) -> None:
        if index == 0 and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) \
                and isinstance(node.value.value, str):
            self.dropped.append(node)
        elif isinstance(node, ast.ImportFrom) and (node.level or node.module == FUTURE):
            self.dropped.append(node)
            if node.level:
                self.siblings.append((node.module, [alias.name for alias in node.names]))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                self.imported[alias.asname or alias.name.split(".")[0]] = alias.name if alias.asname else \
                    alias.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom):
            for alias in node.names:
                self.imported[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            self._define(node.name, node)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                for name in ast.walk(target):
                    if isinstance(name, ast.Name):
                        self._define(name.id, node)
        elif isinstance(node, ast.If) and ast.unparse(node.test) in ("__name__ == '__main__'",
                                                                     '__name__ == "__main__"'):
            self.main_guard = True
        else:
            raise self.fail(node, f"a top-level {type(node).__name__} statement: the script checks the names "
                                  f"a module defines only in def, class, assignments and imports")

    def _define(self, name: str, node: ast.stmt) -> None:
        if name in self.defined:
            raise self.fail(node, f"defines {name} twice at its top")
        self.defined[name] = node.lineno

    def body(self) -> str:
        lines = self.text.splitlines(keepends=True)
        drop = {n for node in self.dropped for n in range(node.lineno - 1, node.end_lineno or node.lineno)}
        return "".join(line for n, line in enumerate(lines) if n not in drop).strip("\n") + "\n"


def _import_order(modules: dict[str, _Module], entry: str) -> list[str]:
    order: list[str] = []
    visiting: list[str] = []

    def visit(name: str) -> None:
        if name in order:
            return
        if name in visiting:
            raise BundleError(f"import circle: {' → '.join(visiting[visiting.index(name):] + [name])}")
        if name not in modules:
            raise BundleError(f"{visiting[-1]}.py imports .{name}, which is not a worker module")
        visiting.append(name)
        for sibling, _ in modules[name].siblings:
            visit(sibling)
        visiting.pop()
        order.append(name)
    visit(entry)
    return order


def _check_namespace(ordered: list[_Module], modules: dict[str, _Module]) -> None:
    """One namespace: no name defined by two modules, or imported differently by two, and
    every name a module takes from a sibling defined there."""
    owner: dict[str, str] = {}
    binding: dict[str, tuple[str, str]] = {}  # imported name → (what it is, the module importing it)
    for module in ordered:
        for name in module.defined:
            other = owner.get(name) or binding.get(name, ("", ""))[1]
            if other:
                raise BundleError(f"{name} is defined in {other} and in {module.name}: the script has one namespace")
            owner[name] = module.name
        for name, what in module.imported.items():
            other_what, other = binding.get(name, (what, ""))
            if name in owner or other_what != what:
                raise BundleError(f"{name} in {module.name} is also {other or owner[name]}'s, as something else: "
                                  f"the script has one namespace")
            binding[name] = (what, module.name)
        for sibling, names in module.siblings:
            for name in names:
                if name not in modules[sibling].defined:
                    raise BundleError(f"{module.name} imports {name} from {sibling}.py, which does not define it")
