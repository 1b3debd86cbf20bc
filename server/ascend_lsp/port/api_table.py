"""One mechanism for every row of the port's API table (mappings/mindspore/port-api.toml).

A row gives torch's parameters as a Python parameter list and the MindSpore expression as a
template over them: `{name}` is the argument given for `name` (torch's default where none was
given, except as a keyword argument of the template, which is then left out: MindSpore's
default is torch's there, as the "defaults omitted" calling style of the row's test proves),
`{name!}` always writes the argument or torch's default, `{*name}` spreads the arguments a
`*name` parameter gathered (or the elements of the one literal sequence it gathered), and
`{name}` of such a parameter is them as one sequence (`f(2, 3)` and `f((2, 3))` both give `(2, 3)`). A parameter the template does not name must keep torch's default
unless the row drops it (torch-only parameters without effect: device, inplace); otherwise a
person decides (Manual). A helper of the port the template calls may read its arguments when the
call is ported (specs.READ_WHEN_PORTED: `_einsum` its literal equation).
"""

from __future__ import annotations

import ast
import functools
import re
from dataclasses import dataclass

import libcst as cst

from ..knowledge.port_api import BUILTIN_METHODS, ApiRow
from .specs import _UNSET, READ_WHEN_PORTED, Manual, literal, source

_PLACEHOLDER = re.compile(r"\{(\*?)([A-Za-z_][A-Za-z_0-9]*)(!?)\}")
_SIMPLE = (cst.Name, cst.Attribute, cst.Integer, cst.Float, cst.SimpleString)


@dataclass(frozen=True)
class Signature:
    positional: tuple[str, ...]
    positional_only: tuple[str, ...]  # before a `/` (uniform_'s `from`, a Python keyword)
    star: str | None  # the *args parameter
    keyword_only: tuple[str, ...]
    defaults: dict[str, str]  # parameter → torch's default, as source

    @property
    def names(self) -> tuple[str, ...]:
        return (*self.positional, *((self.star,) if self.star else ()), *self.keyword_only)


@functools.cache
def signature(params: str) -> Signature:
    """`input, dim=None, *, dtype=None` as a Signature (a ValueError when it is no parameter list)."""
    try:
        node = ast.parse(f"def f({params}): pass").body[0]
    except SyntaxError as exc:
        raise ValueError(f"not a parameter list: {params!r}") from exc
    assert isinstance(node, ast.FunctionDef)
    args = node.args
    positional = [a.arg for a in (*args.posonlyargs, *args.args)]
    defaults = {name: ast.unparse(d) for name, d in zip(positional[len(positional) - len(args.defaults):],
                                                          args.defaults)}
    defaults |= {a.arg: ast.unparse(d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None}
    if args.kwarg:
        raise ValueError(f"**{args.kwarg.arg}: the table binds named parameters only")
    return Signature(tuple(positional), tuple(a.arg for a in args.posonlyargs), args.vararg.arg if args.vararg else None,
                     tuple(a.arg for a in args.kwonlyargs), defaults)


@functools.cache
def template(text: str) -> tuple[cst.BaseExpression, frozenset[str]]:
    """The row's template as an expression with placeholder names, and the parameters it names."""
    names = frozenset(m.group(2) for m in _PLACEHOLDER.finditer(text))
    code = _PLACEHOLDER.sub(lambda m: f"__{'s' if m.group(1) else 'f' if m.group(3) else 'a'}_{m.group(2)}__", text)
    return cst.parse_expression(code), names


def may_be_a_tensor(receiver: cst.BaseExpression, method: str, imported: set[str]) -> bool:
    """Whether `receiver.method(...)` may be a tensor method: no method of a built-in type
    (BUILTIN_METHODS), not on a module or name the file imports (`math.sqrt(2)`), `self`, `super()`
    or a literal; the same test as the call count of benchmarks/port_api_coverage.py."""
    if method in BUILTIN_METHODS:
        return False
    if isinstance(receiver, cst.Name):
        return receiver.value != "self" and receiver.value not in imported
    if isinstance(receiver, cst.Call):
        return not (isinstance(receiver.func, cst.Name) and receiver.func.value == "super")
    return not isinstance(receiver, (cst.BaseString, cst.BaseNumber, cst.List, cst.Tuple, cst.Dict, cst.Set,
                                     cst.ListComp, cst.DictComp, cst.SetComp))


def bind(row: ApiRow, call: cst.Call, receiver: cst.BaseExpression | None
         ) -> tuple[dict[str, cst.BaseExpression], list[cst.BaseExpression]]:
    """torch's arguments by parameter name, and what its `*name` parameter gathered."""
    sig = signature(row.params)
    if any(arg.star for arg in call.args):
        raise Manual("*args / **kwargs: the arguments cannot be mapped one by one")
    bound: dict[str, cst.BaseExpression] = {}
    gathered: list[cst.BaseExpression] = []
    slots = list(sig.positional)
    if receiver is not None:
        bound[slots.pop(0)] = receiver
    positional = [a.value for a in call.args if a.keyword is None]
    for index, value in enumerate(positional):
        if index < len(slots):
            bound[slots[index]] = value
        elif sig.star:
            gathered.append(value)
        else:
            raise Manual("more positional arguments than torch's signature has")
    for arg in call.args:
        if arg.keyword is None:
            continue
        name = arg.keyword.value
        if name not in sig.names or name in (sig.star, *sig.positional_only) or name in bound:
            raise Manual(f"keyword `{name}` is not one of torch's parameters here")
        bound[name] = arg.value
    missing = [name for name in sig.positional if name not in bound and name not in sig.defaults]
    if missing:
        raise Manual(f"no argument for `{missing[0]}`")
    return bound, gathered


def counterpart(row: ApiRow, call: cst.Call, receiver: cst.BaseExpression | None = None) -> cst.BaseExpression:
    """The MindSpore expression for this torch call (`receiver.method(...)` when receiver is given)."""
    if row.torch.endswith("_") and receiver is not None and not _written_in_place(receiver):
        raise Manual(f"`{source(receiver)}` is no variable: MindSpore's CPU writes an in-place result into "
                     "a copy of it (a slice, a transpose), not into the tensor it came from")
    bound, gathered = bind(row, call, receiver)
    for helper, read in READ_WHEN_PORTED.items():
        if re.search(rf"\b{helper}\(", row.mindspore):
            bound = read(bound, _spread(gathered))
    tree, named = template(row.mindspore)
    sig = signature(row.params)
    if gathered and sig.star not in named:
        raise Manual(f"`{', '.join(source(v) for v in gathered)}` has no counterpart in `{row.mindspore}`")
    for name, value in bound.items():
        if name in named or name in row.drop:
            continue
        if name not in sig.defaults or literal(value) != ast.literal_eval(sig.defaults[name]):
            raise Manual(f"`{name}={source(value)}` has no counterpart in `{row.mindspore}`")
    for name in named:
        count = len(re.findall(r"\{\*?" + name + r"!?\}", row.mindspore))
        value = bound.get(name)
        if count > 1 and value is not None and not isinstance(value, (cst.Name, cst.Attribute)) \
                and literal(value) is _UNSET:  # a name or a literal: evaluating it twice does no harm
            raise Manual(f"the counterpart uses `{name}` {count} times: bind `{source(value)}` to a name first")
    # the arguments of the template's calls first (spread, left out), then the placeholders left
    arguments = tree.visit(_Arguments(bound, gathered, sig))
    assert isinstance(arguments, cst.BaseExpression)
    filled = arguments.visit(_Names(bound, gathered, sig))
    assert isinstance(filled, cst.BaseExpression)
    return filled


def _written_in_place(receiver: cst.BaseExpression) -> bool:
    """A receiver an in-place method writes through: a name or an attribute, not an index or a
    computed view (`x.T`), which MindSpore's CPU gives as a copy."""
    if isinstance(receiver, cst.Attribute):
        return receiver.attr.value not in ("T", "mT", "H", "mH", "real", "imag")
    return isinstance(receiver, cst.Name)


class _Fill(cst.CSTTransformer):
    def __init__(self, bound: dict[str, cst.BaseExpression], gathered: list[cst.BaseExpression],
                 sig: Signature) -> None:
        super().__init__()
        self.bound, self.gathered, self.sig = bound, gathered, sig

    def value(self, name: str, parenthesize: bool) -> cst.BaseExpression:
        if name == self.sig.star:
            return _sizes(self.gathered)
        value = self.bound.get(name) or cst.parse_expression(self.sig.defaults[name])
        if parenthesize and not isinstance(value, (*_SIMPLE, cst.Call, cst.Subscript, cst.Tuple, cst.List)) \
                and not value.lpar:
            value = value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        return value


def _sizes(values: list[cst.BaseExpression]) -> cst.BaseExpression:
    """What a `*size` parameter gathered, as one sequence: `f(2, 3)` and `f((2, 3))` give (2, 3)."""
    if len(values) == 1 and isinstance(values[0], (cst.Tuple, cst.List)):
        return values[0]
    if len(values) == 1 and not isinstance(literal(values[0]), int):
        raise Manual(f"`{source(values[0])}`: one size or a sequence of sizes? (torch takes both)")
    return cst.Tuple([cst.Element(v) for v in values])


def _spread(values: list[cst.BaseExpression]) -> list[cst.BaseExpression]:
    """What a `*tensors` parameter gathered, as arguments: torch also takes them as one sequence
    (`torch.meshgrid([a, b])`), which MindSpore's spread counterparts do not. A sequence of one stays
    one argument: `torch.atleast_2d((x,))` gives a tuple, `atleast_2d(x)` a tensor."""
    if len(values) == 1 and isinstance(values[0], (cst.Tuple, cst.List)) and len(values[0].elements) > 1 \
            and not any(isinstance(e, cst.StarredElement) for e in values[0].elements):
        return [e.value for e in values[0].elements]
    return values


def _placeholder(node: cst.BaseExpression) -> tuple[str, str] | None:
    found = re.fullmatch(r"__([saf])_(\w+?)__", node.value) if isinstance(node, cst.Name) else None
    return (found.group(1), found.group(2)) if found else None


class _Arguments(_Fill):
    """A template call's arguments: `{*name}` spread, a keyword whose argument was not given left out."""

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.Call:
        args: list[cst.Arg] = []
        for arg in updated_node.args:
            found = _placeholder(arg.value)
            if found is None:
                args.append(arg)
            elif found[0] == "s":
                args += [cst.Arg(v) for v in _spread(self.gathered)]
            elif found[0] == "a" and arg.keyword is not None and found[1] not in self.bound:
                continue  # MindSpore's default is torch's
            else:
                args.append(arg.with_changes(value=self.value(found[1], parenthesize=False)))
        return updated_node.with_changes(args=[a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in args])


class _Names(_Fill):
    """The placeholders inside expressions, parenthesized where the argument is not atomic."""

    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.BaseExpression:
        found = _placeholder(updated_node)
        if found is None:
            return updated_node
        return self.value(found[1], parenthesize=True)
