"""Imports go one way: no module of the package imports, however indirectly, a module that
imports it back, and the layers of the design hold (the engine imports no
rule and no adapter; knowledge/ imports no engine; rules/ import no adapter). Every import
counts, at the top of a module, inside a function or under `if TYPE_CHECKING:`: each is a
dependency a reader has to follow."""

from __future__ import annotations

import ast
from pathlib import Path

import ascend_lsp

PACKAGE = Path(ascend_lsp.__file__).parent

ADAPTERS = ("lsp", "cli", "runner", "port")
# subpackage → the subpackages it must not import
FORBIDDEN = {
    "engine": ("rules", *ADAPTERS),
    "knowledge": ("engine", "rules", *ADAPTERS),
    "rules": ADAPTERS,
}


def import_graph(root: Path) -> dict[str, set[str]]:
    """Module → the modules of the same package it imports (a package is its `__init__`)."""
    modules: dict[str, Path] = {}
    for path in root.rglob("*.py"):
        parts = (root.name, *path.relative_to(root).with_suffix("").parts)
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[:len(package.split(".")) - node.level + 1]
                    module = ".".join(base + ([node.module] if node.module else []))
                else:
                    module = node.module or ""
                targets = [module, *(f"{module}.{alias.name}" for alias in node.names)]  # a name may be a module
            else:
                continue
            graph[name].update(t for t in targets if t in modules and t != name)
    return graph


def circles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[frozenset[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for target in sorted(graph[module]):
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            component = {stack.pop()}
            while module not in component:
                component.add(stack.pop())
            if len(component) > 1:
                found.append(frozenset(component))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return found


def loop_through(graph: dict[str, set[str]], circle: frozenset[str]) -> list[str]:
    """One shortest import loop from the circle's first module back to it, to show where to cut."""
    start = min(circle)
    paths = {start: [start]}
    queue = [start]
    for module in queue:
        for target in sorted(graph[module] & circle):
            if target == start:
                return paths[module] + [start]
            if target not in paths:
                paths[target] = paths[module] + [target]
                queue.append(target)
    raise AssertionError(f"{start} is in no loop")


def described(graph: dict[str, set[str]]) -> list[str]:
    """Each circle, as its modules and one loop."""
    return [f"{len(circle)} modules {sorted(circle)}, e.g. {' -> '.join(loop_through(graph, circle))}"
            for circle in circles(graph)]


def layer_violations(graph: dict[str, set[str]]) -> set[tuple[str, str]]:
    def subpackage(module: str) -> str:
        return module.split(".")[1] if "." in module else ""

    return {(module, target) for module, targets in graph.items() for target in targets
            if subpackage(target) in FORBIDDEN.get(subpackage(module), ())}


def test_no_import_circle():
    problems = described(import_graph(PACKAGE))
    assert not problems, "import circles:\n" + "\n".join(problems)


def test_layers():
    crossing = "\n".join(f"{module} -> {target}" for module, target in sorted(layer_violations(import_graph(PACKAGE))))
    assert not crossing, "imports across the layers:\n" + crossing


def test_only_knowledge_reads_mappings():
    """knowledge/files.py finds and reads mappings/ (mappings_root, read_table); every other
    module asks a knowledge/ module for the facts."""
    readers = sorted(str(path.relative_to(PACKAGE)) for path in PACKAGE.rglob("*.py")
                     if path.parent.name != "knowledge"
                     for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                     if isinstance(node, ast.ImportFrom)
                     and {"mappings_root", "read_table"} & {alias.name for alias in node.names})
    assert not readers, f"read mappings/ outside knowledge/: {readers}"


def test_the_graph_counts_every_import(tmp_path):
    """The checks above see a circle made of a relative import, an import inside a function
    and one under TYPE_CHECKING, name it, and see a layer crossed."""
    root = tmp_path / "ascend_lsp"
    files = {
        "__init__.py": "",
        "engine/__init__.py": "",
        "engine/text.py": "from . import model\n",
        "engine/model.py": "def later():\n    from ..rules.npu1xx_cuda import rule\n",
        "rules/__init__.py": "",
        "rules/npu1xx_cuda.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import ascend_lsp.engine.text\n",
        "lsp/__init__.py": "from ..engine import text\n",
    }
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    graph = import_graph(root)
    assert graph == {
        "ascend_lsp": set(),
        "ascend_lsp.engine": set(),
        "ascend_lsp.engine.text": {"ascend_lsp.engine", "ascend_lsp.engine.model"},
        "ascend_lsp.engine.model": {"ascend_lsp.rules.npu1xx_cuda"},
        "ascend_lsp.rules": set(),
        "ascend_lsp.rules.npu1xx_cuda": {"ascend_lsp.engine.text"},
        "ascend_lsp.lsp": {"ascend_lsp.engine", "ascend_lsp.engine.text"},
    }
    loop = frozenset({"ascend_lsp.engine.model", "ascend_lsp.engine.text", "ascend_lsp.rules.npu1xx_cuda"})
    assert circles(graph) == [loop]
    assert described(graph) == [
        "3 modules ['ascend_lsp.engine.model', 'ascend_lsp.engine.text', 'ascend_lsp.rules.npu1xx_cuda'], e.g. "
        "ascend_lsp.engine.model -> ascend_lsp.rules.npu1xx_cuda -> ascend_lsp.engine.text -> ascend_lsp.engine.model"]
    assert layer_violations(graph) == {("ascend_lsp.engine.model", "ascend_lsp.rules.npu1xx_cuda")}
