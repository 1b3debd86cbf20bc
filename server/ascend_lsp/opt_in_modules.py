"""The modules a project imports only under a test of an option it leaves off (option_tests.py):
`if self.is_vllm: from .velocity import LLM`, where no other file imports `velocity` but under such
a test, nor does any module the project runs by default. Such a module, and what only it imports,
runs only where the user turns the option on (engine/checker.py off_npu_file lowers its findings to
info, naming the test).

Read from the text of the project's Python files in the read that gives the flags
(flag_defaults.read_flags hands each to `ImportScan.add`): each import statement that names a
module of the project, and the block headers above it (an `if` or `elif` whose test, or one of the
tests its `and` joins, needs the option on; an `else` never). What the project runs by default: the
modules nothing of the project imports (its scripts, its tests, the packages its users import), a
module with a `__main__` block, and whatever those import outside such a test, in turn. An import
that is not read (a dynamic `importlib.import_module(name)`, a plugin's entry point) leaves a module
unimported, so run by default: its findings keep their severity."""

from __future__ import annotations

import ast
import hashlib
import os
import re
from dataclasses import dataclass, field

from .flag_defaults import FlagIndex
from .option_tests import computes, off_option

IMPORT_WORD = re.compile(r"import[ \t]")  # a literal first: quick to find (docs of flag_defaults)
# an import statement from its line's start: `from ..x import (a, b)`, `import a.b as c, d`
IMPORT_LINE = re.compile(r"([ \t]*)(?:from[ \t]+(\.*)([\w.]*)[ \t]+import[ \t]+([^#\r\n]*)|import[ \t]+([^#\r\n]*))")
HEADER = re.compile(r"(?:(el)?if[ \t(]+(.*)|else|for|async|while|with|try|except|finally|def|class)\b")
COMMENT = re.compile(r"[ \t]*(?:#.*)?(?=[\r\n]|$)")


@dataclass(frozen=True)
class OptIn:
    """Why a module runs only where the user turns an option on: the test over its import."""

    test: str  # as written, on one line
    site: str  # the importing file (relative to the root, with `/`) and its 1-based line: "pkg/core.py:594"
    option: str  # what the project gives the option, and where: a phrase


@dataclass
class _Site:
    importer: str  # relative, with `/`
    line: int  # 0-based (read for an import under a test)
    targets: list[str]  # the project's modules it runs (relative, with `/`): the one named and the packages above
    tests: list[str] = field(default_factory=list)  # the tests of the `if`/`elif` headers above, innermost first


class ImportScan:
    """Collects the import statements of a project's Python files; `index(flags)` gives the modules
    imported only under an option left off."""

    def __init__(self, root: str, paths: list[str]) -> None:
        """`paths`: the project's Python files, each handed to `add` next."""
        self.root = root
        self._prefix = os.path.join(root, "")
        self.files = {self._relative(path) for path in paths}  # relative, with `/`
        self.dotted = _dotted_names(self.files)
        self.by_name = {name: path for path, name in self.dotted.items()}
        self.tops = {name.partition(".")[0] for name in self.by_name}  # what an absolute import of the project begins with
        self.packages = {self.dotted[f] for f in self.files if f.endswith("/__init__.py") and f in self.dotted}
        self._known: dict[str, list[str]] = {}  # _runs' answers
        self.mains: set[str] = set()  # the files with a `__main__` block
        self.sites: list[_Site] = []  # the imports of the project's modules
        self.texts: dict[str, str] = {}  # the files with such an import under an `if`: their tests are read later

    def _relative(self, path: str) -> str:
        own = path[len(self._prefix):] if path.startswith(self._prefix) else os.path.relpath(path, self.root)
        return own.replace(os.sep, "/")

    def add(self, path: str, text: str) -> None:
        own = self._relative(path)
        if "__main__" in text:
            self.mains.add(own)
        name = self.dotted.get(own, "")
        package = name.split(".") if own.endswith("/__init__.py") else name.split(".")[:-1]
        before = {own, *self._runs(".".join(package))}  # itself and the packages it is in: they run first
        seen = -1
        for word in IMPORT_WORD.finditer(text):
            start = text.rfind("\n", 0, word.start()) + 1
            if start <= seen:
                continue  # `from x import y` names `import` once; a second on the line is no statement
            seen = start
            found = IMPORT_LINE.match(text, start)
            if found is None:
                continue
            if found.group(5) is not None:  # `import a.b as c, d`
                modules = [part.split()[0] for part in found.group(5).split(",") if part.split()]
                targets = [t for m in modules if m.partition(".")[0] in self.tops for t in self._runs(m)]
            else:
                dots, module = len(found.group(2)), found.group(3)
                if dots:
                    if not name or dots - 1 > len(package):
                        continue
                    module = ".".join([*package[:len(package) - (dots - 1)], *([module] if module else [])])
                elif module.partition(".")[0] not in self.tops:
                    continue
                targets = self._runs(module)
                if module in self.packages:  # `from pkg import module`
                    targets = targets + [t for n in self._names(found, text)
                                         if (t := self.by_name.get(f"{module}.{n}")) is not None]
            targets = [t for t in targets if t not in before]
            if not targets:
                continue
            site = _Site(own, 0, targets)
            if found.group(1):
                site.tests = _tests_above(text, start, len(found.group(1).expandtabs()))
            if site.tests:
                self.texts[own] = text
                site.line = text.count("\n", 0, start)
            self.sites.append(site)

    def _runs(self, module: str) -> list[str]:
        """The project's modules an import of the dotted `module` runs: it and the packages above it."""
        found = self._known.get(module)
        if found is None:
            parts = module.split(".")
            found = self._known[module] = [self.by_name[n] for i in range(1, len(parts) + 1)
                                           if (n := ".".join(parts[:i])) in self.by_name]
        return found

    @staticmethod
    def _names(found: re.Match, text: str) -> list[str]:
        """The names `from M import a, b as c` (or `(a,\n b)`) imports: a, b."""
        names = found.group(4).strip()
        if names.startswith("(") and ")" not in names:
            end = text.find(")", found.end())
            names = text[found.end():end] if end > 0 else ""
        return [part.split()[0] for part in re.sub(r"#[^\n]*", "", names).strip("()").split(",") if part.split()]

    def index(self, flags: FlagIndex) -> dict[str, OptIn]:
        """Each module (relative to the root, with `/`) that runs only where the user turns an
        option on, and why."""
        edges: dict[str, list[tuple[str, OptIn | None]]] = {}  # importer → (module, the off test over it)
        imported: set[str] = set()
        for site in self.sites:
            why = _off_test(site, flags, self.texts.get(site.importer, ""), self.root) if site.tests else None
            edges.setdefault(site.importer, []).extend((t, why) for t in site.targets)
            imported.update(site.targets)
        # what runs by default: the modules nothing imports, those with a `__main__` block, and what
        # they import outside an off test, in turn
        default = {f for f in self.files if f not in imported or f in self.mains}
        todo = list(default)
        while todo:
            for target, why in edges.get(todo.pop(), ()):
                if why is None and target not in default:
                    default.add(target)
                    todo.append(target)
        found: dict[str, OptIn] = {}
        todo = []
        for importer in sorted(default):
            for target, why in edges.get(importer, ()):
                if why is not None and target not in default and target not in found:
                    found[target] = why
                    todo.append(target)
        while todo:  # what only those import, with the test that leads there
            module = todo.pop()
            for target, _ in edges.get(module, ()):
                if target not in default and target not in found:
                    found[target] = found[module]
                    todo.append(target)
        return found


def digest(found: dict[str, OptIn]) -> str:
    return hashlib.blake2b(repr(sorted(found.items())).encode(), digest_size=12).hexdigest()


def block_headers(text: str, start: int, indent: int, through_functions: bool = True) -> list[tuple[int, str]]:
    """The headers of the blocks around the line at `start` (indented by `indent` characters),
    innermost first, as (the offset of the header's line, its code without a comment): up to the
    module's level (or, unless `through_functions`, the first `def` or `class`), or the first line
    above that begins a block and is no header read whole (a test over two lines, the closing
    bracket of a `def`'s parameters): the blocks around that are not read."""
    headers: list[tuple[int, str]] = []
    while indent > 0 and start > 0:
        start = _less_indented(text, start, indent)
        if start < 0:
            break
        line = text[start:text.find("\n", start) % (len(text) + 1)].rstrip("\r\n")
        body = line.lstrip(" \t")
        indent = len(line) - len(body)
        code = body[:COMMENT.search(body).start()] if "#" in body else body.rstrip()
        if HEADER.match(body) is None or not code.endswith(":"):
            break
        headers.append((start, code))
        if not through_functions and code.startswith(("def", "async", "class")):
            break  # a test around a function decides whether it is defined, not whether it is called
    return headers


def _tests_above(text: str, start: int, indent: int) -> list[str]:
    """The tests of the `if`/`elif` headers around the line at `start`, innermost first, up to the
    function or class around it (block_headers)."""
    tests = []
    for _, code in block_headers(text, start, indent, through_functions=False):
        header = HEADER.match(code)
        if header is not None and header.group(2) is not None:
            tests.append(code[header.start(2):-1].strip())
    return tests


_LESS: dict[int, re.Pattern] = {}


def _less_indented(text: str, end: int, indent: int) -> int:
    """The start of the last line before `end` indented by fewer than `indent` characters that holds
    code (not blank, not only a comment); -1 if none. Looked for by a pattern, in ever larger windows
    back from `end` (a docstring's lines are passed over in one search, not one by one)."""
    pattern = _LESS.get(indent)
    if pattern is None:
        pattern = _LESS[indent] = re.compile(rf"\n(?=[ \t]{{0,{indent - 1}}}[^ \t\r\n#])")
    window = 2048
    while True:
        low = max(0, end - 1 - window)
        last = None
        for found in pattern.finditer(text, low, end - 1):
            last = found
        if last is not None:
            return last.end()
        if low == 0:
            return 0 if text[:1] not in (" ", "\t", "\r", "\n", "#", "") else -1
        window *= 4


def _dotted_names(files: set[str]) -> dict[str, str]:
    """Each module's dotted name, from the topmost folder of its package (folders with an
    `__init__.py`), as Python finds it where that folder's parent is on the path."""
    packages = {f.rpartition("/")[0] for f in files if f.endswith("/__init__.py")}
    names = {}
    for path in files:
        if not path.endswith(".py"):
            continue
        parts = path[:-3].split("/")
        first = len(parts) - 1
        while first > 0 and "/".join(parts[:first]) in packages:
            first -= 1
        own = parts[first:] if parts[-1] != "__init__" else parts[first:-1]
        if own:
            names[path] = ".".join(own)
    return names


def _off_test(site: _Site, flags: FlagIndex, text: str, root: str) -> OptIn | None:
    """The first header test over the site that needs an option on that the project leaves off."""
    path = os.path.join(root, site.importer)
    for test in site.tests:
        try:
            tree = ast.parse(test, mode="eval").body
        except SyntaxError:
            continue
        operands = tree.values if type(tree) is ast.BoolOp and type(tree.op) is ast.And else [tree]
        for operand in operands:
            found = off_option(operand, flags, path, lambda name: computes(text, name, flags.sources(name)))
            if found is not None:
                return OptIn(" ".join(test.split()), f"{site.importer}:{site.line + 1}", found.phrase(root))
    return None
