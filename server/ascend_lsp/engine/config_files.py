"""Config files read as key/value settings with exact ranges, without a YAML library on the
linting path: a YAML reader of the subset configs are written in, and a JSON scanner.

YAML: block mappings with nested keys by indentation, block sequences (`- a`, `- key: value`),
comments, plain and one-line quoted scalars, one-line flow collections (`[gpu]`, kept as written),
anchors and tags before a value, and `---` between documents. Skipped, never misread: block
scalars (`|`, `>`) with their bodies, aliases (`*a`, `<<: *a`), quoted scalars and flow
collections that go on over lines, a plain scalar's continuation lines, complex keys (`? `) and
lines indented with tabs.

JSON: objects, arrays and scalars, with `//` and `/* */` comments and trailing commas (JSONC).
Text that is not JSON yields no setting."""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass

from ..knowledge.platform import load_configs
from .model import Range
from .shell_script import Assignment
from .text import SourceText

ITEM = "-"  # the key of a sequence's item in a setting's path
KEY = re.compile(r"""(?P<key>"(?:[^"\\]|\\.)*"|'(?:[^']|'')*'|[^\s#'"\-?:,\[\]{}&*!|>%@`][^:#]*?|-[^\s:#][^:#]*?)"""
                 r"""[ \t]*:(?=[ \t]|$)""")
COMMENT = re.compile(r"(?:^|[ \t])#")
FLOW_OPEN = "[{"
JSON_LITERAL = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?|true|false|null")
JSON_SPACE = re.compile(r"(?:\s+|//[^\r\n]*|/\*.*?\*/)*", re.DOTALL)
MAX_DEPTH = 64  # deeper JSON is not a config: read no further


@dataclass(frozen=True, slots=True)
class Setting:
    """A key and its value: `keys` is the path from the top (ITEM for a sequence's item; an
    item that is a scalar has `value` and no key range of its own)."""

    keys: tuple[str, ...]
    value: str | None  # the scalar as the file gives it (unquoted), a flow collection as written; None: a mapping or sequence
    key_range: Range
    value_range: Range | None
    quoted: bool = False


@dataclass(frozen=True, slots=True)
class Config:
    """A config file a framework reads (configs.toml's `[[framework]]` rows recognise it by its
    top-level keys) or a compose file (by its name)."""

    kind: str  # "config" | "compose" (packaging.document_kind)
    frameworks: frozenset[str]
    settings: tuple[Setting, ...]
    json: bool  # JSON takes no comment: no line of it can carry a noqa

    def top(self, key: str) -> Setting | None:
        return next((s for s in self.settings if s.keys == (key,)), None)

    def images(self) -> list[Setting]:
        """A compose file's `services.<name>.image`."""
        return [s for s in self.settings if len(s.keys) == 3 and s.keys[0] == "services" and s.keys[2] == "image"
                and s.value and not s.value.startswith(FLOW_OPEN)]

    def environment(self) -> list[Assignment]:
        """A compose file's `services.<name>.environment`, as a launch script's assignments: the
        mapping form (`NAME: value`) and the list form (`- NAME=value`)."""
        found = []
        for s in self.settings:
            if len(s.keys) != 4 or s.keys[0] != "services" or s.keys[2] != "environment" or s.value_range is None:
                continue
            v = s.value_range
            if s.keys[3] != ITEM:
                found.append(Assignment(s.keys[3], s.value or "", Range(s.key_range.start_line, s.key_range.start_col,
                                                                         v.end_line, v.end_col),
                                        s.key_range, v, "$" not in (s.value or "")))
                continue
            name, sep, value = (s.value or "").partition("=")
            if not sep or not name or s.quoted:  # a quoted item's columns need its quotes: read unquoted ones
                continue
            at = v.start_col + len(name) + 1
            found.append(Assignment(name, value, v, Range(v.start_line, v.start_col, v.start_line, at - 1),
                                    Range(v.start_line, at, v.end_line, v.end_col), "$" not in value))
        return found


def read_config(source: SourceText, kind: str) -> Config | None:
    """The config in `source` (`kind` "config": a YAML or JSON file, read when its text names a key
    some framework's config needs, and a config when its top-level keys are one; "compose": a
    compose file), or None."""
    configs = load_configs()
    text = source.text
    start = JSON_SPACE.match(text).end()
    json_syntax = text.startswith("{", start)
    if kind == "config" and not names_a_config_key(text):
        return None  # no key a framework's config needs: not worth reading (a dataset, a workflow)
    settings = read_settings(source, json_syntax)
    frameworks = frozenset({"compose"}) if kind == "compose" else configs.recognise(top_keys(settings))
    return Config(kind, frameworks, tuple(settings), json_syntax) if frameworks else None


def names_a_config_key(text: str) -> bool:
    """Whether `text` (a file's start will do) writes a key some framework's config needs as a key:
    only then can it be a config."""
    json_syntax = text.startswith("{", JSON_SPACE.match(text).end())
    return _markers(load_configs().markers, json_syntax).search(text) is not None


@functools.lru_cache(maxsize=4)
def _markers(keys: frozenset[str], json_syntax: bool) -> re.Pattern[str]:
    """Any of `keys` written as a key: `"key":` in JSON, `key:` at a line's start in YAML."""
    names = "|".join(sorted(map(re.escape, keys)))
    return re.compile(rf'"(?:{names})"\s*:' if json_syntax else rf"^(?:{names})[ \t]*:", re.MULTILINE)


def read_settings(source: SourceText, json_syntax: bool) -> list[Setting]:
    """The settings of a YAML document, or of a JSON one when `json_syntax`."""
    if json_syntax:
        try:
            return _JsonScanner(source).read()
        except ValueError:
            return []
    return _yaml(source)


def top_keys(settings: list[Setting]) -> frozenset[str]:
    return frozenset(s.keys[0] for s in settings if len(s.keys) == 1)


# --- YAML ------------------------------------------------------------------------------------
@dataclass(slots=True)
class _Frame:
    column: int
    keys: tuple[str, ...]
    item: bool  # a sequence's `- ` (else a mapping key)
    scalar: bool  # a key whose value is on its own line: what is indented further continues it


def _before_comment(line: str) -> str:
    """The line before a comment: a `#` at its start or after a blank, outside quotes."""
    quote = ""
    for index, char in enumerate(line):
        if quote:
            if char == quote:
                quote = ""
        elif char in "'\"" and (index == 0 or line[index - 1] in " \t:-[{,"):
            quote = char
        elif char == "#" and (index == 0 or line[index - 1] in " \t"):
            return line[:index]
    return line


def _unquote(text: str) -> str | None:
    """A one-line quoted scalar's value, or None when the quotes do not close on it."""
    if len(text) < 2 or text[-1] != text[0]:
        return None
    if text[0] == "'":
        return text[1:-1].replace("''", "'")
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, str) else None


def _depth(text: str, depth: int = 0) -> int:
    """The bracket depth of a flow collection after `text` (which starts at `depth`)."""
    quote = ""
    for char in text:
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char in FLOW_OPEN:
            depth += 1
        elif char in "]}":
            depth -= 1
    return depth


def _yaml(source: SourceText) -> list[Setting]:
    settings: list[Setting] = []
    stack: list[_Frame] = []
    skip_deeper = -1  # a block scalar's or a multi-line value's body: lines indented further than this
    flow = 0  # the bracket depth of a flow collection that goes on over lines, skipped
    for index in range(len(source.lines)):
        line = source.line(index)
        code = _before_comment(line).rstrip()
        if flow > 0:
            flow = max(_depth(code, flow), 0)
            continue
        column = len(code) - len(code.lstrip(" "))
        if skip_deeper >= 0:
            if not code.strip() or column > skip_deeper:
                continue
            skip_deeper = -1
        if not code.strip() or code[column:column + 1] == "\t":
            continue
        if column == 0 and (code.startswith(("---", "...")) and code[3:4] in ("", " ") or code.startswith("%")):
            stack = []  # a new document, or a directive
            continue
        if stack and stack[-1].scalar and column > stack[-1].column:
            continue  # a plain scalar going on over lines
        rest = code[column:]
        while rest == "-" or rest.startswith("- "):  # sequence items, `- - a` nested
            while stack and (stack[-1].column > column or (stack[-1].column == column and
                                                           (stack[-1].item or stack[-1].scalar))):
                stack.pop()
            keys = (stack[-1].keys if stack else ()) + (ITEM,)
            stack.append(_Frame(column, keys, True, False))
            after = rest[1:]
            column += 1 + len(after) - len(after.lstrip(" "))
            rest = after.lstrip(" ")
            if rest and not KEY.match(rest) and not rest.startswith("- "):
                value = _scalar(rest)
                if value is not None:
                    at = Range(index, column, index, column + len(rest))
                    settings.append(Setting(keys, value[0], at, at, value[1]))
                elif rest[0] in FLOW_OPEN:
                    flow = _depth(rest)
                else:
                    skip_deeper = stack[-1].column
                rest = ""
        if not rest:
            continue
        key = KEY.match(rest)
        if key is None:
            continue  # not a key: a complex key, a scalar in a place this reader does not follow
        while stack and stack[-1].column >= column:
            stack.pop()
        name = key["key"]
        if name[0] in "'\"":
            unquoted = _unquote(name)
            if unquoted is None:
                continue
            name = unquoted
        keys = (stack[-1].keys if stack else ()) + (name,)
        key_range = Range(index, column, index, column + len(key["key"]))
        after = rest[key.end():]
        value_col = column + key.end() + len(after) - len(after.lstrip(" \t"))
        text = after.strip()
        while text[:1] in ("&", "!"):  # an anchor or a tag before the value
            head, _, tail = text.partition(" ")
            value_col += len(head) + len(tail) - len(tail.lstrip()) + (1 if tail else 0)
            text = tail.lstrip()
        if not text:
            settings.append(Setting(keys, None, key_range, None))
            stack.append(_Frame(column, keys, False, False))
            continue
        stack.append(_Frame(column, keys, False, True))
        value = _scalar(text)
        if value is not None:
            settings.append(Setting(keys, value[0], key_range, Range(index, value_col, index, value_col + len(text)),
                                    value[1]))
        elif text[0] in FLOW_OPEN:
            flow = _depth(text)
        elif text[0] in "|>" or text[0] in "'\"":
            skip_deeper = column  # a block scalar, or a quoted scalar that goes on
    return settings


def _scalar(text: str) -> tuple[str, bool] | None:
    """A one-line value: (its text, quoted) for a plain or quoted scalar or a one-line flow
    collection; None for what is skipped (an alias, a block scalar, quotes or brackets that do
    not close on the line)."""
    if text[0] in "'\"":
        value = _unquote(text)
        return None if value is None else (value, True)
    if text[0] in FLOW_OPEN:
        return (text, False) if _depth(text) == 0 else None
    if text[0] in "*|>":
        return None
    return text, False


# --- JSON ------------------------------------------------------------------------------------
class _JsonScanner:
    def __init__(self, source: SourceText) -> None:
        self.source = source
        self.text = source.text
        self.at = 0
        self.settings: list[Setting] = []

    def read(self) -> list[Setting]:
        self._space()
        if not self.text.startswith("{", self.at):
            return []  # a list or a scalar at the top: not a config
        self._value((), None, 0)
        self._space()
        if self.at != len(self.text):
            raise ValueError("text after the JSON value")
        return self.settings

    def _range(self, start: int, end: int) -> Range:
        line, col = self.source.position(start)
        end_line, end_col = self.source.position(end)
        return Range(line, col, end_line, end_col)

    def _space(self) -> None:
        self.at = JSON_SPACE.match(self.text, self.at).end()

    def _string(self) -> str:
        start, text = self.at, self.text
        i = start + 1
        while i < len(text) and text[i] != '"':
            i += 2 if text[i] == "\\" else 1
            if text[i - 1] in "\r\n":
                raise ValueError("a line break in a string")
        if i >= len(text):
            raise ValueError("an unterminated string")
        self.at = i + 1
        return json.loads(text[start:self.at])

    def _value(self, keys: tuple[str, ...], key_range: Range | None, depth: int) -> None:
        if depth > MAX_DEPTH:
            raise ValueError("nested too deep")
        text, start = self.text, self.at
        char = text[start:start + 1]
        if char == "{" or char == "[":
            if key_range is not None:
                self.settings.append(Setting(keys, None, key_range, None))
            self._container(keys, depth, char == "{")
            return
        if char == '"':
            value, quoted = self._string(), True
        else:
            literal = JSON_LITERAL.match(text, start)
            if literal is None:
                raise ValueError(f"not JSON at offset {start}")
            self.at, value, quoted = literal.end(), literal.group(), False
        where = self._range(start, self.at)
        self.settings.append(Setting(keys, value, key_range or where, where, quoted))

    def _container(self, keys: tuple[str, ...], depth: int, mapping: bool) -> None:
        close = "}" if mapping else "]"
        self.at += 1
        self._space()
        while not self.text.startswith(close, self.at):
            if mapping:
                if not self.text.startswith('"', self.at):
                    raise ValueError(f"a key expected at offset {self.at}")
                start = self.at
                name = self._string()
                key_range = self._range(start, self.at)
                self._space()
                if not self.text.startswith(":", self.at):
                    raise ValueError(f"':' expected at offset {self.at}")
                self.at += 1
                self._space()
                self._value((*keys, name), key_range, depth + 1)
            else:
                self._value((*keys, ITEM), None, depth + 1)
            self._space()
            if self.text.startswith(",", self.at):
                self.at += 1
                self._space()
            elif not self.text.startswith(close, self.at):
                raise ValueError(f"',' or '{close}' expected at offset {self.at}")
        self.at += 1
