"""Switches read from the environment that are off where the variable is unset: `if
os.getenv("BUILD_CUDA_EXTENSIONS", "0") == "1":`, `os.environ.get("USE_FLASH", "false").lower() in
("1", "true")`, `int(os.getenv("FORCE_CUDA", "0"))`, `if os.getenv("WITH_APEX"):`. Code under one
runs only where the user sets the variable (harmless_calls.flag_off lowers it, as it does a flag
the project leaves off); a switch on by default (`os.getenv("USE_CUDA", "1") == "1"`) is not one."""

from __future__ import annotations

import ast
import re
from collections.abc import Callable

# what is done to the value before it is tested, and keeps the test's meaning
_CASE: dict[str, Callable[[str], str]] = {"lower": str.lower, "upper": str.upper, "strip": str.strip,
                                          "casefold": str.casefold}


def _read(node: ast.expr) -> tuple[str, str | None] | None:
    """The variable and its default (None: none given) of `os.getenv("X", "0")` or
    `os.environ.get("X", "0")`; None for anything else."""
    if type(node) is not ast.Call or node.keywords or not 1 <= len(node.args) <= 2:
        return None
    func = node.func
    if type(func) is not ast.Attribute or not (
            func.attr == "getenv" and type(func.value) is ast.Name and func.value.id == "os"
            or func.attr == "get" and type(func.value) is ast.Attribute and func.value.attr == "environ"):
        return None
    name = node.args[0]
    default = node.args[1] if len(node.args) == 2 else None
    if type(name) is not ast.Constant or type(name.value) is not str:
        return None
    if default is None:
        return name.value, None
    if type(default) is not ast.Constant or type(default.value) not in (str, int, bool):
        return None
    return name.value, str(default.value)


def _value(node: ast.expr, held: Callable[[str], ast.expr | None]) -> tuple[str, str | int | None] | None:
    """The variable and its default as the test sees it: a read, a read changed in case
    (`.lower()`), or a read made an integer (`int(...)`: the default an int); or a name that holds
    one (`held`: `cuda_ext = os.getenv("BASICSR_EXT")`, then `if cuda_ext == "True":`)."""
    if type(node) is ast.Name:
        value = held(node.id)
        return _value(value, _nothing) if value is not None else None
    if type(node) is ast.Call and type(node.func) is ast.Attribute and node.func.attr in _CASE \
            and not node.args and not node.keywords:
        inner = _value(node.func.value, held)
        if inner is None or type(inner[1]) is int:
            return None
        name, default = inner
        return name, _CASE[node.func.attr](default) if isinstance(default, str) else None
    if type(node) is ast.Call and type(node.func) is ast.Name and node.func.id == "int" and len(node.args) == 1 \
            and not node.keywords:
        read = _read(node.args[0])
        if read is None or read[1] is None or not read[1].lstrip("-").isdigit():
            return None  # int(None) raises, and so does int() of what is no integer: not a switch
        return read[0], int(read[1])
    return _read(node)


def _constants(node: ast.expr) -> list[object] | None:
    """The values of a constant or of a display of constants (`("1", "true")`); None otherwise."""
    values: list[object] = []
    for element in node.elts if isinstance(node, (ast.Tuple, ast.List, ast.Set)) else [node]:
        if type(element) is not ast.Constant:
            return None
        values.append(element.value)
    return values


def _nothing(name: str) -> None:
    return None


def unset_off(test: ast.expr, held: Callable[[str], ast.expr | None] = _nothing) -> str | None:
    """The variable, where `test` reads one from the environment and is false where it is unset
    (its default, or None where the read gives none). `held(name)`: the value a name is given, where
    it is given one only."""
    if type(test) is ast.Compare and len(test.ops) == 1:
        read, values = _value(test.left, held), _constants(test.comparators[0])
        if read is None or values is None:
            return None
        name, unset = read
        op = type(test.ops[0])
        if op is ast.Eq and len(values) == 1 or op is ast.In and type(test.comparators[0]) is not ast.Constant:
            return name if unset not in values else None
        if op is ast.NotEq and len(values) == 1:
            return name if unset == values[0] else None
        return None
    read = _value(test, held)
    if read is None:
        return None
    name, unset = read
    return name if not unset else None  # None, "" or 0: unset gives nothing; "0" is a true string


# a top-level `NAME = os.getenv(...)` (or `os.environ.get(...)`, and what a test does to it) on one line
_MODULE_READ = re.compile(r"^([A-Za-z_]\w*)[ \t]*=(?!=)[ \t]*(.*\bos\.(?:getenv|environ\.get)\(.*)$", re.MULTILINE)


def module_reads(text: str) -> dict[str, ast.expr]:
    """The module's globals that hold a read of the environment, each assigned once at the top
    level of the file (`BUILD_EXT = os.getenv("BUILD_EXT", "0")`), with the value. Read from the
    text (a fact of the whole text, read again for every edit)."""
    out: dict[str, ast.expr] = {}
    for found in _MODULE_READ.finditer(text):
        name = found.group(1)
        if len(re.findall(rf"^{name}[ \t]*(?::[^=\n]*)?[-+*/|&]?=(?!=)", text, re.MULTILINE)) != 1:
            continue  # assigned again: which value a test sees is not known
        try:
            value = ast.parse(found.group(2).split("#")[0], mode="eval").body
        except SyntaxError:
            continue
        out[name] = value
    return out
