"""What a rule is: metadata, documentation and the events it handles."""

from __future__ import annotations

import functools
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from collections.abc import Collection
from typing import Callable

from .. import DOCS_URL
from ..engine.config import Settings, env_docs_url
from ..engine.model import Severity
from ..engine.tables import Tables


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
    make_doc: Callable[[], Doc]  # the page's sections, built on first use (they may read a table)
    table: str = ""  # the mappings/ file a table-driven rule reads
    on_type_only: bool = True  # False: a class only named in a type hint or isinstance() is not reported
    module: str = ""  # the module that declared it (set by rule())
    suppressible: bool = True  # False: neither noqa comments nor per-file-ignores hide it (a syntax error)
    # Off unless a `select`/`extend-select` entry with digits names it ("NPU6", "NPU615"), like
    # Ruff's preview rules: advice whose precision on real code is too low to show by default.
    opt_in: str = ""  # why (shown on the rule page); empty: on by default

    @property
    def doc(self) -> Doc:
        return _built_doc(self.make_doc)


@functools.cache
def _built_doc(make: Callable[[], Doc]) -> Doc:
    return make()


def packaged_page(code: str) -> Path:
    """The rule's page installed with the package (a checkout: docs/rules/ of the repository)."""
    here = Path(__file__).resolve().parent.parent
    packaged = here / "docs" / "rules"
    return (packaged if packaged.is_dir() else here.parents[1] / "docs" / "rules") / f"{code}.md"


def rule_url(code: str, docs_url: str = "") -> str:
    """The address of a rule's page: `docs_url` (a setting), else $ASCEND_LSP_DOCS_URL, else
    DOCS_URL. `{code}` in it is replaced by the code; a base without it gets `/<code>.md`;
    "packaged" is the installed copy's file: URI."""
    base = docs_url or env_docs_url() or DOCS_URL
    if base == "packaged":
        return packaged_page(code).as_uri()
    return base.replace("{code}", code) if "{code}" in base else f"{base.rstrip('/')}/{code}.md"


RULES: dict[str, Rule] = {}
# event kind → handlers; each handler declares the codes it can report so disabled
# rules cost nothing.
HANDLERS: dict[str, list[tuple[frozenset[str], Callable]]] = defaultdict(list)
# "base" handlers get the references that are a class's base (their `call` is the ClassDef),
# which reference handlers get too: few handlers read them, and few references are bases.
# "module" handlers run once per file, after every statement, on the facts the statement
# handlers noted (Checker.note): conclusions about the whole file ("never calls set_train").
# "packaging" handlers get the items of a packaging file (engine/packaging.py: a
# requirement, a wheel index URL, a base image).
EVENT_KINDS = ("import", "reference", "base", "attribute", "call", "string", "assign", "function", "loop",
               "module", "packaging")


def rule(**fields) -> Rule:
    fields.setdefault("targets", ("torch_npu",))
    fields.setdefault("module", sys._getframe(1).f_globals.get("__name__", ""))
    doc = fields.pop("doc")  # Doc, its fields as a dict, or a function that returns the Doc
    if isinstance(doc, dict):
        doc = Doc(**doc)
    fields["make_doc"] = doc if callable(doc) else (lambda: doc)
    new = Rule(**fields)
    if new.code in RULES:
        raise ValueError(f"duplicate rule code {new.code}")
    RULES[new.code] = new
    return new


def handles(kind: str, *codes: str, names: Collection[str] | Callable[[Tables], Collection[str]] | None = None,
            when: Callable[[Settings], bool] | None = None,
            words: Collection[str] | Callable[[Tables], Collection[str]] | None = None) -> Callable:
    """Register the decorated function for events of `kind`, reporting `codes`. For
    "attribute", "reference" and "function" events, `names` (or `names(tables)`) are the only
    attribute names, last parts of a reference's qualified name, or function names it reads:
    the engine calls it for those alone (engine.checker.name_dispatch). `when(settings)` false: the handler can
    report nothing with these settings (a chip that lacks no feature it reads), and is not
    run at all. For "assign", "function" and "loop" events, `words` (or `words(tables)`)
    are names without one of which in a statement the handler can report nothing there (a
    bare name, an attribute name, or the last part of a resolved qualified name: an API
    imported under another name still counts): it is not run for such a statement
    (engine.checker.WordGates), and `checker.named(node, *words)` says where they are."""
    if kind not in EVENT_KINDS:
        raise ValueError(f"unknown event kind {kind!r}")
    if names is not None and kind not in ("attribute", "reference", "function"):
        raise ValueError("names= narrows attribute, reference and function events only")
    if words is not None and kind not in ("assign", "function", "loop"):
        raise ValueError("words= narrows assign, function and loop events only")

    def register(func: Callable) -> Callable:
        HANDLERS[kind].append((frozenset(codes), func))
        func.codes = getattr(func, "codes", frozenset()) | frozenset(codes)  # type: ignore[attr-defined]  # named if it fails
        if names is not None:
            func.names = names  # type: ignore[attr-defined]
        if when is not None:
            func.when = when  # type: ignore[attr-defined]
        if words is not None:
            func.words = words  # type: ignore[attr-defined]
        return func

    return register
