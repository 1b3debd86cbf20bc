"""What a rule is: metadata, documentation and the events it handles."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Callable

from .. import DOCS_URL
from ..engine.model import Severity


@dataclass(frozen=True)
class Doc:
    """The fixed sections of a rule page (docs/rules/CODE.md is generated from these)."""

    what: str
    why: str
    example: str
    fix: str
    source: str


@dataclass(frozen=True)
class Rule:
    code: str
    name: str  # kebab-case short name
    message: str  # str.format template; table-driven rules get name/replacement/note
    severity: Severity
    targets: tuple[str, ...]
    fix: str  # "always" | "sometimes" | "never"
    doc: Doc
    table: str = ""  # the mappings/ file a table-driven rule reads
    on_type_only: bool = True  # False: a class only named in a type hint or isinstance() is not reported
    # Off unless a `select`/`extend-select` entry with digits names it ("NPU6", "NPU615"), like
    # Ruff's preview rules: advice whose precision on real code is too low to show by default.
    opt_in: str = ""  # why (shown on the rule page); empty: on by default

    @property
    def url(self) -> str:
        return DOCS_URL.format(code=self.code)


RULES: dict[str, Rule] = {}
# event kind → handlers; each handler declares the codes it can report so disabled
# rules cost nothing.
HANDLERS: dict[str, list[tuple[frozenset[str], Callable]]] = defaultdict(list)
# "module" handlers run once per file, after every statement, on the facts the statement
# handlers noted (Checker.note): conclusions about the whole file ("never calls set_train").
EVENT_KINDS = ("import", "reference", "attribute", "call", "string", "assign", "function", "loop", "module")


def rule(**fields) -> Rule:
    fields.setdefault("targets", ("torch_npu",))
    if isinstance(fields.get("doc"), dict):
        fields["doc"] = Doc(**fields["doc"])
    new = Rule(**fields)
    if new.code in RULES:
        raise ValueError(f"duplicate rule code {new.code}")
    RULES[new.code] = new
    return new


def handles(kind: str, *codes: str) -> Callable:
    """Register the decorated function for events of `kind`, reporting `codes`."""
    if kind not in EVENT_KINDS:
        raise ValueError(f"unknown event kind {kind!r}")

    def register(func: Callable) -> Callable:
        HANDLERS[kind].append((frozenset(codes), func))
        return func

    return register
