"""One pass over a top-level statement: scopes, import bindings and the events rules read.

Names are resolved after the statement is walked, because a name assigned anywhere in a
function is local in all of it (`torch = ...` later in a function shadows the import
earlier). Module-level imports are collected first (`ModuleContext`), so each top-level
statement can be walked on its own: the language server re-walks only the statements an
edit touches.
"""

from __future__ import annotations

import ast
from collections.abc import Collection
from dataclasses import dataclass
from typing import NamedTuple, cast

from .guards import (BLOCKS, NONE_HELD, GuardFacts, Held, as_test, backend_branches, backend_class,
                     block_exits, bool_branches, case_branches, class_branches, holds_cuda_test, holds_no_backend_test,
                     local_held, try_branches, unentered)

MODULE, CLASS, FUNCTION = 0, 1, 2

# Calls whose string arguments are prose for people, not values: a "cuda" in them is a
# mention, not a device. What prints or logs, and what records a metric (TensorBoard's
# add_scalar, Lightning's log_dict, MLflow's log_metric, detectron2's and nerfstudio's put_scalar).
MESSAGE_FUNCTIONS = frozenset({"print", "debug", "info", "warning", "warn", "error", "exception", "critical", "log",
                               "warning_once", "info_once", "warn_once", "write", "echo", "secho", "add_argument_group",
                               "add_scalar", "add_scalars", "log_dict", "log_metric", "log_metrics", "put_scalar",
                               "put_scalars"})
MESSAGE_KEYWORDS = frozenset({"help", "msg", "message", "description", "doc", "text", "desc", "title", "label"})
# Calls that build text: inside a message, their strings are prose too.
TEXT_BUILDING_FUNCTIONS = frozenset({"str", "repr", "format", "sorted", "list", "tuple", "set"})
TEXT_BUILDING_METHODS = frozenset({"format", "format_map", "join", "replace", "upper", "lower", "title", "capitalize"})


class Scope:
    __slots__ = ("parent", "kind", "imports", "stores", "globals", "members", "bound")

    def __init__(self, parent: "Scope | None", kind: int, members: tuple = ()) -> None:
        self.parent = parent
        self.kind = kind
        self.members = members  # a class's string constants (see class_member), for StringContext.siblings
        self.imports: dict[str, str] = {}
        self.stores: set[str] = set()
        self.globals: set[str] = set()
        # every name an import binds in this scope's module, in any scope: most names
        # (`self`, locals) are not among them, and need no walk up the scopes
        self.bound: set[str] = parent.bound if parent is not None else set()

    def bind(self, name: str, qualname: str) -> None:
        self.imports.setdefault(name, qualname)
        self.bound.add(name)

    def lookup(self, name: str) -> str | None:
        """The qualified name `name` is bound to by an import, or None (local or unknown)."""
        if name not in self.bound:
            return None
        scope, in_function = self, False
        while scope is not None:
            if not (in_function and scope.kind == CLASS):
                qualname = scope.imports.get(name)
                if qualname is not None:
                    return qualname
                if scope.kind == FUNCTION and name in scope.stores and name not in scope.globals:
                    return None
            if scope.kind == FUNCTION:
                in_function = True
            scope = scope.parent
        return None


def class_member(stmt: ast.stmt) -> ast.Constant | None:
    """The string a class-body statement assigns (`CUDA = "cuda"`), if it is one: the
    members of a class are read together (an enum with `CUDA` and `NPU`)."""
    if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and isinstance(stmt.value, ast.Constant) \
            and type(stmt.value.value) is str:
        return stmt.value
    return None


def class_members(body: list[ast.stmt]) -> tuple[ast.Constant, ...]:
    return tuple(m for m in map(class_member, body) if m is not None)


def bind_import(scope: Scope, node: ast.Import | ast.ImportFrom) -> list[tuple[ast.alias, str]]:
    """Record what `node` binds in `scope`; return (alias, imported qualified name) pairs."""
    out = []
    if isinstance(node, ast.Import):
        for alias in node.names:
            if alias.asname:
                scope.bind(alias.asname, alias.name)
            else:
                root = alias.name.partition(".")[0]
                scope.bind(root, root)
            out.append((alias, alias.name))
    elif any(alias.name == "*" for alias in node.names):
        # What a star import binds is in the other module; `torch` is the one name a file reached so
        # names as torch (fastai's `from .torch_imports import *`, nbdev's generated modules): a file
        # that imports no `torch` of its own can name it only so.
        scope.bind("torch", "torch")
    elif node.module and not node.level:
        for alias in node.names:
            qualname = f"{node.module}.{alias.name}"
            scope.bind(alias.asname or alias.name, qualname)
            out.append((alias, qualname))
    return out


@dataclass(slots=True)
class ModuleContext:
    """What the whole module binds at top level, and where a new import goes."""

    scope: Scope
    imported: frozenset[str]  # every module named in a top-level import, and the packages it is in
    import_line: int  # 0-based line before which a new `import` is inserted

    def imports_module(self, module: str) -> bool:
        """Whether a top-level import names `module` or a module in it (asked per call by some rules)."""
        return module in self.imported


def module_context(tree: ast.Module) -> ModuleContext:
    return context_of([ModuleImports.of(tree.body, first=True)])


@dataclass(slots=True)
class ModuleImports:
    """What a run of top-level statements gives the module context: the imports that bind
    module names (top-level ones, and those in if/try/with/for/while blocks), in the order
    they are bound, and the line after which a new import goes."""

    binding: list  # ast.Import / ast.ImportFrom
    insert_after: int

    @classmethod
    def of(cls, body: list[ast.stmt], first: bool) -> ModuleImports:
        """`first`: the statements begin the module (its docstring, `from __future__`)."""
        insert_after = 0
        # After the docstring and `from __future__` imports at least.
        for index, stmt in enumerate(body if first else ()):
            if index == 0 and type(stmt) is ast.Expr and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str):
                insert_after = stmt.end_lineno
            elif type(stmt) is ast.ImportFrom and stmt.module == "__future__":
                insert_after = stmt.end_lineno
            else:
                break
        binding = []
        pending = list(body)
        while pending:
            stmt = pending.pop()
            kind = type(stmt)
            if kind is ast.Import or kind is ast.ImportFrom:
                binding.append(stmt)
            elif kind in (ast.If, ast.Try, ast.With, ast.For, ast.While) or kind.__name__ == "TryStar":
                for name in ("body", "orelse", "finalbody"):
                    pending.extend(getattr(stmt, name, ()))
                for handler in getattr(stmt, "handlers", ()):
                    pending.extend(handler.body)
        for stmt in body:
            if type(stmt) in (ast.Import, ast.ImportFrom):
                insert_after = max(insert_after, stmt.end_lineno)
        return cls(binding, insert_after)


def context_of(parts: list[ModuleImports]) -> ModuleContext:
    """The context of a module whose top-level statements are these parts, in order (a long
    file is parsed a part at a time). Bound from the last statement up, as one part would be."""
    scope = Scope(None, MODULE)
    imported: set[str] = set()
    for part in reversed(parts):
        for stmt in part.binding:
            for _alias, qualname in bind_import(scope, stmt):
                module = qualname if type(stmt) is ast.Import else stmt.module
                names = module.split(".")
                imported.update(".".join(names[:end]) for end in range(1, len(names) + 1))
    return ModuleContext(scope, frozenset(imported), max((p.insert_after for p in parts), default=0))


@dataclass(slots=True)
class StringContext:
    """Where a string literal stands."""

    kind: str  # "arg" | "compare" | "message" | "subscript" | "value"
    call: ast.Call | None = None
    keyword: str | None = None  # the keyword it is passed as, if any
    position: int = -1  # the positional index it is passed at, if any
    node: ast.AST | None = None  # the Compare / Subscript
    # the other members of what it is one of: a display's elements, a dict's keys or values,
    # the values assigned in a class body (an enum's members)
    siblings: tuple = ()
    # inside a type hint or the classes of isinstance()/issubclass(): names there are tested
    # against or documented, never run
    type_only: bool = False


VALUE = StringContext("value")
MESSAGE = StringContext("message")
TYPE_ONLY = StringContext("value", type_only=True)


class ImportEvent(NamedTuple):
    stmt: ast.Import | ast.ImportFrom
    alias: ast.alias
    qualname: str  # what the alias imports
    scope: Scope  # where the import stands


class NameEvent(NamedTuple):
    """A name, or an attribute chain, that is read."""

    node: ast.expr  # the Name, or the outermost Attribute of the chain
    root: ast.Name | None  # the chain's first name; None when it starts elsewhere (`f().x`: attrs is ("x",))
    attrs: tuple[str, ...]  # the attribute names after the root, in source order
    scope: Scope
    call: ast.Call | ast.ClassDef | None  # the Call whose callee it is, or the ClassDef it is a base of
    type_only: bool  # only a type: in a type hint or the classes of isinstance()/issubclass()


class StringEvent(NamedTuple):
    node: ast.Constant | ast.JoinedStr
    value: str  # an f-string's text with each replacement field as `{}`
    context: StringContext


class Events:
    """What one statement contains, in source order per kind. (A plain class: one is made for
    every statement, and a dataclass's default factories cost twice as much.)"""

    __slots__ = ("imports", "names", "calls", "strings", "assigns", "backends", "functions", "loops", "products",
                 "roots")

    def __init__(self) -> None:
        self.roots: tuple = ()  # the nodes the walk began at: the statement (a class's header items)
        self.imports: list[ImportEvent] = []
        self.names: list[NameEvent] = []
        self.calls: list = []  # (Call, scope)
        self.strings: list[StringEvent] = []
        self.assigns: list = []  # (Assign | AnnAssign with a value, scope)
        # branches of multi-backend code (engine/guards.py): (never on the NPU, only on the NPU)
        self.backends: list = []
        self.functions: list = []  # (FunctionDef | AsyncFunctionDef, its own scope)
        self.loops: list = []  # (For | AsyncFor | While, scope)
        self.products: list = []  # (BinOp of `*` or `@`, scope): what fused operators multiply


def last_name(node: ast.expr) -> str:
    """`f` for `f`, `g` for `x.g` and for `x.g()`; "" otherwise."""
    if type(node) is ast.Call:
        node = node.func
    return node.attr if type(node) is ast.Attribute else getattr(node, "id", "")


def _typing_cast(func: ast.expr) -> bool:
    """`cast` or `typing.cast` (not ctypes.cast, whose type comes second)."""
    return type(func) is ast.Name or (type(func) is ast.Attribute and getattr(func.value, "id", "") in ("typing", "t"))


def _is_message_call(call: ast.Call) -> bool:
    func = call.func
    if type(func) is ast.Attribute and func.attr == "log":
        # logger.log(level, msg), getLogger().log(...); not torch.log(x) or np.log(x)
        return "log" in last_name(func.value).lower()
    return type(func) in (ast.Name, ast.Attribute) and last_name(func) in MESSAGE_FUNCTIONS


def _is_text_call(call: ast.Call) -> bool:
    """A call that builds text or an exception (`"{}".format(x)`, `", ".join(names)`,
    `str(x)`, `RuntimeError(...)`): inside a message its strings are prose too. Other calls
    there are code (`print(x.to("cuda"))`)."""
    name = last_name(call.func)
    building = TEXT_BUILDING_METHODS if type(call.func) is ast.Attribute else TEXT_BUILDING_FUNCTIONS
    return name in building or name.endswith(("Error", "Exception", "Warning"))


def _fstring_value(node: ast.JoinedStr) -> str:
    """The literal text of an f-string with each replacement field written as `{}`."""
    parts: list[str] = []
    for value in node.values:
        if type(value) is ast.Constant:
            parts.append(cast(str, value.value))  # an f-string's text is str
        else:
            parts.append("{}")
    return "".join(parts)


def class_header(node: ast.ClassDef, module_scope: Scope) -> list:
    """Walk items for a top-level class without its body: decorators, keywords, bases."""
    items = [(child, module_scope, VALUE, None) for child in (*node.decorator_list, *node.keywords)]
    return items + [(base, module_scope, VALUE, node) for base in node.bases]


def walk(items: list, module_scope: Scope, backend_tests: GuardFacts | bool = True,
         reads: Collection[str] | None = None) -> Events:
    """Walk from `items`: (node, scope, string context, the Call/ClassDef it is the callee/base of).
    `backend_tests`: whether an if/elif chain may test for a backend (guards.may_test_backend of the
    file's text), with what the whole file tells of its tests (GuardFacts) when known; else no
    `if` is read for one. `reads`: the attribute names the checker
    dispatches on (Checker.attribute_names); a name or chain that no import binds is an
    event only when it ends with one of them (none reaches a handler otherwise: `self.x`,
    locals, most names). None: every name is."""
    bound = module_scope.bound
    binds = len(bound)
    events = Events()
    events.roots = tuple(item[0] for item in items)
    imports, names, calls, strings = events.imports, events.names, events.calls, events.strings
    assigns, products = events.assigns, events.products
    elifs: set = set()  # the later links of an if/elif chain already read from its head
    facts = backend_tests if isinstance(backend_tests, GuardFacts) else None
    file_held = facts.held if facts is not None else NONE_HELD
    torch = facts.torch if facts is not None else None
    engines = facts.engines if facts is not None else True
    # the names that hold a CUDA test, per function scope (guards.local_held), read when a test
    # there may use one: the function assigns one (`holding`), or the file holds some
    functions: dict[Scope, ast.FunctionDef | ast.AsyncFunctionDef] = {}
    owners: dict[Scope, Scope] = {}  # a comprehension's or a lambda's scope → its function's
    holding: set[Scope] = set()
    held_in: dict[Scope, Held] = {}

    def held_at(scope: Scope) -> Held:
        scope = owners.get(scope, scope)
        func = functions.get(scope)
        if func is None:
            return file_held
        if scope not in holding and not file_held:
            return NONE_HELD  # (a later assignment may still make it one that holds)
        held = held_in.get(scope)
        if held is None:
            held = held_in[scope] = local_held(func, file_held)
        return held

    stack: list = list(reversed(items))
    push = stack.append
    Attribute, Name, Call, Constant, JoinedStr = ast.Attribute, ast.Name, ast.Call, ast.Constant, ast.JoinedStr
    Load, AST, BinOp, Assign, AnnAssign = ast.Load, ast.AST, ast.BinOp, ast.Assign, ast.AnnAssign
    while stack:
        node, scope, sctx, parent_call = stack.pop()
        kind = type(node)
        if kind is Name:
            if type(node.ctx) is Load:
                if reads is None or node.id in bound or node.id in reads:
                    names.append(NameEvent(node, node, (), scope, parent_call, sctx.type_only))
            else:
                scope.stores.add(node.id)
            continue
        if kind is Attribute:
            attrs = [node.attr]
            base = node.value
            while type(base) is Attribute:
                attrs.append(base.attr)
                base = base.value
            if type(base) is Name:
                if reads is None or base.id in bound or node.attr in reads:
                    attrs.reverse()
                    names.append(NameEvent(node, base, tuple(attrs), scope, parent_call, sctx.type_only))
            else:
                if reads is None or node.attr in reads:
                    names.append(NameEvent(node, None, (node.attr,), scope, parent_call, False))
                push((node.value, scope, VALUE, None))
            continue
        if kind is Constant:
            if type(node.value) is str:
                strings.append(StringEvent(node, node.value, sctx))
            continue
        if kind is Call:
            calls.append((node, scope))
            func = node.func
            push((func, scope, VALUE, node))
            callee = func.attr if type(func) is Attribute else func.id if type(func) is Name else ""
            if backend_tests and callee == "param" and node.keywords:
                case = case_branches(node)  # pytest.param(..., marks=RunIf(min_cuda_gpus=1))
                if case is not None:
                    events.backends.append(case)
            if (callee in MESSAGE_FUNCTIONS and _is_message_call(node)) or (sctx is MESSAGE and _is_text_call(node)):
                for arg in node.args:
                    push((arg, scope, MESSAGE, None))
                for kw in node.keywords:
                    push((kw.value, scope, MESSAGE, None))
                continue
            # the argument that is only a type: isinstance(x, T), issubclass(C, T), typing.cast(T, x)
            type_index = 1 if callee in ("isinstance", "issubclass") and type(func) is Name \
                else 0 if callee == "cast" and _typing_cast(func) else -1
            # A name, an attribute or a call reads only `type_only` of its context, which
            # VALUE shares with an argument's, and a constant other than a string none of it:
            # no context object for the most common arguments.
            for index, arg in enumerate(node.args):
                if index == type_index:
                    ctx = TYPE_ONLY
                elif type(arg) in _CONTEXT_FREE or (type(arg) is Constant and type(arg.value) is not str):
                    ctx = VALUE
                else:
                    ctx = StringContext("arg", node, None, index)
                push((arg, scope, ctx, None))
            for kw in node.keywords:
                value = kw.value
                if kw.arg in MESSAGE_KEYWORDS:
                    ctx = MESSAGE
                elif type(value) in _CONTEXT_FREE or (type(value) is Constant and type(value.value) is not str):
                    ctx = VALUE
                else:
                    ctx = StringContext("arg", node, kw.arg)
                push((value, scope, ctx, None))
            continue
        if kind not in _OWN_BRANCHES:  # one test instead of a test per branch below
            if backend_tests and (kind is ast.If or kind is ast.IfExp or kind is ast.Match) and node not in elifs:
                events.backends.extend(backend_branches(node, elifs, held_at(scope), torch, engines))
            elif kind is ast.Try and torch is not None and node.handlers:
                events.backends.extend(try_branches(node, torch))  # `except AttributeError:` for an older torch
            elif backend_tests and kind is ast.BoolOp:
                branches = bool_branches(node)
                if branches is not None:
                    events.backends.append(branches)
            elif backend_tests and (kind is ast.With or kind is ast.AsyncWith):
                events.backends.extend(unentered(node))
            if backend_tests and kind in BLOCKS:  # `if not torch.cuda.is_available(): continue` in a loop's body
                events.backends.extend(block_exits(node, held_at(scope)))
            if kind is BinOp and type(node.op) in _PRODUCTS:
                products.append((node, scope))
            fields, statement = _SHAPES.get(kind) or _shape(kind)
            if statement:
                sctx = VALUE
                if kind is ast.For or kind is ast.While or kind is ast.AsyncFor:
                    events.loops.append((node, scope))
            for name in fields:  # child_nodes, inline: most nodes come this way
                value = getattr(node, name, None)
                if type(value) is list:
                    for child in value:
                        if isinstance(child, AST):
                            push((child, scope, sctx, None))
                elif isinstance(value, AST):
                    push((value, scope, sctx, None))
            continue
        if kind is Assign or kind is AnnAssign:
            # pushed in source order (targets, annotation, value), so popped value first
            for target in node.targets if kind is Assign else (node.target,):
                push((target, scope, VALUE, None))
            if kind is AnnAssign:
                push((node.annotation, scope, TYPE_ONLY, None))
            value = node.value
            if value is not None:
                assigns.append((node, scope))
                if backend_tests and scope.kind == FUNCTION and scope not in holding \
                        and type(target := node.targets[0] if kind is Assign else node.target) is Name \
                        and (holds_cuda_test(as_test(value)) or holds_no_backend_test(target.id, value)):
                    holding.add(owners.get(scope, scope))  # `run_on_gpu = torch.cuda.is_available()`, `use_cuda = gpu >= 0`
                member = scope.kind == CLASS and value in scope.members
                if kind is Assign and _assigns_all(node.targets):
                    push((value, scope, MESSAGE, None))  # names of the module's attributes, not values
                else:
                    push((value, scope, StringContext("value", siblings=scope.members) if member else VALUE, None))
            continue
        if kind is JoinedStr:
            strings.append(StringEvent(node, _fstring_value(node), sctx))
            for value in node.values:
                if type(value) is ast.FormattedValue:
                    push((value.value, scope, VALUE, None))
            continue
        # Below, a context is made only for an operand that reads more of it than VALUE
        # gives (a name, an attribute or a call reads `type_only` alone, a constant other than
        # a string nothing): most comparisons, displays and subscripts hold no string.
        if kind is ast.Compare:
            ctx = VALUE
            for operand in (node.left, *node.comparators):
                if ctx is VALUE and type(operand) not in _CONTEXT_FREE \
                        and not (type(operand) is Constant and type(operand.value) is not str):
                    ctx = StringContext("compare", node=node)
                push((operand, scope, ctx, None))
            continue
        if kind is ast.List or kind is ast.Tuple or kind is ast.Set or kind is ast.Dict:
            groups = (node.keys, node.values) if kind is ast.Dict else (node.elts,)
            plain = MESSAGE if sctx is MESSAGE else TYPE_ONLY if sctx.type_only else VALUE
            for group in groups:
                among = None
                for element in group:
                    if element is None:  # a `**mapping` in a dict display
                        continue
                    if plain is MESSAGE or type(element) in _CONTEXT_FREE \
                            or (type(element) is Constant and type(element.value) is not str):
                        push((element, scope, plain, None))
                        continue
                    if among is None:
                        among = StringContext(sctx.kind, sctx.call, sctx.keyword, sctx.position, sctx.node,
                                              tuple(group), sctx.type_only)
                    push((element, scope, among, None))
            continue
        if kind is ast.Subscript:
            plain = TYPE_ONLY if sctx.type_only else VALUE
            push((node.value, scope, plain, None))
            part = node.slice
            if type(part) in _CONTEXT_FREE or (type(part) is Constant and type(part.value) is not str):
                push((part, scope, plain, None))
            else:
                push((part, scope, StringContext("subscript", node=node, type_only=sctx.type_only), None))
            continue
        if kind is ast.Expr:
            value = node.value
            if type(value) is Constant or type(value) is JoinedStr:
                continue  # a docstring or a bare string statement: prose
            push((value, scope, VALUE, None))
            continue
        if kind is ast.Raise or kind is ast.Assert:
            # Exception messages are prose.
            for child in child_nodes(node):
                push((child, scope, MESSAGE, None))
            continue
        if kind is ast.Import or kind is ast.ImportFrom:
            target = scope if scope is not module_scope else Scope(None, MODULE)  # module ones are prebound
            for alias, qualname in bind_import(target, node):
                imports.append(ImportEvent(node, alias, qualname, scope))
            continue
        if kind is ast.FunctionDef or kind is ast.AsyncFunctionDef or kind is ast.Lambda:
            inner = Scope(scope, FUNCTION)
            args = node.args
            for arg in (*args.posonlyargs, *args.args, *args.kwonlyargs):
                inner.stores.add(arg.arg)
                if arg.annotation is not None:
                    push((arg.annotation, scope, TYPE_ONLY, None))
            for arg in (args.vararg, args.kwarg):
                if arg is not None:
                    inner.stores.add(arg.arg)
            for default in (*args.defaults, *args.kw_defaults):
                if default is not None:
                    push((default, scope, VALUE, None))
            if kind is ast.Lambda:
                owners[inner] = owners.get(scope, scope)
                push((node.body, inner, VALUE, None))
                continue
            scope.stores.add(node.name)
            events.functions.append((node, inner))
            functions[inner] = node
            if backend_tests:  # `if not torch.cuda.is_available(): return`
                events.backends.extend(block_exits(node, local_held(node, file_held) if file_held else NONE_HELD))
            for decorator in node.decorator_list:
                push((decorator, scope, VALUE, None))
            if node.returns is not None:
                push((node.returns, scope, TYPE_ONLY, None))
            for child in reversed(node.body):
                push((child, inner, VALUE, None))
            continue
        if kind is ast.ClassDef:
            scope.stores.add(node.name)
            inner = Scope(scope, CLASS, class_members(node.body))
            events.backends.extend(class_branches(backend_class(node), node.body))
            for child in (*node.decorator_list, *node.keywords):
                push((child, scope, VALUE, None))
            for base in node.bases:
                push((base, scope, VALUE, node))
            for child in reversed(node.body):
                push((child, inner, VALUE, None))
            continue
        if kind is ast.Global or kind is ast.Nonlocal:
            scope.globals.update(node.names)
            continue
        # the comprehensions
        inner = Scope(scope, FUNCTION)
        owners[inner] = owners.get(scope, scope)
        for child in child_nodes(node):
            push((child, inner, sctx, None))
    if len(bound) > binds:
        # An import in the statement bound a name anew: where it was read before the import,
        # it was left out. Rare (once per name a file imports inside a function or class).
        return walk(items, module_scope, backend_tests, reads)
    return events


_CONTEXT_FREE = frozenset({ast.Name, ast.Attribute, ast.Call})
_PRODUCTS = frozenset({ast.Mult, ast.MatMult})
# Fields that never hold a node: identifiers, flags, numbers, type comments. (`name` does: a
# TypeAlias's is a Name.) With `ctx` and `op`, whose Load/Add/... nodes hold nothing a rule
# reads, they are not read for children.
_NOT_CHILDREN = frozenset({"ctx", "op", "id", "attr", "arg", "module", "level", "kind", "conversion", "is_async",
                           "type_comment", "simple", "tag"})
# node type → (the fields that can hold its children, whether it is a statement), filled as
# types are met
_SHAPES: dict[type[ast.AST], tuple[tuple[str, ...], bool]] = {}


def _shape(kind: type[ast.AST]) -> tuple[tuple[str, ...], bool]:
    shape = _SHAPES.get(kind)
    if shape is None:
        shape = _SHAPES[kind] = (tuple(name for name in kind._fields if name not in _NOT_CHILDREN),
                                 issubclass(kind, ast.stmt))
    return shape


def child_fields(kind: type[ast.AST]) -> tuple[str, ...]:
    """The fields of a node type that can hold child nodes a rule reads (not `ctx`, `op`,
    nor the identifiers and flags)."""
    return _shape(kind)[0]


def child_nodes(node: ast.AST) -> list[ast.AST]:
    """The children of `node` in field order, as `ast.iter_child_nodes` gives them but
    without its two generators per node, and without the `ctx` and `op` nodes."""
    out: list[ast.AST] = []
    for name in _shape(type(node))[0]:
        value = getattr(node, name, None)
        if type(value) is list:
            out.extend(child for child in value if isinstance(child, ast.AST))
        elif isinstance(value, ast.AST):
            out.append(value)
    return out


def _assigns_all(targets: list[ast.expr]) -> bool:
    for target in targets:
        if type(target) is ast.Name and target.id == "__all__":
            return True
    return False


_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
# The node types walk() has a branch of its own for, after Name, Attribute, Constant and Call
_OWN_BRANCHES = frozenset({ast.JoinedStr, ast.Compare, ast.List, ast.Tuple, ast.Set, ast.Dict, ast.Subscript, ast.Expr,
                           ast.Raise, ast.Assert, ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef,
                           ast.Lambda, ast.ClassDef, ast.Assign, ast.AnnAssign, ast.Global, ast.Nonlocal,
                           *_COMPREHENSIONS})
