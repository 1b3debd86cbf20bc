"""The options a project leaves off. The boolean flags: names to which its Python files give only the
literal `False` (a dataclass field `compile_model: bool = False` or `use_flash_attn: bool =
field(default=False, ...)`, a parameter default `use_tf32=False`, `self.use_tf32 = False`,
argparse's `action="store_true"` or `default=False`; an argparse option with no default but None,
`add_argument("--write_profile", default=None)`, which is None unless the command line gives it),
never `True` nor a string (a caller's `compile_model=True`, `set_defaults(...=True)`,
`action="store_false"`, `write_profile="prof.json"`; a boolean field whose default is None counts as
`True`: a config file gives its value). Code under `if
cfg.compile_model:` then runs only where the user turns the flag on (NPU1xx, NPU3xx, NPU307).
And the string options: the literal strings the files give a name (`optimizer: str = "AdamW"`,
`field(default="AdamW")`, `optimizer="AdamW"`, `"optimizer": "AdamW"` in a dict, argparse's
`default="adamw"`), so that code under `if args.optimizer == "Adam8bit":` runs only where the
user chooses a value the project never gives. Read from the text with patterns, not parsed: a
project's every file is read once per run, and a name mentioned in a string counts as given
(a `True` there keeps the finding)."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Iterator
from typing import Callable

from .custom_ops import MAX_FILE_BYTES, project_files
from .engine.text import with_newlines
from .sources import SourceError, read_regular

# a field's default: `= field(default=False`, also with `default=` on the next line (HfArgumentParser's
# dataclasses); and a boolean field's None default (`: bool | None = None`, `: Optional[bool] = field(default=None`).
# Found by a word first (a pattern that starts with a literal is quick to find, one with `\b` first is not: 0.7 s over
# transformers), then the declaration before it on its line
FIELD = re.compile(r"field\(\s*default[ \t]*=[ \t]*(True|False)\b")
UNSET = re.compile(r"bool(?<!\wbool)\b[^=\n]*=[ \t]*(?:(?:dataclasses\.)?field\(\s*default[ \t]*=[ \t]*)?None\b")
# `use_flash_attn: bool = ` before `field(`, `flash_attention: ` before `bool`
DECLARATION = re.compile(r"[ \t]*([A-Za-z_]\w*)[ \t]*:[^=\n]*(?:=[ \t]*(?:dataclasses\.)?)?$")
# argparse: `add_argument("--compile-model", action="store_true")`, `add_argument("-c", "--use_tf32", default=False)`,
# `add_argument("--ds.packing_samples", ...)` (read as `args.ds.packing_samples`: the flag is its last name);
# its other arguments may hold strings with brackets (`help="torch.compile() the model"`) and one level of calls
# (`choices=range(3)`)
_ARGUMENT_PART = r"""(?:[^()'"]|'[^'\n]*'|"[^"\n]*")"""
ARGUMENT = re.compile(r"add_argument\(\s*(?:(['\"])-\w\1\s*,\s*)?(['\"])--([\w.-]+)\2"
                      rf"((?:{_ARGUMENT_PART}|\({_ARGUMENT_PART}*\))*)\)")
ARGUMENT_VALUE = re.compile(r"""\b(?:action\s*=\s*['"]store_(true|false)['"]|default\s*=\s*(True|False)\b)""")
# an option None unless the command line gives it: no default but None, not required
ARGUMENT_DEFAULT = re.compile(r"\b(?:default\s*=\s*(?!None\b)|required\s*=\s*True\b)")
# a value given a name, found first (`==`, `!=`, `<=`, `>=` skipped where found): `= False`, `=True`, `= "AdamW"`;
# `"optimizer": "AdamW"`, `"use_tf32": True` (a dict's key before it). The value alone, a string word-like and up to
# 64 characters. Each pattern begins with its literal, quick to find (one beginning with
# `[=:]` took 0.2 s over transformers, these 0.08 s)
_STRING = r"""(['"])([\w.:/-]{1,64})\2"""
# what ends the value: `x = "a" + b` gives nothing read
_END = r"(?=[ \t]*(?:[,)}\]#;\r\n]|$))"
# `= False if c else True` (group 4): either, as True is
VALUES = tuple(re.compile(start + r"[ \t]*(?:(True|False)\b|" + _STRING + r")(?:" + _END + r"|([ \t]+if\b))")
               for start in ("=", '":', "':"))
# what stands before it on its line: `name`, `name: bool`, `self.name` (the last name), `"name"` (a dict's key),
# `args["name"]`
TARGET = re.compile(r"""\b([A-Za-z_]\w*)(?:['"]\]?)?[ \t]*(?::[ \t]*[\w\[\]. |]+?[ \t]*)?$""")
# a boolean that states a fact of the data, the host or the run rather than a choice: `is_moe_model` (computed from
# a model's config where it is given), `has_bias`, `HAVE_TE` (a package found), and what the run does (`do_train`,
# `do_eval`: its main path). Such a name is an option only where the project sets it from one (`self.is_vllm =
# use_vllm`).
FACT_PREFIXES = ("is_", "has_", "have_", "do_")  # of the name in lower case (`HAS_FLASH_ATTN`)
# a flag set from another under a name of its own, in a statement alone: `self.is_vllm = use_vllm`, `self.use_amp =
# args.amp` (the last name). Only an attribute of `self`: a plain `x = y` is too common to read in every file.
ALIAS = re.compile(r"self\.(\w+)[ \t]*=[ \t]*(?:[A-Za-z_]\w*\.)*([A-Za-z_]\w*)[ \t]*(?=[\r\n#;]|$)", re.M)
FIELD_DEFAULT = re.compile(r"field\(\s*default[ \t]*$")  # `default="x"` is a field's: its declaration is the name
ARGUMENT_STRING = re.compile(r"""\bdefault\s*=\s*(['"])([\w.:/-]{1,64})\1""")


class FlagIndex:
    """Per name, where the project first gives it `False`, and whether it ever gives it `True`;
    the strings it gives it, each where first; and the names it sets from other names."""

    def __init__(self, read: bool = True) -> None:
        self.read = read  # False: the project's files are not read yet, so any flag may be on
        self.off: dict[str, dict[str, int]] = {}  # name → file → the 0-based line of its first False there
        self.on: set[str] = set()
        self.unset: set[str] = set()  # the off names that are options None unless given (`default=None`)
        self.strings: dict[str, set[str]] = {}  # name → the strings given it anywhere
        self.declared: dict[str, tuple[str, str, int]] = {}  # name → its first declared default (value, file, line)
        self.aliases: dict[str, set[str]] = {}  # name → the names it is set from (`self.is_vllm = use_vllm`)
        self._digest: str | None = None

    def add(self, name: str, value: bool | None, path: str, line: int) -> None:
        """`value`: the literal given, or None for an option the command line alone gives a value."""
        if value:
            self.on.add(name)
        else:
            self.off.setdefault(name, {}).setdefault(path, line)
            if value is None:
                self.unset.add(name)

    def default_off(self, name: str, path: str | None = None) -> tuple[str, int] | None:
        """Where `name` is given False (or is an option None unless given), when the project never
        gives it True, nor a string: in `path` if it is one of those files, else in the first."""
        places = self.off.get(name)
        if places is None or name in self.on or name in self.strings:
            return None
        where = path if path in places else next(iter(places))
        return where, places[where]

    def turns_on(self, names: Iterable[str]) -> bool:
        """Whether the project gives any of `names` True (where it is not read yet, any may be)."""
        return not self.read or not self.on.isdisjoint(names)

    def sources(self, name: str) -> frozenset[str]:
        """The names the project sets `name` from (ALIAS)."""
        return frozenset(self.aliases.get(name, ()))

    def alias_off(self, name: str, path: str | None = None) -> tuple[str, tuple[str, int]] | None:
        """For a name the project gives no literal, only the values of other names (`self.is_vllm =
        use_vllm`): the first of them, and where it is given False, when each is a flag left off
        (default_off) and none is named for a fact; None otherwise."""
        sources = self.aliases.get(name)
        if not sources or name in self.off or name in self.on or name in self.strings:
            return None
        found = []
        for source in sorted(sources):
            place = self.default_off(source, path) if not source.lower().startswith(FACT_PREFIXES) \
                else None
            if place is None:
                return None
            found.append((source, place))
        return found[0]

    def add_string(self, name: str, value: str, path: str, line: int, declared: bool) -> None:
        self.strings.setdefault(name, set()).add(value)
        if declared:
            self.declared.setdefault(name, (value, path, line))

    def never_given(self, name: str, values: Iterable[str]) -> tuple[str, str, int] | None:
        """The declared default of the string option `name` (value, file, 0-based line) when no
        file gives it any of `values`; None where it has none (an attribute of data, `x.type`,
        `config.model_type`, is given values but declares none) or one is given."""
        declared = self.declared.get(name)
        if declared is None or any(value in self.strings[name] for value in values):
            return None
        return declared

    def digest(self) -> str:
        """What the answers are, for result caches (once: the index is complete when asked)."""
        if self._digest is None:
            shown = repr((sorted((n, sorted(p.items())) for n, p in self.off.items() if n not in self.on),
                          sorted(self.on), sorted((n, sorted(v)) for n, v in self.strings.items()),
                          sorted(self.declared.items()), sorted(self.unset),
                          sorted((n, sorted(s)) for n, s in self.aliases.items())))
            self._digest = hashlib.blake2b(shown.encode(), digest_size=12).hexdigest()
        return self._digest


def python_file(path: str) -> bool:
    return path.endswith(".py")


def python_files(root: str, exclude: tuple[str, ...] = ()) -> Iterator[str]:
    """The project's Python files, as read_flags reads them."""
    return project_files(root, exclude, python_file)


def read_flags(root: str, exclude: tuple[str, ...] = (), each: Callable[[str, str], None] | None = None,
               files: Iterable[str] | None = None) -> FlagIndex:
    """The literal booleans the project's Python files give each name (a file that is a link is
    not read, so none out of the project is: os.walk enters no linked folder; docs/security.md).
    `each(path, text)`: another reader of every file, in the same read (call_sites.CallScan), given the
    text with its line breaks written `\n`.
    `files`: python_files(root, exclude), where the caller has just listed them."""
    index = FlagIndex()
    for path in python_files(root, exclude) if files is None else files:
        try:
            # its lines by `\n` alone here, and in each other reader
            text = with_newlines(read_regular(path, MAX_FILE_BYTES, follow_links=False)[0].decode("utf-8", "replace"))
        except SourceError:
            continue
        if each is not None:
            each(path, text)
        for found in ALIAS.finditer(text):
            if found.group(1) != found.group(2):
                index.aliases.setdefault(found.group(1), set()).add(found.group(2))
        line, counted = 0, 0  # the 0-based line of the offset counted to, in offset order
        for found, name, value, declared in sorted(_literals(text), key=lambda literal: literal[0]):
            line += text.count("\n", counted, found)
            counted = found
            if type(value) is str:
                index.add_string(name, value, path, line, declared)
            else:
                index.add(name, value, path, line)
    return index


def _literals(text: str):
    """(offset, name, value, declared) of each literal boolean or string the text gives a name;
    declared: a string that is the default of a declaration (`name: str = "x"` on a line of its
    own, a field's `default=`, argparse's `default=`), not only a value given (a parameter's
    default, a keyword, a dict's key, an assignment)."""
    for pattern in VALUES:
        for found in pattern.finditer(text):
            at = found.start()
            if text[at - 1] in "=!<>":
                continue  # a comparison
            start = text.rfind("\n", 0, at) + 1
            target = TARGET.search(text, start, at + (pattern is not VALUES[0]))
            # a statement of its own (a class's field, an annotated variable), not a parameter (`(` or `,` before it,
            # or `,` after it)
            declared = target is not None and ":" in target.group() and not text[start:target.start()].strip() \
                and text[found.end():found.end() + 64].lstrip(" \t")[:1] in ("", "\r", "\n", "#")
            if target is not None and target.group(1) == "default":
                field = FIELD_DEFAULT.search(text, max(0, at - 200), at)
                start = text.rfind("\n", 0, field.start()) + 1 if field is not None else -1
                target = DECLARATION.match(text, start, field.start()) if field is not None else None
                declared = True
            if target is None:
                continue
            if found.group(4) and not found.group(1):
                continue  # `"a" if c else b`: which, not read
            value = found.group(1) == "True" or found.group(4) is not None if found.group(1) else found.group(3)
            yield target.start(1), target.group(1), value, declared
    for found in ARGUMENT.finditer(text):
        name = found.group(3).rpartition(".")[2].replace("-", "_")
        if (value := ARGUMENT_STRING.search(found.group(4))) is not None:
            yield found.start(3), name, value.group(2), True
        if (value := ARGUMENT_VALUE.search(found.group(4))) is not None:
            yield found.start(3), name, value.group(1) == "false" if value.group(1) else value.group(2) == "True", False
        elif ARGUMENT_DEFAULT.search(found.group(4)) is None:
            yield found.start(3), name, None, False  # `add_argument("--write_profile", default=None)`
    if "True" not in text and "False" not in text and "bool" not in text:
        return
    for pattern in (FIELD, UNSET):
        for found in pattern.finditer(text):
            start = text.rfind("\n", 0, found.start()) + 1
            declaration = DECLARATION.match(text, start, found.start())
            if declaration is not None:  # UNSET: a config file gives its value, so it may be on
                yield declaration.start(1), declaration.group(1), pattern is UNSET or found.group(1) == "True", False
