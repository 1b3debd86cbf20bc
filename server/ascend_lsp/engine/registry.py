"""The rule registry, at the bottom of the engine: what a rule is, how rule modules register
rules and handlers, and the rule set an analysis is handed. The engine imports no rule
module: the adapters import ascend_lsp.rules, whose modules register here, and pass its
RULE_SET to the engine."""

from __future__ import annotations

import functools
import sys
from collections import defaultdict
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .config import Settings
from .model import Severity

if TYPE_CHECKING:
    from ..knowledge.api_tables import Tables


@dataclass(frozen=True)
class Doc:
    """The fixed sections of a rule page (docs/rules/CODE.md is generated from these)."""

    what: str
    why: str
    example: str
    fix: str
    source: str


# The folders whose tables' rows name the rule they drive (`rule = "NPU101"`); the generic table
# handler (rules/table.py, registered for TABLE_HANDLER) reports every such row.
ROW_TABLE_FOLDERS = ("mappings/torch_npu/", "mappings/ascend_tools/")
TABLE_HANDLER = "table"  # the code set of the generic table handler: "every rule the tables drive"


@dataclass(frozen=True)
class TableRef:
    """A mappings/ file a rule reads, and the sections of it: shown on the rule's page."""

    path: str  # "mappings/torch_npu/cuda.toml"; `<version>` stands for the configured version
    sections: tuple[str, ...] = ()  # "api", "env": the `[[api]]` rows

    @property
    def drives(self) -> bool:
        """Whether the table's rows name the rule, which the generic table handler reports."""
        return self.path.startswith(ROW_TABLE_FOLDERS)

    def __str__(self) -> str:
        return " ".join([self.path, ", ".join(f"[[{s}]]" for s in self.sections)]).rstrip()


@dataclass(frozen=True)
class Rule:
    code: str
    name: str  # kebab-case short name
    message: str  # str.format template; table-driven rules get name/replacement/note
    severity: Severity
    targets: tuple[str, ...]
    fix: str  # "always" | "sometimes" | "never"
    make_doc: Callable[[], Doc]  # the page's sections, built on first use (they may read a table)
    table: TableRef | None = None  # the mappings/ file the rule reads
    on_type_only: bool = True  # False: a class only named in a type hint or isinstance() is not reported
    module: str = ""  # the module that declared it (set by rule())
    suppressible: bool = True  # False: neither noqa comments nor per-file-ignores hide it (a syntax error)
    # Off unless a `select`/`extend-select` entry with digits names it ("NPU6", "NPU615"), like
    # Ruff's preview rules: advice whose precision on real code is too low to show by default.
    opt_in: str = ""  # why (shown on the rule page); empty: on by default
    # For a rule no handler reports: the functions that do ("ascend_lsp.engine.analyzer._syntax_finding"),
    # named on its page so its logic is one step away.
    reported_by: tuple[str, ...] = ()
    # A trap of the `transfer_to_npu` migration path alone: where neither the project nor the file imports it,
    # the rule's warnings are info, saying so (engine/checker.py).
    transfer_only: bool = False

    @property
    def doc(self) -> Doc:
        return _built_doc(self.make_doc)

    @property
    def table_driven(self) -> bool:
        return self.table is not None and self.table.drives


@functools.cache
def _built_doc(make: Callable[[], Doc]) -> Doc:
    return make()


RULES: dict[str, Rule] = {}
# event kind → handlers; each handler declares the codes it can report so disabled
# rules cost nothing.
HANDLERS: dict[str, list[tuple[frozenset[str], Callable]]] = defaultdict(list)
# "base" handlers get the references that are a class's base (their `call` is the ClassDef),
# which reference handlers get too: few handlers read them, and few references are bases.
# "module" handlers run once per file, after every statement, on the facts the statement
# handlers noted (Checker.note): conclusions about the whole file ("never calls set_train").
# "packaging" handlers get the items of a packaging file (engine/packaging.py: a
# requirement, a wheel index URL, a base image). "launch" handlers get the environment
# assignments and the commands of a shell launch script (engine/shell_script.py).
EVENT_KINDS = ("import", "reference", "base", "attribute", "call", "string", "assign", "function", "loop",
               "module", "packaging", "launch")
# the kinds of walk.StringContext, where a string literal stands
STRING_CONTEXTS = ("arg", "compare", "message", "subscript", "value")


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
            words: Collection[str] | Callable[[Tables], Collection[str]] | None = None,
            contexts: Collection[str] | None = None, values: Collection[type] | None = None) -> Callable:
    """Register the decorated function for events of `kind`, reporting `codes`. For
    "attribute", "reference" and "function" events, `names` (or `names(tables)`) are the only
    attribute names, last parts of a reference's qualified name, or function names it reads:
    the engine calls it for those alone (engine.checker.name_dispatch). `when(settings)` false: the handler can
    report nothing with these settings (a chip that lacks no feature it reads), and is not
    run at all. For "assign", "function" and "loop" events, `words` (or `words(tables)`)
    are names without one of which in a statement the handler can report nothing there (a
    bare name, an attribute name, or the last part of a resolved qualified name: an API
    imported under another name still counts): it is not run for such a statement
    (engine.checker.WordGates), and `checker.named(node, *words)` says where they are. A
    "string" handler's `contexts` are the only kinds of StringContext it reads ("arg",
    "compare", ...), an "assign" handler's `values` the only types of assigned value (ast.Constant):
    the engine calls it for those alone (engine.checker.context_dispatch, value_dispatch)."""
    if kind not in EVENT_KINDS:
        raise ValueError(f"unknown event kind {kind!r}")
    if contexts is not None and (kind != "string" or not set(contexts) <= set(STRING_CONTEXTS)):
        raise ValueError(f"contexts= narrows string events to some of {STRING_CONTEXTS}")
    if values is not None and kind != "assign":
        raise ValueError("values= narrows assign events only")
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
        if contexts is not None:
            func.contexts = frozenset(contexts)  # type: ignore[attr-defined]
        if values is not None:
            func.values = tuple(values)  # type: ignore[attr-defined]
        return func

    return register


class RuleSet:
    """The rules an analysis runs, as the engine takes them: the registered rules, which of them
    are enabled for given settings, and their handlers. ascend_lsp.rules.RULE_SET is the shipped
    rules (and any registered by ASCEND_LSP_EXTRA_RULES); the adapters hand it to the engine."""

    def __init__(self, rules: dict[str, Rule], handlers: dict[str, list[tuple[frozenset[str], Callable]]]) -> None:
        self.rules = rules
        self._handlers = handlers
        # per settings, as every file of a folder shares them (a few folders' settings at most)
        self._codes: dict[Settings, frozenset[str]] = {}
        self._enabled_handlers: dict[Settings, dict[str, list[Callable]]] = {}

    def forget(self) -> None:
        """Drop what was derived from the registry: after a handler is registered or removed late."""
        self._codes.clear()
        self._enabled_handlers.clear()

    def enabled(self, settings: Settings) -> list[Rule]:
        return [r for r in self.rules.values() if settings.target in r.targets and settings.enabled(r.code)
                and (not r.opt_in or named(settings, r.code))]

    def codes(self, settings: Settings) -> frozenset[str]:
        """The codes enabled for these settings."""
        found = self._codes.get(settings)
        if found is None:
            _bound(self._codes)
            found = self._codes[settings] = frozenset(r.code for r in self.enabled(settings))
        return found

    def handlers(self, settings: Settings) -> dict[str, list[Callable]]:
        """Event kind → the handlers that can report at least one rule enabled for these settings.
        An "attribute", "reference" or "function" handler with a `names` attribute (a collection,
        or a function of the tables giving one) is called only for those attribute names,
        references whose qualified name ends with one of them, or functions of those names; an
        "assign", "function" or "loop" handler with `words` only for a statement that names one of
        them (engine.checker.WordGates)."""
        found = self._enabled_handlers.get(settings)
        if found is None:
            _bound(self._enabled_handlers)
            rules = self.enabled(settings)
            enabled = {r.code for r in rules}
            if any(r.table_driven for r in rules):
                enabled.add(TABLE_HANDLER)
            found = self._enabled_handlers[settings] = {
                kind: [func for codes, func in self._handlers[kind] if codes & enabled and runs(func, settings)]
                for kind in EVENT_KINDS}
        return found

    def suppressible(self, code: str) -> bool:
        """Whether `# noqa` and per-file-ignores may hide `code` (the rule says; see Rule.suppressible)."""
        found = self.rules.get(code)
        return found is None or found.suppressible

    @functools.cached_property
    def prefixes(self) -> frozenset[str]:
        """Every rule code and prefix of one: what `select`, `ignore` and the other code settings accept."""
        return frozenset(code[:end] for code in self.rules for end in range(1, len(code) + 1))

    @functools.cached_property
    def table_driven(self) -> frozenset[str]:
        """The codes a row of a user's `extra-mappings` table may name."""
        return frozenset(code for code, r in self.rules.items() if r.table_driven)


def _bound(cache: dict) -> None:
    if len(cache) >= 32:
        cache.clear()


def named(settings: Settings, code: str) -> bool:
    """An opt-in rule runs only when a selection entry with digits covers it (`NPU6`,
    `NPU615`), never through a bare family (`NPU`, the default)."""
    return any(code.startswith(p) and any(c.isdigit() for c in p) for p in settings.select)


def runs(handler: Callable, settings: Settings) -> bool:
    """Whether the handler can report with these settings (handles' `when`). One whose test
    fails is kept: it fails again when run, where the failure is reported."""
    when = getattr(handler, "when", None)
    try:
        return when is None or bool(when(settings))
    except Exception:
        return True
