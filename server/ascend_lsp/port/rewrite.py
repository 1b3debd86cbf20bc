"""The structural rewrite torch → MindSpore, on libcst so formatting and comments stay.

What it cannot convert stays as it was, under a `# MS301 port: …` (a counterpart exists,
this use needs a person) or `# MS302 port: …` (no counterpart) comment, and in the report.
"""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst
from libcst.metadata import ParentNodeProvider, PositionProvider

from ..knowledge.api_tables import mapping_rows
from ..knowledge.port_api import PortApi, load_port_api
from ..knowledge.weights import load_weight_table
from .api_table import counterpart, may_be_a_tensor
from .port_result import PortItem, PortResult
from .specs import (BY_TORCH, CONTAINER_CALLS, CONTAINER_DICT, CONTAINER_DICT_SOURCE, DTYPES, FIXED_CALLS, GAINS,
                    HELPERS, INIT, LAYER_CLASSES, NO_EFFECT, NUMPY_SCALAR, NUMPY_SCALAR_FUNCTIONS, REFERENCES, SCOPES,
                    SET_ITEMS, _UNSET, Manual, Out, Spec, adapter, expr, function_value, keep_arguments, literal, source)

HEADER = "import mindspore\nfrom mindspore import nn, ops\n"
MARK = "# {code} port: {reason}"
NEEDS_PERSON, UNSUPPORTED = "MS301", "MS302"
DEVICE_METHODS = {"cuda", "cpu", "to"}
# torch.nn.Module methods → mindspore.nn.Cell methods of the same meaning
CELL_METHODS = {"parameters": "get_parameters", "named_parameters": "parameters_and_names",
                "children": "cells", "named_children": "name_cells", "forward": "construct"}
_INPLACE: dict[type, type[cst.BaseBinaryOp]] = {
    cst.AddAssign: cst.Add, cst.SubtractAssign: cst.Subtract, cst.MultiplyAssign: cst.Multiply,
    cst.DivideAssign: cst.Divide}
HEADER_SLOT = "__ascend_lsp_port_header__"
# container methods that add a child after the container was set as an attribute: MindSpore named
# the child's parameters then, without the container's name
LATE_METHODS = {"append", "extend", "insert", "add_module", "register_module", "update"}
RENAME_PARAMETERS = "self.update_parameters_name()"
# torch functions whose result is a new tensor: an in-place method on it is seen by no alias
FRESH_TENSORS = {f"torch.{name}" for name in (
    "empty", "zeros", "ones", "full", "rand", "randn", "randint", "arange", "linspace", "eye", "tensor",
    "empty_like", "zeros_like", "ones_like", "full_like", "rand_like", "randn_like")}


def consistent_functions() -> dict[str, str]:
    """torch.X → mindspore.ops.Y for the rows the 2.4 mapping table (ops/nn, CPU kernels)
    lists as consistent with exactly one counterpart."""
    rows = mapping_rows("2.4")
    return {row["torch"]: "ops." + row["mindspore"][0].removeprefix("mindspore.ops.") for row in rows
            if row["class"] == ["consistent"] and len(row["mindspore"]) == 1
            and row["mindspore"][0].startswith("mindspore.ops.") and row["torch"].count(".") == 1}


class _Facts(cst.CSTVisitor):
    """First pass: the torch aliases, the module classes, and which layer each `self.X` holds."""

    def __init__(self) -> None:
        self.aliases: dict[str, str] = {}
        self.classes: dict[str, list[cst.Arg]] = {}
        self.attributes: dict[str, set[str]] = {}  # attribute name → torch layers assigned to it
        self.entries: dict[str, set[str]] = {}  # keyword / dict key → torch layers built for it
        self.layers: set[str] = set()  # every torch layer class the file names
        self.own_init: set[str] = set()  # classes that define __init__
        self.late_children: set[str] = set()  # classes whose __init__ adds children after the container is set
        self._class: list[str] = []
        self.imported: set[str] = set()  # every name an import binds (math, np): no tensor
        self.numpy: dict[str, str] = {}  # local name → numpy's (np → numpy, log → numpy.log)

    def visit_Import(self, node: cst.Import) -> None:
        for alias in node.names:
            name = source(alias.name)
            self.imported.add(alias.asname.name.value if alias.asname else name.split(".")[0])  # type: ignore[union-attr]
            if name == "numpy":
                self.numpy[alias.asname.name.value if alias.asname else name] = name  # type: ignore[union-attr]
            if name.split(".")[0] in ("torch", "torchvision"):
                local = alias.asname.name.value if alias.asname else name.split(".")[0]  # type: ignore[union-attr]
                self.aliases[local] = name if alias.asname else name.split(".")[0]

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        module = source(node.module) if node.module else ""
        if not isinstance(node.names, cst.ImportStar):
            self.imported.update(a.asname.name.value if a.asname else source(a.name)  # type: ignore[union-attr]
                                 for a in node.names)
            if module == "numpy":
                self.numpy.update({a.asname.name.value if a.asname else source(a.name):  # type: ignore[union-attr]
                                   f"numpy.{source(a.name)}" for a in node.names})
        if module.split(".")[0] not in ("torch", "torchvision") or isinstance(node.names, cst.ImportStar):
            return
        for alias in node.names:
            name = source(alias.name)
            local = alias.asname.name.value if alias.asname else name  # type: ignore[union-attr]
            self.aliases[local] = f"{module}.{name}"

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.classes[node.name.value] = list(node.bases)
        self._class.append(node.name.value)
        if any(isinstance(s, cst.FunctionDef) and s.name.value == "__init__" for s in node.body.body):
            self.own_init.add(node.name.value)

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self._class.pop()

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            t = target.target
            if self._class and isinstance(t, cst.Attribute) and _self_depth(t) >= 2:
                # self.a.b = ...: a child's child set late, or a parameter tied to another one
                self.late_children.add(self._class[-1])
        value = node.value
        if not isinstance(value, cst.Call):
            return
        for target in node.targets:
            t = target.target
            if isinstance(t, cst.Attribute) and isinstance(t.value, cst.Name) and t.value.value == "self":
                self.attributes.setdefault(t.attr.value, set()).add(self.qualname(value.func) or "")

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if self.qualname(node) in LAYER_CLASSES:
            self.layers.add(self.qualname(node) or "")

    def visit_Name(self, node: cst.Name) -> None:
        if self.qualname(node) in LAYER_CLASSES:
            self.layers.add(self.qualname(node) or "")

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if self._class and isinstance(func, cst.Attribute) and func.attr.value in LATE_METHODS \
                and isinstance(func.value, cst.Attribute) and _is_self(func.value.value):
            self.late_children.add(self._class[-1])  # self.layers.append(block)
        # the layers of an nn.ModuleDict(dict(wte=nn.Embedding(...)))
        for arg in node.args:
            if arg.keyword is not None and isinstance(arg.value, cst.Call):
                self.entries.setdefault(arg.keyword.value, set()).add(self.qualname(arg.value.func) or "")

    def visit_Dict(self, node: cst.Dict) -> None:
        for element in node.elements:
            key = literal(element.key) if isinstance(element, cst.DictElement) else None
            if isinstance(key, str) and isinstance(element.value, cst.Call):
                self.entries.setdefault(key, set()).add(self.qualname(element.value.func) or "")

    def qualname(self, node: cst.BaseExpression) -> str | None:
        if isinstance(node, cst.Name):
            return self.aliases.get(node.value)
        if isinstance(node, cst.Attribute):
            head = self.qualname(node.value)
            return f"{head}.{node.attr.value}" if head else None
        return None

    def numpy_name(self, node: cst.BaseExpression) -> str | None:
        """numpy's name for `np.log` or `log` (imported from numpy)."""
        if isinstance(node, cst.Name):
            return self.numpy.get(node.value)
        if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value in self.numpy:
            return f"{self.numpy[node.value.value]}.{node.attr.value}"
        return None

    def module_classes(self) -> set[str]:
        found: set[str] = set()
        changed = True
        while changed:
            changed = False
            for name, bases in self.classes.items():
                if name not in found and any(self.qualname(b.value) in LAYER_CLASSES
                                             or source(b.value) in found for b in bases):
                    found.add(name)
                    changed = True
        return found


class Porter(cst.CSTTransformer):
    METADATA_DEPENDENCIES = (PositionProvider, ParentNodeProvider)

    def __init__(self, facts: _Facts, api_table: PortApi | None = None) -> None:
        super().__init__()
        self.facts = facts
        self.api_table = api_table or load_port_api()  # another: its rows' proofs (tests/port/api_cases.py)
        self.module_classes = facts.module_classes()
        self.renames = load_weight_table().renames
        # parameter names that a layer this file uses has under another name in MindSpore (weight → gamma)
        self.renamed_here = {name for kind in facts.layers for name, new in self.renames.get(kind, {}).items()
                             if new != name}
        self.functions = consistent_functions()
        self.items: list[PortItem] = []
        self.marks: list[str] = []
        self.header_marks: list[list[str]] = []  # per enclosing function: the marks its signature raised
        self.initializers: set[str] = set()
        self.helpers: set[str] = set()
        # `x[a:b].zero_()` statements (original call) → the item assignment they become
        self.slice_writes: dict[cst.Call, cst.Assign] = {}
        self.class_stack: list[str] = []
        self.method_stack: list[str] = []
        self.narrowed: list[dict[str, list[str]]] = []  # isinstance() narrowing: name → torch layers

    # ------------------------------------------------------------------ bookkeeping

    def line(self, node: cst.CSTNode) -> int:
        return self.get_metadata(PositionProvider, node).start.line

    def converted(self, node: cst.CSTNode, what: str) -> None:
        self.items.append(PortItem(self.line(node), "converted", what))

    def flag(self, node: cst.CSTNode, code: str, reason: str) -> None:
        status = "manual" if code == NEEDS_PERSON else "unsupported"
        self.items.append(PortItem(self.line(node), status, reason, code))
        self.marks.append(MARK.format(code=code, reason=reason))

    def on_leave(self, original_node, updated_node):
        result = super().on_leave(original_node, updated_node)
        if self.marks and isinstance(result, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
            comments = [cst.EmptyLine(comment=cst.Comment(mark)) for mark in dict.fromkeys(self.marks)]
            self.marks = []
            result = result.with_changes(leading_lines=[*result.leading_lines, *comments])
        return result

    def qualname(self, node: cst.BaseExpression) -> str | None:
        return self.facts.qualname(node)

    def in_module_class(self) -> bool:
        return bool(self.class_stack) and self.class_stack[-1] in self.module_classes

    # ------------------------------------------------------------------ imports

    def leave_Module(self, original_node: cst.Module, updated_node: cst.Module) -> cst.Module:
        header = HEADER
        if self.initializers:
            header += f"from mindspore.common.initializer import {', '.join(sorted(self.initializers))}\n"
        header += "".join(sorted(self.helpers))
        new = list(cst.parse_module(header).body)
        body: list = []
        for statement in updated_node.body:
            if not _is_slot(statement):
                body.append(statement)
            elif new:  # the first torch import becomes the MindSpore header; the others go
                new[0] = new[0].with_changes(leading_lines=statement.leading_lines)
                body += new
                new = []
        if new:  # no torch import at the top level: after the docstring and __future__
            position = 0
            while position < len(body) and _is_preamble(body[position]):
                position += 1
            body[position:position] = new
        return updated_node.with_changes(body=body)

    def leave_SimpleStatementLine(self, original_node: cst.SimpleStatementLine,
                                  updated_node: cst.SimpleStatementLine):
        imports = [s for s in updated_node.body if isinstance(s, (cst.Import, cst.ImportFrom))]
        if not imports or len(imports) != len(updated_node.body) or not all(_imports_torch(s) for s in imports):
            return updated_node
        self.converted(original_node, "torch import → mindspore")
        if not isinstance(self.get_metadata(ParentNodeProvider, original_node), cst.Module):
            return cst.RemovalSentinel.REMOVE  # a local import: the module header binds the MindSpore names
        return updated_node.with_changes(body=[cst.Expr(cst.Name(HEADER_SLOT))])

    # ------------------------------------------------------------------ classes and methods

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.class_stack.append(node.name.value)

    def leave_ClassDef(self, original_node: cst.ClassDef, updated_node: cst.ClassDef) -> cst.ClassDef:
        self.class_stack.pop()
        return updated_node

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.method_stack.append(node.name.value)
        self.header_marks.append(self.marks)  # the marks before it, then its signature's
        self.marks = []

    def leave_Parameters(self, original_node: cst.Parameters, updated_node: cst.Parameters) -> cst.Parameters:
        if isinstance(self.get_metadata(ParentNodeProvider, original_node), cst.FunctionDef):
            self.header_marks[-1] = [*self.header_marks[-1], *self.marks]
            self.marks = []
        return updated_node

    def leave_FunctionDef(self, original_node: cst.FunctionDef, updated_node: cst.FunctionDef) -> cst.FunctionDef:
        self.method_stack.pop()
        self.marks = [*self.header_marks.pop(), *self.marks]  # above the `def` (on_leave writes them)
        if self.in_module_class() and original_node.name.value == "__init__" and not self.method_stack \
                and self.class_stack[-1] in self.facts.late_children and isinstance(updated_node.body, cst.IndentedBlock):
            # parameters are named when a child is set: one added to a container already set, or to a
            # child's child, would miss its path; renaming them all at the end gives torch's state-dict names
            self.converted(original_node, "children added late: parameter names set from their paths at the end")
            line = cst.parse_statement(RENAME_PARAMETERS + "  # torch's state-dict names for children added late\n")
            updated_node = updated_node.with_changes(body=updated_node.body.with_changes(
                body=[*updated_node.body.body, line]))
        if self.in_module_class() and original_node.name.value == "forward" and len(self.method_stack) == 0:
            self.converted(original_node, "forward → construct")
            return updated_node.with_changes(name=cst.Name("construct"))
        return updated_node

    def leave_Decorator(self, original_node: cst.Decorator, updated_node: cst.Decorator):
        target = original_node.decorator
        name = self.qualname(target.func if isinstance(target, cst.Call) else target)
        if name in SCOPES:
            self.converted(original_node, f"@{name} removed: {SCOPES[name]}")
            return cst.RemovalSentinel.REMOVE
        return updated_node

    def leave_With(self, original_node: cst.With, updated_node: cst.With):
        items = original_node.items
        name = self.qualname(items[0].item.func) if len(items) == 1 and isinstance(items[0].item, cst.Call) \
            and items[0].asname is None else None
        if name in SCOPES:
            self.converted(original_node, f"with {name}(…) removed: {SCOPES[name]}")
            body = updated_node.body
            if isinstance(body, cst.IndentedBlock):
                statements: list = list(body.body)
                if statements:
                    statements[0] = statements[0].with_changes(
                        leading_lines=[*updated_node.leading_lines, *statements[0].leading_lines])
                return cst.FlattenSentinel(statements)
        return updated_node

    def visit_If(self, node: cst.If) -> None:
        self.narrowed.append(self._isinstance(node.test))

    def leave_If(self, original_node: cst.If, updated_node: cst.If) -> cst.If:
        self.narrowed.pop()
        return updated_node

    def _isinstance(self, test: cst.BaseExpression) -> dict[str, list[str]]:
        if not (isinstance(test, cst.Call) and isinstance(test.func, cst.Name) and test.func.value == "isinstance"
                and len(test.args) == 2 and isinstance(test.args[0].value, cst.Name)):
            return {}
        kinds = test.args[1].value
        elements = [e.value for e in kinds.elements] if isinstance(kinds, cst.Tuple) else [kinds]
        return {test.args[0].value.value: [self.qualname(e) or "" for e in elements]}

    def leave_AugAssign(self, original_node: cst.AugAssign, updated_node: cst.AugAssign):
        operator = _INPLACE.get(type(updated_node.operator))
        if not self.in_module_class() or operator is None or not isinstance(updated_node.target, cst.Name):
            return updated_node
        self.converted(original_node, "in-place operator → out-of-place")
        value = cst.BinaryOperation(left=updated_node.target, operator=operator(),
                                    right=updated_node.value)
        return cst.Assign(targets=[cst.AssignTarget(updated_node.target)], value=value)

    def leave_BinaryOperation(self, original_node: cst.BinaryOperation, updated_node: cst.BinaryOperation):
        return updated_node.with_changes(**self._numpy_scalars(original_node, updated_node, ("left", "right")))

    def leave_UnaryOperation(self, original_node: cst.UnaryOperation, updated_node: cst.UnaryOperation):
        return updated_node.with_changes(**self._numpy_scalars(original_node, updated_node, ("expression",)))

    def _numpy_scalars(self, original: cst.CSTNode, updated: cst.CSTNode, sides: tuple[str, ...]) -> dict:
        """An operand that is a numpy call giving a scalar (`np.log(10000) / n * ops.arange(n)`) as the Python
        number it holds: numpy's operator would make an array of a MindSpore tensor (torch's tensor wins)."""
        changes = {}
        for side in sides:
            operand = getattr(original, side)
            name = self.facts.numpy_name(operand.func) if isinstance(operand, cst.Call) else None
            if name and name.removeprefix("numpy.") in NUMPY_SCALAR_FUNCTIONS:
                changes[side] = cst.Call(cst.Name(NUMPY_SCALAR), [cst.Arg(getattr(updated, side))])
                self.helpers.add(HELPERS[NUMPY_SCALAR])
                self.converted(operand, f"`{source(operand)}` in arithmetic → its Python number")
        return changes

    def leave_Assign(self, original_node: cst.Assign, updated_node: cst.Assign):
        target = updated_node.targets[0].target if len(updated_node.targets) == 1 else None
        if isinstance(target, cst.Subscript):
            return self._item_assignment(original_node, target, updated_node.value) or updated_node
        return updated_node

    def _item_assignment(self, original: cst.CSTNode, target: cst.Subscript, value: cst.BaseExpression
                         ) -> cst.BaseSmallStatement | None:
        """`x[a:b, c:d] = v` as `_set_items(x, (slice(a, b), slice(c, d)), v)`, which skips an index that
        selects nothing: MindSpore 2.10's CPU fails (memcpy_s) on a slice empty at run time followed by
        another index. None where no slice that may be empty comes before another index element."""
        parts = [element.slice for element in target.slice]
        if not all(isinstance(p, cst.Slice) or isinstance(p, cst.Index) and isinstance(literal(p.value), int)
                   for p in parts):
            return None  # an Ellipsis, None, a tensor or a name: the index's axes are not one per element
        if not any(isinstance(p, cst.Slice) and _may_be_empty(p) for p in parts[:-1]):
            return None
        index = cst.Tuple([cst.Element(_slice_call(p) if isinstance(p, cst.Slice) else cst.ensure_type(p, cst.Index).value)
                           for p in parts])
        self.helpers.add(HELPERS[SET_ITEMS])
        self.converted(original, f"`{source(target)} = …` → `{SET_ITEMS}(…)`: skipped where it selects nothing")
        return cst.Expr(cst.Call(cst.Name(SET_ITEMS), [cst.Arg(target.value), cst.Arg(index), cst.Arg(value)]))

    # ------------------------------------------------------------------ names

    def leave_Attribute(self, original_node: cst.Attribute, updated_node: cst.Attribute):
        try:
            renamed = self._weight_attribute(original_node)
        except Manual as exc:
            self.flag(original_node, NEEDS_PERSON, str(exc))
            return updated_node
        if renamed:
            self.converted(original_node, f"`.{original_node.attr.value}` → `.{renamed}`")
            return updated_node.with_changes(attr=cst.Name(renamed))
        if original_node.attr.value in CELL_METHODS and _is_self(original_node.value) and self.in_module_class():
            if original_node.attr.value != "forward" or self._called(original_node):
                new = CELL_METHODS[original_node.attr.value]
                self.converted(original_node, f"`self.{original_node.attr.value}` → `self.{new}`")
                return updated_node.with_changes(attr=cst.Name(new))
        if original_node.attr.value == "forward" and not _is_self(original_node.value) \
                and self.in_module_class() and self._called(original_node):
            # a child's (self.attn.forward(x), self.blocks[0].forward(x)) or the base class's (super().forward)
            self.converted(original_node, f"`{source(original_node)}(…)` → `.construct(…)`")
            return updated_node.with_changes(attr=cst.Name("construct"))
        return self._torch_name(original_node, updated_node)

    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name):
        if original_node.value in self.facts.aliases:
            return self._torch_name(original_node, updated_node)
        return updated_node

    def _torch_name(self, original, updated):
        """A torch name outside a call: a layer class (base, isinstance, default argument), a dtype."""
        qualname = self.qualname(original)
        if qualname is None:
            return updated
        parent = self.get_metadata(ParentNodeProvider, original)
        if isinstance(parent, cst.Attribute) and parent.value is original:
            return updated  # part of a longer name
        if isinstance(parent, cst.Attribute) and parent.attr is original or \
                isinstance(parent, cst.Arg) and parent.keyword is original \
                or isinstance(parent, cst.Param) and parent.name is original:
            return updated  # `x.nn`, `f(nn=…)`, `def f(nn)`: not the torch name
        if isinstance(parent, cst.Call) and parent.func is original:
            return updated  # leave_Call decides
        if isinstance(parent, (cst.ImportAlias, cst.Import, cst.ImportFrom)) or _inside_import(self, original):
            return updated
        if qualname in LAYER_CLASSES:
            new = cst.parse_expression(LAYER_CLASSES[qualname])
            if qualname in BY_TORCH and (not self._names_the_class(original) or self._base(original)) \
                    and (made := adapter(BY_TORCH[qualname])):
                # a default argument, a variable, a subclass's base: where it is called (`norm_layer(dim)`,
                # `super().__init__(…)`, `LayerNorm(width)`) the arguments stay torch's
                self.helpers.update(text for name, text in HELPERS.items() if name in made[1])
                self.helpers.add(made[1])
                self.converted(original, f"{qualname} → {made[0]}, which takes torch's arguments")
                return cst.Name(made[0])
            if qualname in BY_TORCH and BY_TORCH[qualname].params and not self._names_the_class(original):
                self.flag(original, NEEDS_PERSON, f"`{qualname}` passed as a value → `{LAYER_CLASSES[qualname]}`: "
                                                  "where it is called, check the arguments (MindSpore's "
                                                  "names or defaults differ)")
                return new
            self.converted(original, f"{qualname} → {LAYER_CLASSES[qualname]}")
            return new
        if qualname in BY_TORCH and (function := function_value(BY_TORCH[qualname])):
            # a function passed as a value (activation=F.gelu): called with the input alone
            self.helpers.update(text for name, text in HELPERS.items() if name in function)
            self.converted(original, f"{qualname} passed as a value → `{function}`")
            return cst.parse_expression(function)
        if qualname == "torch.nn" and isinstance(parent, cst.Arg) and self._getattr_argument(parent):
            self.flag(original, NEEDS_PERSON, "getattr(nn, …) picks the layer at run time: check that the "
                                              "mindspore.nn class of that name takes the same arguments")
            return cst.Name("nn")
        if qualname in REFERENCES:
            self.converted(original, f"{qualname} → {REFERENCES[qualname]}")
            return cst.parse_expression(REFERENCES[qualname])
        if qualname.startswith("torch.") and qualname[6:] in DTYPES:
            self.converted(original, f"{qualname} → mindspore.{DTYPES[qualname[6:]]}")
            return cst.parse_expression(f"mindspore.{DTYPES[qualname[6:]]}")
        if self._in_annotation(original):
            # Python never evaluates an annotation written as text: the signature keeps what it says
            self.converted(original, f"annotation `{source(original)}` kept as text")
            return cst.SimpleString(repr(source(original)))
        self.flag(original, UNSUPPORTED, f"`{qualname}` has no MindSpore counterpart here")
        return updated

    def _base(self, node: cst.CSTNode) -> bool:
        arg = self.get_metadata(ParentNodeProvider, node)
        return isinstance(arg, cst.Arg) and isinstance(self.get_metadata(ParentNodeProvider, arg), cst.ClassDef)

    def _layer_base(self, name: str, seen: frozenset[str] = frozenset()) -> str | None:
        """The torch layer the class `name` of this file derives from, directly or through its own classes."""
        for base in self.facts.classes.get(name, ()) if name not in seen else ():
            qualname = self.qualname(base.value)
            if qualname in BY_TORCH and qualname in LAYER_CLASSES:
                return qualname
            if isinstance(base.value, cst.Name) and (found := self._layer_base(base.value.value, seen | {name})):
                return found
        return None

    def _names_the_class(self, node: cst.CSTNode) -> bool:
        """A base class, an isinstance() / issubclass() kind, an annotation: nothing calls it with arguments."""
        parent = self.get_metadata(ParentNodeProvider, node)
        while isinstance(parent, (cst.Element, cst.Tuple)):  # isinstance(m, (nn.Conv2d, nn.Linear))
            parent = self.get_metadata(ParentNodeProvider, parent)
        if isinstance(parent, cst.Arg):
            owner = self.get_metadata(ParentNodeProvider, parent)
            return isinstance(owner, cst.ClassDef) or isinstance(owner, cst.Call) \
                and isinstance(owner.func, cst.Name) and owner.func.value in ("isinstance", "issubclass") \
                and owner.args[-1] is parent
        return self._in_annotation(parent)

    def _in_annotation(self, node: cst.CSTNode) -> bool:
        while not isinstance(node, (cst.Annotation, cst.BaseStatement)):
            node = self.get_metadata(ParentNodeProvider, node)
        return isinstance(node, cst.Annotation)

    def _getattr_argument(self, arg: cst.Arg) -> bool:
        call = self.get_metadata(ParentNodeProvider, arg)
        return isinstance(call, cst.Call) and isinstance(call.func, cst.Name) and call.func.value == "getattr" \
            and call.args[0] is arg

    def _weight_attribute(self, node: cst.Attribute) -> str | None:
        """`m.weight` → `m.gamma` when `m` is a BatchNorm (isinstance() or `self.m = nn.BatchNorm2d(...)`);
        Manual when `m` may be a layer that names it differently."""
        owner = node.value
        kinds: list[str] = []
        if _is_self(owner) and self.class_stack and (base := self._layer_base(self.class_stack[-1])):
            kinds = [base]  # `self.weight` in a subclass of a torch layer
        elif isinstance(owner, cst.Name):
            for scope in reversed(self.narrowed):
                if owner.value in scope:
                    kinds = scope[owner.value]
                    break
        elif isinstance(owner, cst.Attribute) and _is_self(owner.value):
            kinds = sorted(self.facts.attributes.get(owner.attr.value, ()))
        elif isinstance(owner, cst.Attribute) and isinstance(owner.value, cst.Attribute) \
                and _is_self(owner.value.value):  # self.transformer.wte, an entry of a ModuleDict
            kinds = sorted(self.facts.entries.get(owner.attr.value, ()))
        names = {self.renames.get(kind, {}).get(node.attr.value, node.attr.value) for kind in kinds}
        known = bool(kinds) and all(kinds)  # "" is a layer the file builds by a name that is not torch's
        if len(names) == 1 and known and (name := names.pop()) != node.attr.value:
            return name
        if node.attr.value in self.renamed_here and not _is_self(owner) and (len(names) > 1 or not known):
            raise Manual(f"`{source(node)}`: the port cannot tell which layer this is, and MindSpore names "
                         f"`.{node.attr.value}` differently in some layers this file uses (P05)")
        return None

    def _called(self, node: cst.CSTNode) -> bool:
        parent = self.get_metadata(ParentNodeProvider, node)
        return isinstance(parent, cst.Call) and parent.func is node

    # ------------------------------------------------------------------ calls

    def visit_Call(self, node: cst.Call) -> bool:
        return self._feature_test(node) is None  # a feature test's torch name is not converted

    def _feature_test(self, call: cst.Call) -> str | None:
        """`hasattr(torch.nn.functional, "name")`: the torch API whose presence it tests (of a module:
        `hasattr(torch.Tensor, "view")` asks the class, which the port maps, and stays)."""
        if not (isinstance(call.func, cst.Name) and call.func.value == "hasattr" and len(call.args) == 2
                and all(a.keyword is None and not a.star for a in call.args)):
            return None
        module, name = self.qualname(call.args[0].value), literal(call.args[1].value)
        if not module or not module.startswith("torch") or any(p[:1].isupper() for p in module.split(".")):
            return None
        return f"{module}.{name}" if isinstance(name, str) else None

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call):
        before = len(self.items)
        result = self._call(original_node, updated_node)
        qualname = self.qualname(original_node.func)
        if qualname and qualname.startswith(("torch", "torchvision")):
            for item in self.items[before:]:  # what this call's conversion reported
                item.call = True
        return result

    def _call(self, original_node: cst.Call, updated_node: cst.Call):
        probe = self._feature_test(original_node)
        if probe is not None:
            # in the port, the API is there exactly when the port has its counterpart
            present = probe in BY_TORCH or probe in LAYER_CLASSES or probe in self.functions
            self.converted(original_node, f"hasattr(… `{probe}`) → {present}: "
                                          f"the port {'has' if present else 'has no'} counterpart")
            return cst.Name(str(present))
        func = original_node.func
        qualname = self.qualname(func)
        if qualname is None:
            return self._method_call(original_node, updated_node)
        if qualname in BY_TORCH:
            return self._spec_call(original_node, updated_node, BY_TORCH[qualname])
        if qualname in FIXED_CALLS and not updated_node.args:
            self.converted(original_node, f"{qualname}() → {FIXED_CALLS[qualname]} in the port")
            return cst.parse_expression(FIXED_CALLS[qualname])
        if qualname == "torch.nn.ModuleDict" and self._holds_containers(original_node):
            self.converted(original_node, f"{qualname} holding containers → {CONTAINER_DICT} (a Cell)")
            self.helpers.add(CONTAINER_DICT_SOURCE)
            return updated_node.with_changes(func=cst.Name(CONTAINER_DICT))
        if qualname in LAYER_CLASSES:
            self.converted(original_node, f"{qualname} → {LAYER_CLASSES[qualname]}")
            if qualname in CONTAINER_CALLS and len(updated_node.args) == 1 \
                    and isinstance(updated_node.args[0].value, cst.GeneratorExp):
                # MindSpore's containers take a list, not a generator
                generator = updated_node.args[0].value
                updated_node = updated_node.with_changes(args=[updated_node.args[0].with_changes(value=cst.ListComp(
                    elt=generator.elt, for_in=generator.for_in))])
            return updated_node.with_changes(func=cst.parse_expression(LAYER_CLASSES[qualname]))
        if qualname == "torch.nn.init.calculate_gain":
            nonlinearity = literal(updated_node.args[0].value) if len(updated_node.args) == 1 else None
            gain = GAINS.get(nonlinearity) if isinstance(nonlinearity, str) else None
            if gain is None:
                self.flag(original_node, NEEDS_PERSON, "calculate_gain: only a literal nonlinearity without "
                                                       "parameter has a fixed value")
                return updated_node
            self.converted(original_node, f"calculate_gain → {gain!r}")
            return expr(gain)
        if qualname.startswith("torch.nn.init."):
            return self._init_call(original_node, updated_node, qualname.rsplit(".", 1)[1])
        if qualname in SCOPES or qualname in NO_EFFECT or qualname == "torch._assert":
            return updated_node  # the `with` / decorator / statement handles it
        if qualname in self.api_table.by_name:
            return self._api_table(original_node, updated_node, qualname)
        if qualname in self.functions:
            self.converted(original_node, f"{qualname} → {self.functions[qualname]} (consistent)")
            return updated_node.with_changes(func=cst.parse_expression(self.functions[qualname]))
        if qualname.startswith(("torch", "torchvision")):
            self.flag(original_node, UNSUPPORTED, f"`{qualname}` has no MindSpore counterpart in the port tables")
        return updated_node

    def _holds_containers(self, call: cst.Call) -> bool:
        finder = _CallFinder(self.facts, CONTAINER_CALLS)
        for arg in call.args:
            arg.value.visit(finder)
        return finder.found

    def _spec_call(self, original: cst.Call, updated: cst.Call, spec: Spec):
        try:
            args = _bind(updated, spec)
            built = spec.build(args)
            counterpart = spec.pick(args) if spec.pick else spec.mindspore
        except Manual as exc:
            self.flag(original, NEEDS_PERSON, f"`{spec.torch}` → `{spec.mindspore}`: {exc}")
            return updated
        self.helpers.update(text for name, text in HELPERS.items()
                            if name == counterpart or any(_names(value, name) for _, value in built))
        self.converted(original, f"{spec.torch} → {counterpart}")
        return updated.with_changes(func=cst.parse_expression(counterpart),
                                    args=_arguments(updated.args, built))

    def _init_call(self, original: cst.Call, updated: cst.Call, name: str):
        name = name if name.endswith("_") else name + "_"
        if name not in INIT or not updated.args or updated.args[0].keyword is not None:
            self.flag(original, UNSUPPORTED, f"`torch.nn.init.{name}` has no initializer counterpart")
            return updated
        cls, params = INIT[name]
        tensor = updated.args[0].value
        given: dict[str, cst.BaseExpression] = {}
        for index, arg in enumerate(updated.args[1:]):
            key = arg.keyword.value if arg.keyword else (params[index] if index < len(params) else "?")
            given[key] = arg.value
        try:
            init_args = _init_arguments(name, given)
        except Manual as exc:
            self.flag(original, NEEDS_PERSON, f"`torch.nn.init.{name}` → `{cls}`: {exc}")
            return updated
        self.initializers.update({"initializer", cls})
        t = source(tensor)
        self.converted(original, f"torch.nn.init.{name} → set_data(initializer({cls}(…)))")
        return cst.parse_expression(f"{t}.set_data(initializer({cls}({init_args}), {t}.shape, {t}.dtype))")

    def _method_call(self, original: cst.Call, updated: cst.Call):
        func = updated.func
        if not isinstance(func, cst.Attribute):
            return updated
        method = func.attr.value
        receiver = func.value
        if method == "size" and not _is_self(receiver) and len(updated.args) <= 1 and \
                all(a.keyword is None and a.star == "" for a in updated.args):
            self.converted(original, "`.size()` → `.shape`")
            shape = cst.Attribute(value=receiver, attr=cst.Name("shape"))
            if not updated.args:
                return shape
            return cst.Subscript(value=shape, slice=[cst.SubscriptElement(cst.Index(updated.args[0].value))])
        if method in ("new_zeros", "new_ones", "new_empty") and \
                (len(updated.args) > 1 or any(a.star == "*" for a in updated.args)) and \
                all(a.keyword is None and a.star != "**" for a in updated.args):
            self.converted(original, f"`.{method}(*size)` → `.{method}(size)`")
            size = cst.Tuple([cst.StarredElement(a.value) if a.star else cst.Element(a.value) for a in updated.args])
            return updated.with_changes(args=[cst.Arg(size)])
        if method in ("eval", "train") and len(updated.args) <= (method == "train") and \
                all(a.keyword is None and a.star == "" for a in updated.args):
            mode = updated.args[0].value if updated.args else cst.Name(str(method == "train"))
            self.converted(original, f"`.{method}()` → `.set_train({source(mode)})`")
            return updated.with_changes(func=func.with_changes(attr=cst.Name("set_train")), args=[cst.Arg(mode)])
        if method == "modules" and _is_self_or_child(receiver) and not updated.args and self.in_module_class():
            self.converted(original, f"`{source(receiver)}.modules()` → `{source(receiver)}.cells_and_names()`")
            return cst.parse_expression(f"(cell for _, cell in {source(receiver)}.cells_and_names())")
        if method in ("zero_", "fill_") and isinstance(receiver, cst.Subscript) and _basic_index(receiver) \
                and len(updated.args) == (method == "fill_") and all(not a.keyword and not a.star for a in updated.args) \
                and isinstance(self.get_metadata(ParentNodeProvider, original), cst.Expr):
            # a slice is a view in torch: its in-place fill writes into x, as x[a:b] = v does here
            # (MindSpore's CPU would fill a copy); leave_Expr writes the statement
            value = updated.args[0].value if updated.args else cst.Integer("0")
            self.slice_writes[original] = cst.Assign(targets=[cst.AssignTarget(receiver)], value=value)
            self.converted(original, f"`{source(receiver)}.{method}(…)` → `{source(receiver)} = {source(value)}`")
            return updated
        if method == "register_buffer" and _is_self(receiver):
            return updated  # the statement handler rewrites it
        if method in DEVICE_METHODS and self.in_module_class() and method != "to":
            self.flag(original, NEEDS_PERSON, f"`.{method}()`: MindSpore places tensors with mindspore.set_context")
            return updated
        if self.api_table.method(method) and may_be_a_tensor(receiver, method, self.facts.imported):
            return self._api_table(original, updated, f"torch.Tensor.{method}", receiver,
                                   self._fresh(cst.ensure_type(original.func, cst.Attribute).value))
        return updated

    def _fresh(self, node: cst.BaseExpression) -> bool:
        """A new tensor no name refers to, made by calls whose arguments call nothing (so evaluating it
        twice does no harm): a torch constructor's result (`torch.empty(n, n)`), or an in-place method's
        on one, which returns its receiver (`torch.empty(n, n).fill_(v)`)."""
        if not isinstance(node, cst.Call) or any(_calls(arg.value) for arg in node.args):
            return False
        if self.qualname(node.func) in FRESH_TENSORS:
            return True
        return isinstance(node.func, cst.Attribute) and node.func.attr.value.endswith("_") \
            and self._fresh(node.func.value)

    def _api_table(self, original: cst.Call, updated: cst.Call, name: str,
                   receiver: cst.BaseExpression | None = None, fresh: bool = False) -> cst.BaseExpression:
        """The port's API table (api_table.py) for a call the specs above do not cover: a proven
        row's counterpart; a row its executed test did not prove, left to a person with the reason."""
        row = self.api_table.by_name[name]
        if not row.proven:
            self.flag(original, NEEDS_PERSON, f"`{name}`: {row.left}")
            return updated
        try:
            new = counterpart(row, updated, receiver, fresh)
        except Manual as exc:
            self.flag(original, NEEDS_PERSON, f"`{name}` → `{row.mindspore}`: {exc}")
            return updated
        self.helpers.update(text for helper, text in HELPERS.items() if _names(new, helper))
        self.converted(original, f"{name} → {source(new)} (API table)")
        return new

    def leave_Expr(self, original_node: cst.Expr, updated_node: cst.Expr):
        call = updated_node.value
        if original_node.value in self.slice_writes:
            write = self.slice_writes[original_node.value]  # type: ignore[index]
            return self._item_assignment(original_node, write.targets[0].target, write.value) or write  # type: ignore[arg-type]
        effect = NO_EFFECT.get(self.qualname(original_node.value.func) or "") \
            if isinstance(original_node.value, cst.Call) else None
        if effect:
            self.converted(original_node, f"removed: {effect}")
            return cst.RemovalSentinel.REMOVE
        if isinstance(call, cst.Call) and isinstance(original_node.value, cst.Call) \
                and self.qualname(original_node.value.func) == "torch._assert" \
                and 1 <= len(call.args) <= 2 and all(a.keyword is None and not a.star for a in call.args):
            self.converted(original_node, "torch._assert → assert")
            return cst.Assert(test=call.args[0].value, msg=call.args[1].value if len(call.args) == 2 else None)
        if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute)
                and call.func.attr.value == "register_buffer" and _is_self(call.func.value)):
            return updated_node
        try:
            args = _bind(call, Spec("register_buffer", "", ("name", "tensor", "persistent"), keep_arguments()))
        except Manual as exc:
            self.flag(original_node, NEEDS_PERSON, f"register_buffer: {exc}")
            return updated_node
        name, persistent = literal(args.get("name")), literal(args.get("persistent", cst.Name("True")))
        if not isinstance(name, str) or not name.isidentifier() or persistent not in (True, False):
            self.flag(original_node, NEEDS_PERSON, "register_buffer: the name and `persistent` must be literals")
            return updated_node
        tensor = source(args["tensor"])
        # A persistent buffer is in the state dict: a Parameter that does not train; a
        # non-persistent one is a plain tensor attribute.
        value = f"mindspore.Parameter({tensor}, name={name!r}, requires_grad=False)" if persistent else tensor
        self.converted(original_node, "register_buffer → " + ("Parameter(requires_grad=False)" if persistent
                                                               else "tensor attribute"))
        return cst.Assign(targets=[cst.AssignTarget(cst.Attribute(cst.Name("self"), cst.Name(name)))],
                          value=cst.parse_expression(value))


class _CallFinder(cst.CSTVisitor):
    def __init__(self, facts: _Facts, names: tuple[str, ...]) -> None:
        self.facts, self.names, self.found = facts, names, False

    def visit_Call(self, node: cst.Call) -> None:
        self.found = self.found or self.facts.qualname(node.func) in self.names


def _arguments(given: Sequence[cst.Arg], built: Out) -> list[cst.Arg]:
    """The counterpart's arguments. An argument passed on keeps its comma and the whitespace and
    comments around it (a multi-line call stays multi-line); new ones are written `name=value`."""
    passed = {id(arg.value): arg for arg in given}
    tight = cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace(""))
    args = []
    for keyword, value in built:
        arg = passed.get(id(value)) or cst.Arg(value=value)
        if keyword is None:
            arg = arg.with_changes(keyword=None, equal=cst.MaybeSentinel.DEFAULT)
        elif arg.keyword is None or arg.keyword.value != keyword:
            arg = arg.with_changes(keyword=cst.Name(keyword), equal=arg.equal if arg.keyword else tight)
        args.append(arg)
    last_comma = given[-1].comma if given else cst.MaybeSentinel.DEFAULT  # a trailing comma stays
    for index, arg in enumerate(args):
        if index == len(args) - 1:
            args[index] = arg.with_changes(comma=last_comma)
        elif not isinstance(arg.comma, cst.Comma):
            args[index] = arg.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
    return args


def _bind(call: cst.Call, spec: Spec) -> dict[str, cst.BaseExpression]:
    """torch's arguments by parameter name; dropped parameters removed. A `**mapping` is left out
    when it can only set dropped parameters (`nn.Dropout(p, **params)`: `inplace` at most)."""
    args: dict[str, cst.BaseExpression] = {}
    params = spec.params
    positional = [a for a in call.args if a.keyword is None and not a.star]
    mappings = [a for a in call.args if a.star == "**"]
    if any(a.star == "*" for a in call.args) or len(mappings) > 1:
        raise Manual("*args / **kwargs: the arguments cannot be mapped one by one")
    if params and params[0].startswith("*"):
        values = [a.value for a in positional]
        if len(values) == 1:
            args[params[0]] = values[0]
        elif values:
            args[params[0]] = cst.Tuple([cst.Element(v) for v in values])
        params = params[1:]
    else:
        if len(positional) > len(params):
            raise Manual("more positional arguments than torch's signature has")
        args.update({params[i]: a.value for i, a in enumerate(positional)})
    for arg in call.args:
        if arg.keyword is not None:
            if arg.keyword.value not in params:
                raise Manual(f"keyword `{arg.keyword.value}` is not handled")
            args[arg.keyword.value] = arg.value
    settable = [p for p in params if p not in args and p not in spec.dropped and not p.startswith("*")]
    if mappings and settable:
        raise Manual(f"`**{source(mappings[0].value)}` may set `{settable[0]}`: the arguments cannot be mapped "
                     "one by one")
    for name in spec.dropped:
        args.pop(name, None)
    return args


def _init_arguments(name: str, given: dict[str, cst.BaseExpression]) -> str:
    text = {k: source(v) for k, v in given.items()}
    if name in ("zeros_", "ones_"):
        return ""
    if name == "constant_":
        return text["val"]
    if name in ("normal_", "trunc_normal_"):
        parts = [f"sigma={text.get('std', '1.0')}", f"mean={text.get('mean', '0.0')}"]
        if name == "trunc_normal_":
            parts += [f"a={text.get('a', '-2.0')}", f"b={text.get('b', '2.0')}"]
        return ", ".join(parts)
    if name == "uniform_":
        low, high = literal(given.get("a")), literal(given.get("b"))
        a, b = text.get("a", "0.0"), text.get("b", "1.0")
        if (isinstance(low, (int, float)) and low == -high) or a.replace(" ", "") == f"-{b}".replace(" ", ""):  # type: ignore[operator]
            return f"scale={b}"
        raise Manual("mindspore's Uniform is symmetric: only uniform_(t, -s, s) maps")
    if name in ("xavier_uniform_", "xavier_normal_"):
        return f"gain={text['gain']}" if "gain" in text else ""
    # kaiming: torch's a → negative_slope; mode and nonlinearity keep their names and defaults
    parts = [f"negative_slope={text['a']}"] if "a" in text else []
    parts += [f"{k}={text[k]}" for k in ("mode", "nonlinearity") if k in text]
    return ", ".join(parts)


def _self_depth(node: cst.BaseExpression) -> int:
    """How many attributes deep `self.a.b` is (2); 0 for anything not rooted at `self`."""
    depth = 0
    while isinstance(node, cst.Attribute):
        node, depth = node.value, depth + 1
    return depth if _is_self(node) else 0


def _may_be_empty(part: cst.Slice) -> bool:
    """Whether `a:b` may select nothing along an axis that is not empty: a bound that is no literal, a start
    past 0 (the axis may be that short), an end at or before 0."""
    lower, upper = (literal(b) if b is not None else None for b in (part.lower, part.upper))
    if lower is _UNSET or upper is _UNSET:
        return True
    return isinstance(lower, int) and lower > 0 or isinstance(upper, int) and upper <= 0


def _slice_call(part: cst.Slice) -> cst.BaseExpression:
    """`a:b` as `slice(a, b)`, `::2` as `slice(None, None, 2)`."""
    bounds = [part.lower, part.upper, *([part.step] if part.step is not None else [])]
    return cst.parse_expression(f"slice({', '.join(source(b) if b is not None else 'None' for b in bounds)})")


def _calls(node: cst.CSTNode) -> bool:
    """Whether `node` holds a call other than a number's from literals (`float("-inf")`)."""
    finder = _CallInside()
    node.visit(finder)
    return finder.found


class _CallInside(cst.CSTVisitor):
    def __init__(self) -> None:
        self.found = False

    def visit_Call(self, node: cst.Call) -> None:
        number = isinstance(node.func, cst.Name) and node.func.value in ("float", "int") \
            and all(literal(arg.value) is not _UNSET for arg in node.args)
        self.found = self.found or not number


def _names(node: cst.CSTNode, name: str) -> bool:
    """Whether `name` is called or referred to anywhere in `node`."""
    finder = _NameFinder(name)
    node.visit(finder)
    return finder.found


class _NameFinder(cst.CSTVisitor):
    def __init__(self, name: str) -> None:
        self.name, self.found = name, False

    def visit_Name(self, node: cst.Name) -> None:
        self.found = self.found or node.value == self.name


def _is_super(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "super"


def _is_self(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value == "self"


def _basic_index(node: cst.Subscript) -> bool:
    """`x[a:b]`, `x[0, :2]`, `x[..., 1:]`: slices and int literals only, which index a view in torch
    (a tensor or list index gives a copy)."""
    return all(isinstance(e.slice, cst.Slice) or (isinstance(e.slice, cst.Index) and (
        isinstance(e.slice.value, cst.Ellipsis) or isinstance(literal(e.slice.value), int))) for e in node.slice)


def _is_self_or_child(node: cst.BaseExpression) -> bool:
    """`self` or `self.mlp`: in a module class, a cell (no tensor has `.modules()`)."""
    return _is_self(node) or (isinstance(node, cst.Attribute) and _is_self(node.value))


def _imports_torch(statement: cst.Import | cst.ImportFrom) -> bool:
    if isinstance(statement, cst.Import):
        return all(source(a.name).split(".")[0] == "torch" for a in statement.names)
    return statement.module is not None and source(statement.module).split(".")[0] == "torch" \
        and not statement.relative


def _inside_import(porter: Porter, node: cst.CSTNode) -> bool:
    while node is not None:
        if isinstance(node, (cst.Import, cst.ImportFrom)):
            return True
        try:
            node = porter.get_metadata(ParentNodeProvider, node)
        except KeyError:
            return False
    return False


def _is_slot(statement: cst.CSTNode) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and isinstance(statement.body[0], cst.Expr) \
        and isinstance(statement.body[0].value, cst.Name) and statement.body[0].value.value == HEADER_SLOT


def _is_preamble(statement: cst.CSTNode) -> bool:
    if not isinstance(statement, cst.SimpleStatementLine):
        return False
    first = statement.body[0]
    if isinstance(first, cst.Expr) and isinstance(first.value, (cst.SimpleString, cst.ConcatenatedString)):
        return True
    return isinstance(first, cst.ImportFrom) and first.module is not None and source(first.module) == "__future__"


def port(text: str, path: str = "<source>", api_table: PortApi | None = None) -> PortResult:
    module = cst.parse_module(text)
    facts = _Facts()
    module.visit(facts)
    wrapper = cst.MetadataWrapper(module)
    porter = Porter(facts, api_table)
    ported = wrapper.visit(porter)
    items = sorted(porter.items, key=lambda item: item.line)
    return PortResult(path=path, text=ported.code, items=items)
