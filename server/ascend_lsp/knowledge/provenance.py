"""Where the facts of mappings/ come from: which rows of which table name each rule code, and
which builder function (mappings/build/*_tables.py) writes a table from which upstream fact
files. The builder and the facts are found in a source checkout (`mappings/build/`,
`mappings/upstream/`); an installed package has only the tables."""

from __future__ import annotations

import ast
import dataclasses
import fnmatch
import functools
from dataclasses import dataclass

from .files import mappings_root, read_table

FACT_SUFFIXES = (".tsv", ".txt", ".md", ".jsonl")


@functools.cache
def rule_rows() -> dict[str, dict[str, int]]:
    """table file (as `mappings/...`) → rule code → rows that name it."""
    root = mappings_root()
    out: dict[str, dict[str, int]] = {}
    for path in sorted(root.glob("*/*.toml")):
        counts: dict[str, int] = {}
        for section in read_table(path).values():
            if isinstance(section, list):
                for row in section:
                    if isinstance(row, dict) and isinstance(row.get("rule"), str):
                        counts[row["rule"]] = counts.get(row["rule"], 0) + 1
        out[f"mappings/{path.relative_to(root).as_posix()}"] = counts
    return out


@dataclass(frozen=True)
class BuilderFunction:
    module: str  # mappings/build/torch_npu_tables.py
    name: str
    strings: frozenset[str]  # its string constants
    patterns: tuple[str, ...]  # its file names, f-string holes as `*`
    facts: tuple[str, ...]  # the upstream fact files those name
    writes: tuple[str, ...]  # the file names among `patterns` it writes (a table it only reads is not its own)


@functools.cache
def builder_functions() -> tuple[BuilderFunction, ...]:
    build = mappings_root() / "build"
    upstream = mappings_root() / "upstream"
    if not build.is_dir():  # an installed package ships the tables only
        return ()
    facts = sorted(p.relative_to(upstream.parent.parent).as_posix() for p in upstream.rglob("*")
                   if p.suffix in FACT_SUFFIXES and p.parent != upstream)
    out: list[BuilderFunction] = []
    trees = {module: ast.parse(module.read_text(encoding="utf-8")) for module in sorted(build.glob("*.py"))}
    writers = _writers([node for tree in trees.values() for node in tree.body if isinstance(node, ast.FunctionDef)])
    for module, tree in trees.items():
        if not module.name.endswith("_tables.py"):
            continue
        # module-level string constants (FACTS = "x.md"): a function that names one reads it
        constants = {target.id: node.value.value for node in tree.body if isinstance(node, ast.Assign)
                     and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
                     for target in node.targets if isinstance(target, ast.Name)}
        functions: list[BuilderFunction] = []
        for node in tree.body:
            if isinstance(node, ast.FunctionDef):
                strings, patterns = _strings(node, constants)
                named = tuple(f for f in facts if any(fnmatch.fnmatch(f.rpartition("/")[2], p) for p in patterns))
                written = {p for value in _written_values(node, writers) for p in _strings(value, constants)[1]}
                functions.append(BuilderFunction(f"mappings/build/{module.name}", node.name, frozenset(strings), patterns,
                                                 named, tuple(p for p in patterns if p in written)))
        # a function handed its facts by the module's build() reads what build() names
        read = tuple(sorted({fact for f in functions for fact in f.facts}))
        out.extend(f if f.facts else dataclasses.replace(f, facts=read) for f in functions)
    return tuple(out)


def _strings(node: ast.AST, constants: dict[str, str]) -> tuple[set[str], tuple[str, ...]]:
    strings: set[str] = set()
    patterns: list[str] = []
    for child in ast.walk(node):
        value = child.value if isinstance(child, ast.Constant) else \
            constants.get(child.id) if isinstance(child, ast.Name) else None
        if isinstance(value, str):
            strings.add(value)
            if "." in value and " " not in value:
                patterns.append(value)
        elif isinstance(child, ast.JoinedStr):
            pattern = "".join(str(v.value) if isinstance(v, ast.Constant) else "*" for v in child.values)
            if "." in pattern and " " not in pattern and "/" not in pattern:
                patterns.append(pattern)
    return strings, tuple(dict.fromkeys(p for p in patterns if p.endswith((".toml", *FACT_SUFFIXES))))



WRITE_METHODS = frozenset({"write_text", "write_bytes"})


def _writers(functions: list[ast.FunctionDef]) -> dict[str, set[int]]:
    """function name → the positions of the parameters it writes to (`write_toml(path, ...)`
    calls `path.write_bytes(...)`), through the calls of others that write theirs."""
    writers: dict[str, set[int]] = {}
    changed = True
    while changed:
        changed = False
        for func in functions:
            params = [a.arg for a in (*func.args.posonlyargs, *func.args.args)]
            written = {params.index(v.id) for v in _written_values(func, writers)
                       if isinstance(v, ast.Name) and v.id in params}
            if written - writers.get(func.name, set()):
                writers[func.name] = writers.get(func.name, set()) | written
                changed = True
    return writers


def _written_values(func: ast.FunctionDef, writers: dict[str, set[int]]) -> list[ast.expr]:
    """The paths `func` writes to: what `.write_text`/`.write_bytes`/`.open("w")` is called on,
    what `open(..., "w")` or a function in `writers` is handed in a written position, and what
    a name so written was assigned in `func` (`path = out_dir / "x.toml"; path.write_text(...)`)."""
    values: list[ast.expr] = []
    for call in ast.walk(func):
        if not isinstance(call, ast.Call):
            continue
        name = call.func.attr if isinstance(call.func, ast.Attribute) else \
            call.func.id if isinstance(call.func, ast.Name) else None
        if isinstance(call.func, ast.Attribute) and (name in WRITE_METHODS or name == "open" and _writes(call, 0)):
            values.append(call.func.value)
        elif name == "open" and isinstance(call.func, ast.Name) and call.args and _writes(call, 1):
            values.append(call.args[0])
        elif name in writers:
            values += [arg for index, arg in enumerate(call.args) if index in writers[name]]
    names = {v.id for v in values if isinstance(v, ast.Name)}
    values += [node.value for node in ast.walk(func) if isinstance(node, ast.Assign)
               and any(isinstance(t, ast.Name) and t.id in names for t in node.targets)]
    return values


def _writes(call: ast.Call, position: int) -> bool:
    """Whether an `open` call's mode (at `position`, or `mode=`) writes."""
    mode = call.args[position] if len(call.args) > position else \
        next((k.value for k in call.keywords if k.arg == "mode"), None)
    return isinstance(mode, ast.Constant) and isinstance(mode.value, str) and bool(set(mode.value) & set("wax"))
