"""Which tests of a project's own options pass only where the user turns one on: a flag the project
leaves off (flag_defaults.py: it gives the name no literal but False, or the name is an option None
unless the command line gives it, or it is set only from such a flag: `self.is_vllm = use_vllm`), or
a string option compared with values the project never gives it (`args.optimizer == "Adam8bit"`).
Read for the code under such a test (rules/harmless_calls.py flag_off) and for the modules the
project imports only there (opt_in_modules.py)."""

from __future__ import annotations

import ast
import os
import re
from collections.abc import Callable, Collection
from dataclasses import dataclass

from .engine.guards import CUDA_WORD, NPU_WORD, OTHER_WORD
from .engine.walk import last_name
from .flag_defaults import FACT_PREFIXES, FlagIndex


@dataclass(frozen=True)
class OffOption:
    """An operand of a test that passes only where the user turns an option on."""

    kind: str  # "flag", "unset" (an option None unless given) or "option" (a string option)
    name: str  # the option tested (for a flag set from another: that other)
    place: tuple[str, int]  # where its default is given: the file and the 0-based line
    alias: str = ""  # the name tested, where it is set from the flag `name`
    value: str = ""  # "option": its declared default
    tested: tuple[str, ...] = ()  # "option": the values the test needs

    def phrase(self, root: str) -> str:
        """What the project gives the option, and where (relative to `root`): the middle of a reason."""
        place = f"{os.path.relpath(self.place[0], root)}:{self.place[1] + 1}"
        if self.kind == "option":
            tested = " or ".join(f'`"{v}"`' for v in self.tested)
            return f'`{self.name}` defaults to `"{self.value}"` ({place}) and no file of the project gives it {tested}'
        if self.kind == "unset":
            return (f"`{self.name}` is an option None unless the command line gives it ({place}), and no file of the "
                    "project gives it a value")
        if self.alias:
            return f"the project sets `{self.alias}` from `{self.name}`, which it gives no value but False ({place})"
        return f"the project gives `{self.name}` no value but False ({place})"


def off_option(operand: ast.expr, flags: FlagIndex, path: str | None,
               computed: Callable[[str], bool]) -> OffOption | None:
    """What the operand (a test, or one of the tests an `and` joins) needs on that the project leaves
    off, with where its default is given; None where it is no such test. `computed(name)`: whether the
    tested file gives the name a value it computes (computes()), which may be True."""
    if isinstance(operand, (ast.Name, ast.Attribute)) or (name := key_read(operand)):
        name = last_name(operand) or name  # `args["write_profile"]`: the option named by the key
        place = flags.default_off(name, path) if not name.lower().startswith(FACT_PREFIXES) else None
        if place is not None:
            return OffOption("unset" if name in flags.unset else "flag", name, place) if not computed(name) else None
        found = flags.alias_off(name, path)
        return OffOption("flag", found[0], found[1], alias=name) if found is not None and not computed(name) else None
    if (option := compared_option(operand)) is not None:
        given = flags.never_given(last_name(option[0]), option[1])
        if given is not None:
            return OffOption("option", last_name(option[0]), given[1:], value=given[0], tested=tuple(option[1]))
    return None


def key_read(node: ast.expr) -> str:
    """The key of `args["write_profile"]`, an option read from a dict of options; "" otherwise."""
    if type(node) is ast.Subscript and type(node.slice) is ast.Constant and type(node.slice.value) is str:
        return node.slice.value
    return ""


def computes(text: str, name: str, sources: Collection[str] = ()) -> bool:
    """Whether the file gives the flag a value it computes (`self.use_amp = config.use_mixed_precision
    and dist.allow_mixed_precision()`, `use_amp=not args.cpu`): one that may be True, which the
    project's literals do not show. A literal, a dataclass field (whose default flag_defaults reads),
    or the flag passed on under its own name (`self.use_amp = args.use_amp`, `kwargs.get("use_amp",
    False)`) or under one of the `sources` it is set from (`self.is_vllm = use_vllm`) is no such value."""
    names = "|".join(re.escape(n) for n in (name, *sorted(sources)))
    passed_on = re.compile(rf"(?:True|False|None)\b|(?:dataclasses\.)?field\(|[\w.]*\b(?:{names})\b(?![ \t]*[\w.(\[])"
                           rf"|.*(['\"]){re.escape(name)}\1")
    # the name first, its word checked apart: a pattern that begins with a lookbehind is tried at every offset
    for found in re.finditer(rf"{re.escape(name)}[ \t]*(?::[^=\n]*)?=(?!=)[ \t]*(?=\S)", text):
        at = found.start()
        if (at == 0 or not (text[at - 1].isalnum() or text[at - 1] == "_")) and not passed_on.match(text, found.end()):
            return True
    return False


def _names_backend(value: str) -> bool:
    """A device or a backend: guards' words (`cuda`, `nccl`, `npu`, `xpu`, ...), or `gpu`."""
    return any(word.search(value) for word in (CUDA_WORD, NPU_WORD, OTHER_WORD)) or "gpu" in value


def compared_option(test: ast.expr) -> tuple[ast.Name | ast.Attribute, list[str]] | None:
    """`option == "a"`, `"a" == option`, `option in ("a", "b")`: the option and the strings it
    must be one of."""
    if type(test) is not ast.Compare or len(test.ops) != 1:
        return None
    left, op, right = test.left, test.ops[0], test.comparators[0]
    if type(op) is ast.Eq and type(left) is ast.Constant and isinstance(right, (ast.Name, ast.Attribute)):
        left, right = right, left
    if not isinstance(left, (ast.Name, ast.Attribute)):
        return None
    if type(op) is ast.Eq:
        values = [right]
    elif type(op) is ast.In and isinstance(right, (ast.Tuple, ast.List, ast.Set)):
        values = right.elts
    else:
        return None
    strings = [v.value for v in values if type(v) is ast.Constant and type(v.value) is str]
    if not strings or len(strings) != len(values) or any(_names_backend(v.lower()) for v in strings):
        return None  # `device.type == "cuda"` tests a backend (engine/guards.py), no option
    return left, strings
