"""The calls a project makes of its own functions and classes whose parameters default to a
CUDA device (`def create_loader(..., device=torch.device("cuda"))`, `def __init__(self,
device="cuda")`): for each such parameter, whether every call in the project passes it, by
keyword or by position, and where those calls are (NPU101: a default no call uses is info).

Read from the text in the same pass over the project's Python files as the flags
(flag_defaults.read_flags hands each text to `CallScan.add`): a CUDA string inside the
parentheses of a module's `def`, or of a module class's `__init__`, is a default; then every
occurrence of the function's (or the class's) name in the project is read. A default counts
as passed only where each occurrence is a definition, an import under the same name, a
comment, or a call whose arguments say so. Any other occurrence leaves it unknown, and its
finding a warning: the name passed as a value (`partial(f)`, a callback), a subclass (whose
`super().__init__` may omit it), an annotation, an import under another name, a string
(`getattr(module, "f")`, `__all__`, a dotted path), a call with `**kwargs` or `*args` before
the parameter, a call whose arguments do not parse alone. No call at all is unknown too: a
library's default is what its users get. Calls from outside the project (a library's users,
a config naming the function) are not seen: the project's own calls are the evidence, as its
own values are for flag_defaults.

And the module functions and classes whose body names CUDA (`def get_gpu_info(i): return
torch.cuda.get_device_properties(i)`, a class whose methods call `torch.cuda.get_rng_state`) that the
project calls (or makes) only under a CUDA test (`if
torch.cuda.is_available():`, `x if device.type == "cuda" else None`, past `if not
torch.cuda.is_available(): return` in its block, or in the CUDA arm beside an NPU one: engine/guards.py, on
the top-level statement around each call): their NPU1xx findings are then like those under
the test (engine/checker.py), a class's in the bodies of its methods. The same occurrences count
(a subclass, an `isinstance`, an `__all__` naming it is another), and each call must be under one;
a test's double replacing it (`monkeypatch.setattr(module, "f", fake)`, `mock.patch("pkg.f")`) is
neither a call nor a use, for both indexes."""

from __future__ import annotations

import ast
import bisect
import hashlib
import os
import re
from typing import Any

from .engine.guards import Branches, and_branches, backend_branches, block_exits, parameter_defaults, written
from .engine.model import Range, Related

DEF = re.compile(r"[ \t]*def[ \t]+(\w+)[ \t]*\(")  # at a line's start (`async def` is never a class's `__init__`)
# a line at the module's level that begins a statement (not a header's closing bracket, a comment, a
# compound statement's later clause)
TOP_LINE = re.compile(r"\n(?![\s#)\]}]|else\b|elif\b|except\b|finally\b)")
TEST_LINE = re.compile(r"[ \t]*(?:el)?if\b|.*\bif\b.*\belse\b")  # an `if`, an `elif`, or a conditional expression
CALLED = re.compile(r"\b(\w+)[ \t]*\(")
ASSERT_LINE = re.compile(r"[ \t]*assert\b")
OPEN_ASSERT = re.compile(r"[ \t]*assert[ \t]*\([ \t]*(?:#.*)?$")  # `assert (` ending its line
CLASS = re.compile(r"class[ \t]+(\w+)")
HEADER = re.compile(r"(?:def|class)[ \t]+(\w+)")  # a module function's or class's, at a line's start
# what a test's double replaces, by its name in a string: `monkeypatch.setattr(module, "f", fake)`,
# `mock.patch("pkg.module.f")`, `patch.object(module, "f")`, the line before that name (not a plain
# `setattr(module, "f", g)`, which may install what calls it)
REPLACED = re.compile(r"\b(?:monkeypatch\.setattr|patch|patch\.object)[ \t]*\([^()]*\Z")
SELF_CALL = re.compile(r"\bcls\(|__class__\(|\btype\(self\)\(")  # `cls(...)`, `self.__class__(...)`, `type(self)(...)`
# a CUDA device or NCCL, the backend, as a string: `def f(device="cuda")`, `def launch(backend="nccl")`
QUOTED_CUDA = re.compile(r"""['"](?:cuda(?::\d+)?|nccl)['"]""")
CUDA_DEVICE = re.compile(r"cuda(?::\d+)?|nccl")
# what brackets are matched over: strings (skipped; a triple quote stops the match), comments, brackets
TOKEN = re.compile(r"""'''|\"\"\"|'(?:\\.|[^'\\\n])*'|"(?:\\.|[^"\\\n])*"|#[^\n]*|[()\[\]{}]""")
MAX_SPAN = 20_000  # characters a header or a call's arguments may span
# an import's names before the one read: `from m import a, name`, `from m import (\n    a,\n    name`
IMPORTED = re.compile(r"^[ \t]*(?:from[ \t]+[\w.]+[ \t]+)?import[ \t]+\(?(?:\s*[\w.]+(?:\s+as\s+\w+)?\s*,)*\s*\Z", re.M)
RENAMED = re.compile(r"\s+as\s")
TRIPLE_QUOTE = re.compile("\"{3}|'{3}")

# (0-based line, positional arguments before any `*args`, keywords passed by name, the CUDA test it
# is under where asked, whether it calls a definition of the same file: `name(...)` where the file
# defines `name`, whether a `*args` or a `**kwargs` is among its arguments: those may pass a parameter
# or not, so they pass none, and omit none; whether it may stand in a string, `"use launch() to spawn"`,
# which then omits nothing)
Call = tuple[int, int, frozenset[str], str, bool, bool, bool]
# what the calls name (the function, or the class of an `__init__`), and each call (path relative to the
# root, 0-based line), in file order
Passed = tuple[str, tuple[tuple[str, int], ...]]
# what the calls name, and the first call that passes no value for the parameter (path relative to the root,
# 0-based line)
Omitted = tuple[str, tuple[str, int]]
# each call (path relative to the root, 0-based line, the CUDA test it is under), in file order
Guarded = tuple[tuple[str, int, str], ...]
# a top-level statement's calls by where their callees end (1-based line, UTF-8 column), each node's parent, its text
Statement = tuple[dict[tuple[int, int], ast.Call], dict[int, ast.AST], str]
UNDER_TESTS = (" (Every call of `{name}` in the project runs only where a test found CUDA ({calls}): on an NPU host "
               "it runs once those tests are changed, if ever, and then this needs the change too.)")
BESIDE_NPU = "called in a CUDA arm beside an NPU arm"


class CallIndex:
    """Per parameter with a CUDA default that every call in the project passes: the calls; per
    module function or class naming CUDA that the project calls only under CUDA tests: the calls and tests."""

    def __init__(self, root: str, passing: dict[tuple[str, str, str, int], Passed],
                 guarded: dict[tuple[str, str, int], Guarded], omitting: dict[tuple[str, str, str, int], Omitted]) -> None:
        self.root = root
        # (path relative to the root, the function's name, the parameter, the 0-based line of its `def`) → Passed
        self.passing = passing
        # the same keys → the first call that leaves the parameter to its default, where every use of the name is read
        self.omitting = omitting
        # (path relative to the root, a module function's or class's name, the 0-based line of its `def`/`class`) → Guarded
        self.guarded = guarded
        self._digest: str | None = None

    def passed(self, path: str, function: str, parameter: str, line: int) -> Passed | None:
        """The calls that pass `parameter` of the function defined at `line` of `path`, when
        every use of its name in the project is such a call; None when one is not, or there is none."""
        return self.passing.get((os.path.relpath(path, self.root), function, parameter, line))

    def omitted(self, path: str, function: str, parameter: str, line: int) -> Omitted | None:
        """The first call in the project that passes no value for `parameter` of the function defined
        at `line` of `path` (neither by keyword nor by position, nor through `*args`/`**kwargs`), where
        every use of its name is read; None otherwise."""
        return self.omitting.get((os.path.relpath(path, self.root), function, parameter, line))

    def under_tests(self, path: str, function: str, line: int) -> tuple[str, tuple[Related, ...]] | None:
        """Why the module function (or the methods of the class) defined at `line` of `path` runs only
        where a CUDA test passed, and its calls, when every use of its name in the project is a call under
        one; else None."""
        own = os.path.relpath(path, self.root)
        found = self.guarded.get((own, function, line))
        if found is None:
            return None
        related = tuple(Related(Range(at, 0, at, 0), f"called under `{test}`" if test else BESIDE_NPU,
                                "" if where == own else os.path.join(self.root, where)) for where, at, test in found)
        return UNDER_TESTS.format(name=function, calls=counted(found, own)), related

    def digest(self) -> str:
        """What the answers are, for result caches (once: the index is complete when asked)."""
        if self._digest is None:
            shown = repr((sorted(self.passing.items()), sorted(self.guarded.items()), sorted(self.omitting.items())))
            self._digest = hashlib.blake2b(shown.encode(), digest_size=12).hexdigest()
        return self._digest


def counted(calls: tuple[tuple[str, int, str], ...] | tuple[tuple[str, int], ...], own: str) -> str:
    """`2 calls, e.g. train.py:12`: the first in another file (lines in the file being edited move)."""
    where = next((f"{path}:{line + 1}" for path, line, *_ in calls if path != own), "in this file")
    return f"1 call, {where}" if len(calls) == 1 else f"{len(calls)} calls, e.g. {where}"


class Definition:
    __slots__ = ("path", "name", "function", "line", "parameters")

    def __init__(self, path: str, name: str, function: str, line: int, parameters: list[tuple[str, int | None]]) -> None:
        self.path = path  # relative to the root
        self.name = name  # what a call names: the function's, or the class's for an `__init__`
        self.function = function
        self.line = line  # of the `def`, 0-based
        self.parameters = parameters  # (name, position among a call's positional arguments, None: keyword only)


class CallScan:
    """The project's texts as the shared read hands them (`add`), then the index (`index`)."""

    def __init__(self, root: str) -> None:
        self.root = root
        self.texts: list[tuple[str, str]] = []
        self.definitions: list[Definition] = []
        # module functions and classes naming CUDA: (path, name, 0-based line of the `def` or `class`)
        self.functions: list[tuple[str, str, int]] = []
        self.tested: set[str] = set()  # what is called on a line that tests CUDA, or in its block

    def add(self, path: str, text: str) -> None:
        """`text`: its line breaks written `\n` (flag_defaults.read_flags)."""
        self.texts.append((path, text))
        if "cuda" in text or "nccl" in text:
            where = os.path.relpath(path, self.root)
            self.definitions += _definitions(where, text)
            self.functions += ((where, name, line) for name, line in _cuda_functions(text))
            self.tested.update(_tested_calls(text))

    def index(self) -> CallIndex:
        """Every occurrence of the names defined with a CUDA default, and of the module functions
        naming CUDA that are called on a line testing CUDA or below one, in the files that have one."""
        texts, self.texts = self.texts, []
        names = {d.name for d in self.definitions}
        tested = {name for _, name, _ in self.functions if name in self.tested}
        calls: dict[str, list[tuple[str, Call]]] = {}
        guarded: dict[str, list[tuple[str, Call]]] = {}
        unknown: set[str] = set()
        unguarded: set[str] = set()
        for path, text in texts:
            where = os.path.relpath(path, self.root)
            for name in [n for n in names if n in text]:
                found = _calls(text, name)
                if found is None:
                    unknown.add(name)
                    names.discard(name)
                elif found:
                    calls.setdefault(name, []).extend((where, call) for call in found)
            statements: dict[int, Statement | None] = {}  # the file's top-level statements parsed, by offset
            for name in [n for n in tested if n in text]:
                tests = _calls(text, name, statements)
                if tests is None:
                    unguarded.add(name)
                    tested.discard(name)
                elif tests:
                    guarded.setdefault(name, []).extend((where, call) for call in tests)
        under = {}
        for path, name, line in self.functions:
            # another file's `name(...)` calls that file's own `name`
            reached = [(where, call[0], call[3]) for where, call in guarded.get(name, []) if where == path or not call[4]]
            if reached and name not in unguarded:
                under[path, name, line] = tuple(reached)
        passing, omitting = {}, {}
        for d in self.definitions:
            made = [(where, call) for where, call in calls.get(d.name, []) if where == d.path or not call[4]] \
                if d.name not in unknown else []
            for parameter, position in d.parameters if made else ():
                given = [parameter in call[2] or (position is not None and call[1] > position) for _, call in made]
                if all(given):
                    passing[d.path, d.function, parameter, d.line] = d.name, tuple((where, call[0]) for where, call in made)
                elif (first := next((m for m, g in zip(made, given) if not g and not m[1][5] and not m[1][6]),
                                    None)) is not None:
                    omitting[d.path, d.function, parameter, d.line] = d.name, (first[0], first[1][0])
        return CallIndex(self.root, passing, under, omitting)


def _definitions(path: str, text: str) -> list[Definition]:
    """The module functions and module classes' `__init__`s that a CUDA string (a device, or
    NCCL) stands in the parameters of."""
    found: dict[int, Definition] = {}
    for quoted in QUOTED_CUDA.finditer(text):
        at = quoted.start() + 1
        header = _header(text, at)
        if header is not None and header.start() not in found:
            definition = _definition(path, text, header, at)
            if definition is not None:
                found[header.start()] = definition
    return list(found.values())


def _header(text: str, at: int) -> re.Match | None:
    """The nearest `def` line before `at` (a few words "def" back: `default=` is none)."""
    start = at
    for _ in range(8):
        start = text.rfind("def", 0, start)
        if start < 0:
            return None
        header = DEF.match(text, text.rfind("\n", 0, start) + 1)
        if header is not None:
            return header
    return None


def _definition(path: str, text: str, header: re.Match, at: int) -> Definition | None:
    line_start = header.start()
    opening = header.end() - 1
    closing = _closing(text, opening)
    if closing is None or not opening < at < closing:
        return None
    indent, function = header.start(1) - line_start - len("def "), header.group(1)
    if indent == 0:
        name = function
    elif function == "__init__" and (name := _class_of(text, line_start, header.group()[:indent])) is None:
        return None
    elif function != "__init__":
        return None
    try:
        parsed = ast.parse(f"def f{text[opening:closing + 1]}: pass").body[0]
    except (SyntaxError, ValueError, RecursionError):
        return None
    parameters = _cuda_parameters(parsed.args, 1 if indent else 0)  # type: ignore[attr-defined]
    return Definition(path, name, function, text.count("\n", 0, line_start), parameters) if parameters else None


def _class_of(text: str, line_start: int, indent: str) -> str | None:
    """The module class whose body the line (indented by `indent`) stands in, directly."""
    line = text.rfind("\nclass", 0, line_start)
    owner = CLASS.match(text, line + 1 if line >= 0 else 0)
    if owner is None:
        return None
    body = text[owner.end():line_start]
    # every line in between that begins a statement is inside the class at this depth or deeper
    for row in body.split("\n")[1:]:
        if row.strip() and not row.startswith(indent) and not row.lstrip().startswith("#"):
            return None
    end = TOP_LINE.search(text, line_start)
    if SELF_CALL.search(text, owner.end(), end.start() if end is not None else len(text)):
        return None  # the class makes itself without its name: calls not read
    return owner.group(1)


def _cuda_parameters(arguments: ast.arguments, skipped: int) -> list[tuple[str, int | None]]:
    """(name, position among a call's positional arguments, None if keyword-only) of each
    parameter whose default holds a CUDA device string or NCCL's name; `skipped`: the positions a call does not fill (`self`)."""
    positional = [*arguments.posonlyargs, *arguments.args]
    found = []
    for arg, default in parameter_defaults(arguments):
        if default is not None and any(type(n) is ast.Constant and type(n.value) is str
                                       and CUDA_DEVICE.fullmatch(n.value) for n in ast.walk(default)):
            found.append((arg.arg, positional.index(arg) - skipped if arg in positional else None))
    return found


def _closing(text: str, opening: int) -> int | None:
    """Where the bracket at `opening` closes, past strings and comments; None past MAX_SPAN or a triple quote."""
    depth = 0
    for token in TOKEN.finditer(text, opening, opening + MAX_SPAN):
        mark = token.group()
        if mark in ("(", "[", "{"):
            depth += 1
        elif mark in (")", "]", "}"):
            depth -= 1
            if depth == 0:
                return token.start()
        elif mark in ("'''", '"""'):
            return None
    return None


def _calls(text: str, name: str, statements: dict[int, Statement | None] | None = None) -> list[Call] | None:
    """The calls of `name` in the text, or None where an occurrence is something else; with
    `statements` (the text's top-level statements parsed, filled as they are), or one is under
    no CUDA test."""
    calls: list[Call] = []
    defines = re.search(rf"^(?:async[ \t]+)?(?:def|class)[ \t]+{name}\b", text, re.M) is not None
    triples: list[int] | None = None  # where triple quotes are, found once where asked
    for found in re.finditer(rf"\b{name}\b", text):
        start, end = found.span()
        line_start = text.rfind("\n", 0, start) + 1
        before = text[line_start:start]
        if "#" in before and before[:before.index("#")].count("'") % 2 == 0 \
                and before[:before.index("#")].count('"') % 2 == 0:
            continue  # in a comment
        if before.strip() in ("def", "class", "async def"):
            continue  # the definition, or another of the same name (whose calls are read with these)
        if RENAMED.match(text, end) is None and IMPORTED.search(text, max(0, line_start - 2000), start):
            continue  # imported under its own name
        if text[end:end + 1] in ("'", '"') and REPLACED.search(before):
            continue  # a double replaces it (a test's `monkeypatch.setattr`): neither a call nor a use
        opening = end + len(text[end:end + 8]) - len(text[end:end + 8].lstrip(" \t"))
        if text.startswith("(", opening):
            closing = _closing(text, opening)
            call = _parsed(text[opening:closing + 1]) if closing is not None else None
            test = "" if statements is None or call is None else _test_over(text, start, end, statements)
            if call is not None and test is not None:
                local = defines and text[start - 1:start] != "."
                if triples is None:
                    triples = [m.start() for m in TRIPLE_QUOTE.finditer(text)]
                quoted = before.count('"') % 2 == 1 or before.count("'") % 2 == 1 \
                    or bisect.bisect(triples, start) % 2 == 1
                calls.append((text.count("\n", 0, start), call[0], call[1], test, local, call[2], quoted))
                continue
        return None
    return calls


def _parsed(arguments: str) -> tuple[int, frozenset[str], bool] | None:
    """(positional arguments before any `*args`, the keywords passed by name, whether a `*args` or
    `**kwargs` is there) of the parenthesised arguments; None if they do not parse alone."""
    try:
        call = ast.parse("f" + arguments, mode="eval").body
    except (SyntaxError, ValueError, RecursionError):
        return None
    if type(call) is not ast.Call:
        return None
    positional = next((i for i, a in enumerate(call.args) if type(a) is ast.Starred), len(call.args))
    unpacked = positional < len(call.args) or any(kw.arg is None for kw in call.keywords)
    return positional, frozenset(kw.arg for kw in call.keywords if kw.arg is not None), unpacked


def _cuda_functions(text: str) -> list[tuple[str, int]]:
    """(name, 0-based line of its `def` or `class`) of each module function and class whose body
    has the word cuda (a class's methods run only where it is made)."""
    found = []
    at = text.find("cuda")
    while at >= 0:
        start = max(text.rfind("\ndef ", 0, at), text.rfind("\nclass ", 0, at)) + 1
        header = HEADER.match(text, start) if start > 0 or text.startswith(("def ", "class ")) else None
        # the function's end: the next line at the module's level after its header's
        end = TOP_LINE.search(text, header.end() if header is not None else at)
        stop = end.start() if end is not None else len(text)
        if header is not None and at < stop:
            found.append((header.group(1), text.count("\n", 0, start)))
        at = text.find("cuda", max(stop, at + 4))
    return found


def _tested_calls(text: str) -> set[str]:
    """The names called on a line that tests CUDA (`if torch.cuda.is_available():`, `x if
    cuda else y`) and in the block under it (after `if not ...:` or `if ... != ...:`, which may
    return, the rest of its block too): the names whose every call may be under a test."""
    names: set[str] = set()
    at = text.find("cuda")
    while at >= 0:
        line_start = text.rfind("\n", 0, at) + 1
        line_end = text.find("\n", at)
        line_end = len(text) if line_end < 0 else line_end
        head = line_start if TEST_LINE.match(text, line_start, line_end) else _assert_head(text, line_start)
        if head is not None:
            line_start, line = head, text[head:line_end]
            indent = len(line) - len(line.lstrip())
            if line.lstrip().startswith(("if not ", "assert")) or "!=" in line:
                indent -= 1  # the lines beside it too
            end = line_end
            while end < len(text):  # the block: the lines below indented deeper (or blank)
                following = text.find("\n", end + 1)
                following = len(text) if following < 0 else following
                row = text[end + 1:following]
                if row.strip() and len(row) - len(row.lstrip()) <= indent:
                    break
                end = following
            names.update(CALLED.findall(text, line_start, end))
            line_end = end
        at = text.find("cuda", line_end)
    return names


def _assert_head(text: str, line_start: int) -> int | None:
    """Where the `assert` the line belongs to begins (`assert torch.cuda.is_available()`, or the
    line after `assert (`), or None."""
    line_end = text.find("\n", line_start)
    if ASSERT_LINE.match(text, line_start, line_end if line_end >= 0 else len(text)):
        return line_start
    if line_start < 2:
        return None
    above = text.rfind("\n", 0, line_start - 1) + 1
    return above if OPEN_ASSERT.match(text, above, line_start - 1) else None


def _test_over(text: str, start: int, end: int, statements: dict[int, Statement | None]) -> str | None:
    """The CUDA test the callee from `start` to `end` runs under, in its top-level statement
    (engine/guards.py: an `if`'s or a conditional expression's CUDA arm, an `and` after a CUDA
    test, the rest of a block past `if not torch.cuda.is_available(): return` (or `continue`), the CUDA arm
    beside an NPU arm); None under none, or where the statement does not parse."""
    first = text.rfind("\n", 0, start)
    while first > 0 and TOP_LINE.match(text, first) is None:
        first = text.rfind("\n", 0, first)
    first += 1
    if first not in statements:
        line_end = text.find("\n", start)
        after = TOP_LINE.search(text, line_end if line_end >= 0 else len(text))
        statements[first] = _calls_in(text[first:after.start() if after is not None else len(text)])
    read = statements[first]
    if read is None:
        return None
    callees, parents, statement = read
    line_start = text.rfind("\n", 0, start) + 1
    # where the callee ends, as ast counts (1-based lines in the statement, UTF-8 bytes)
    target = callees.get((text.count("\n", first, start) + 1, len(text[line_start:end].encode())))
    node: ast.AST | None = target
    while node is not None and target is not None:
        parent = parents.get(id(node))
        kind = type(parent)
        found: list[Branches | None] = []
        if kind in (ast.If, ast.IfExp, ast.Match):
            head = parent
            while type(parents.get(id(head))) is ast.If and parents[id(head)].orelse == [head]:  # type: ignore[attr-defined]
                head = parents[id(head)]  # an `elif`: its chain begins above
            found = list(backend_branches(head, set()))  # type: ignore[arg-type]
        elif kind is ast.BoolOp:
            found = [and_branches(parent)]  # type: ignore[arg-type]
        found += block_exits(parent)
        for branches in found:
            test = _arm_test(statement, branches, target) if branches is not None else None
            if test is not None:
                return test
        node = parent
    return None


def _calls_in(statement: str) -> Statement | None:
    """The calls of a top-level statement by where their callees end, and each node's parent;
    None if it does not parse."""
    try:
        tree = ast.parse(statement)
    except (SyntaxError, ValueError, RecursionError):
        return None
    callees: dict[tuple[int, int], ast.Call] = {}
    parents: dict[int, ast.AST] = {}
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            parents[id(child)] = node
        if type(node) is ast.Call:
            callees[node.func.end_lineno, node.func.end_col_offset] = node
    return callees, parents, statement


def _arm_test(text: str, branches: Branches, node: ast.AST) -> str | None:
    """The test of the CUDA arm that holds `node`, in a chain without an NPU arm; "the CUDA
    arm beside the NPU's" in one with (or another backend's arm)."""
    for test, branch in branches.guarded:
        if _holds(branch, node):
            return written(test) or " ".join((ast.get_source_segment(text, test) or "").split())
    if any(_holds(branch, node) for branch in (*branches.never, *branches.other)):
        return ""
    return None


def _holds(branch: Any, node: Any) -> bool:
    """Whether `node` lies in the branch (a node, or a list of statements), by their spans."""
    first, last = (branch[0], branch[-1]) if isinstance(branch, list) else (branch, branch)
    return ((first.lineno, first.col_offset) <= (node.lineno, node.col_offset)
            and (node.end_lineno, node.end_col_offset) <= (last.end_lineno, last.end_col_offset))
