"""The one mechanism behind every table-driven rule: look a name, method, string or
environment variable up in `mappings/`, report the entry's rule, and build its fix."""

from __future__ import annotations

import ast
import re
from typing import cast

from ..engine.checker import Checker, Reference, shown_only
from ..engine.model import Applicability, Fix, Range, Related, Severity
from ..knowledge.api_tables import Entry
from ..engine.walk import StringContext, last_name
from ..engine.registry import TABLE_HANDLER, TableRef, handles
from ..knowledge.portable import Form
from .device_strings import REGISTERED, at_device_argument, device_prefix_test, device_remark, callers_of_default
from .harmless_calls import ONNX_PROVIDER, hides_every_gpu, method_place, opt_in_place, reference_place
from .harmless_uses import backend_place, env_place, import_place, rebound_for_npu
from .transfer_scope import passed_in_place, transfer_place
from .literal_text import literal_text_spans
from .opt_in_imports import or_opt_in_binding
from .portable_fixes import (PORTABLY, api_fix, backend_fix, device_string_fix, form_of, method_fix, needs_own_fix,
                             styled, switch_branch, unused_import_fix, variable_branch)

# The lookups of the rules real migrations trip over, in NPU1xx, NPU3xx and NPU4xx (docs/real-world-rules.md).
REAL_WORLD_TABLE = TableRef("mappings/torch_npu/realworld.toml", ("api",))

# "cuda", "cuda:0", f"cuda:{rank}", "cuda:%d" % rank, "cuda:" + str(rank)
DEVICE_STRING = re.compile(r"(?P<word>cuda)(?::(?:\d+|\{\}|%[dis])?)?")
ATTRIBUTE_FUNCTIONS = frozenset({"getattr", "hasattr", "setattr", "delattr"})
SEARCH_METHODS = frozenset({"startswith", "endswith", "find", "rfind", "index", "rindex", "count", "split", "rsplit",
                          "partition", "rpartition", "strip", "lstrip", "rstrip", "removeprefix", "removesuffix"})
BACKEND_STRING = re.compile(r"(?:(?:cpu|cuda):)?(?:gloo|nccl|mpi|ucc)(?:,(?:(?:cpu|cuda):)?(?:gloo|nccl|mpi|ucc))*")
FROM_MODULE = re.compile(r"from\s+(?P<module>[\w.]+)\s+import")


def is_prose(context: StringContext) -> bool:
    return context.kind == "message"


def names_no_device(checker: Checker, context: StringContext, replacement: str) -> bool:
    """The literal is not a device or backend being chosen: an attribute name
    (`getattr(torch.version, "cuda")`), text being searched (`name.endswith("cuda")`; not a device's
    beginning, device_prefix_test), a
    `Literal[...]` type, or one option among others that already include the NPU one
    (`["cuda", "npu"]`, `{"cuda": a, "npu": b}`, `choices=["nccl", "hccl"]`, an enum with
    `CUDA = "cuda"` and `NPU = "npu"`)."""
    call = context.call
    if context.kind == "arg" and call is not None:
        func = call.func
        if type(func) is ast.Name and func.id in ATTRIBUTE_FUNCTIONS and context.position == 1:
            return True
        if type(func) is ast.Attribute and func.attr in SEARCH_METHODS and not device_prefix_test(call):
            return True
    if context.kind == "subscript":
        if last_name(cast(ast.Subscript, context.node).value) == "Literal":
            return True
    return replacement in sibling_strings(checker, context.siblings)


def sibling_strings(checker: Checker, siblings: tuple) -> frozenset:
    """The string constants among `siblings`, computed once per display (not per element)."""
    known = checker.derived.get(id(siblings))
    if known is None or known[0] is not siblings:
        strings = frozenset(e.value for e in siblings if type(e) is ast.Constant and type(e.value) is str)
        known = checker.derived[id(siblings)] = (siblings, strings)
    return cast(frozenset, known[1])


def selects_device(context: StringContext) -> bool:
    """The literal is used as a device: a device argument (`torch.device("cuda")`,
    `.to("cuda")`, `device="cuda"`, `map_location="cuda:0"`) or compared with a device or
    its type (`x.device.type == "cuda"`). Only there is renaming it meaning kept; a value
    assigned, a dict key, an enum member or one element of a list may be anything (a
    name, a key looked up elsewhere), so its rewrite needs review."""
    if context.siblings:
        return False
    if context.kind == "arg":
        return at_device_argument(context) or (context.call is not None and device_prefix_test(context.call))
    if context.kind == "compare" and type(context.node) is ast.Compare:
        operands = (context.node.left, *context.node.comparators)
        return any(type(o) is not ast.Constant and last_name(o) in ("type", "device") for o in operands)
    return False


def backend_spec(value: str) -> bool:
    """`value` names a torch.distributed backend that includes NCCL."""
    return "nccl" in value and BACKEND_STRING.fullmatch(value) is not None


def with_torch_npu(checker: Checker, target: str) -> list:
    """`torch.npu` and `torch_npu` only exist once `torch_npu` is imported."""
    if target.startswith(("torch.npu", "torch_npu")):
        return [checker.require_module("torch_npu")]
    return []


def message(checker: Checker, entry: Entry, name: str, replacement: str | None) -> str:
    # NPU201's message also names the chip and the support list's version
    text = checker.rules[entry.rule].message.format(name=name, chip=checker.settings.chip,
                                                    version=checker.tables.support_version)
    if replacement and entry.fix != Applicability.DISPLAY.value:
        text += f" Use `{replacement}`."
    elif replacement:
        text += f" Consider `{replacement}`."
    if entry.note:
        text += " " + entry.note
    return text


def report(checker: Checker, entry: Entry, where, name: str, replacement: str | None, fix: Fix | None,
           portable: Fix | None = None, form: Form | None = None,
           remark: tuple[Severity | None, str] | None = None, related: tuple[Related, ...] = (),
           shown: bool = False) -> None:
    """Report the entry with its fix and, where it has one, its portable fix (`form`: the
    portable row), in the order the `fix-style` setting prefers (portable_fixes.styled).
    `remark`: (a severity, or None for the rule's; what the message says after the entry's
    text): where the code shows the finding matters less, (the lower severity, why); where
    there is no fix, (None, why). `shown`: the fixes are shown, never applied (code that
    chooses per device, where the rewrite would take the other devices' choice away)."""
    fixes, note = styled(checker, fix, portable, form)
    if shown:
        fixes = shown_only(fixes)
    text = message(checker, entry, name, replacement) + note + (remark[1] if remark else "")
    severity = remark[0] if remark and remark[0] else Severity.parse(entry.severity) \
        if entry.severity and checker.settings.chip not in entry.severity_except_on else None
    checker.report(entry.rule, where, text, fixes, severity=severity,
                   origin=entry.origin, deprecated=entry.deprecated, related=related,
                   extra={"api": name, "replacement": replacement, "note": entry.note, "source": entry.source})


def replacement_for(entry: Entry, qualname: str) -> str | None:
    if not entry.replacement:
        return None
    return entry.replacement + qualname[len(entry.name):]


def applies_to_call(entry: Entry, call: ast.Call | ast.ClassDef | None) -> bool:
    """Whether the entry's `if_keyword` condition holds: the call (or a class statement, whose
    keywords are `metaclass=` and the like) passes that keyword, not as None or False."""
    if entry.if_keyword is None:
        return True
    if call is None:
        return False
    for kw in call.keywords:
        if kw.arg == entry.if_keyword:
            value = kw.value
            return not (type(value) is ast.Constant and value.value in (None, False))
    return False


# --- qualified names ---------------------------------------------------------------------
def written_name(checker: Checker, ref: Reference, new: str) -> tuple[str, list]:
    """`new` as the file can write it in place of the reference, and the import that needs:
    the file's alias for the unchanged head (`t.cuda.x` → `t.npu.x`), else the name spelled
    out, its root imported."""
    root = ref.node
    while type(root) is ast.Attribute:
        root = root.value
    if new.startswith(ref.binding + ".") and type(root) is ast.Name:
        return root.id + new[len(ref.binding):], []
    head = new.partition(".")[0]
    return new, [checker.require_name(head)] if ref.scope.lookup(head) != head else []


def rename_fix(checker: Checker, entry: Entry, ref: Reference, new: str) -> Fix:
    text, edits = written_name(checker, ref, new)
    edits.append(checker.replace(ref.node, text))
    edits.extend(with_torch_npu(checker, new))
    return checker.fix(f"Replace `{ref.qualname}` with `{new}`", Applicability(entry.fix), *edits)


def carried_by_import(checker: Checker, entry: Entry, ref: Reference, new: str | None) -> bool:
    """Whether the import that binds the reference's first name already reports `entry`."""
    bound = checker.tables.lookup(ref.binding)
    if bound is None or bound.if_keyword is not None:
        return False
    return bound.name.startswith(entry.name) or bool(entry.replacement and replacement_for(bound, ref.qualname)
                                                      in (None, new))


@handles("reference", TABLE_HANDLER)
def check_reference(checker: Checker, ref: Reference) -> None:
    tables = checker.tables
    entry = tables.lookup(ref.qualname)
    if entry is None or not applies_to_call(entry, ref.call):
        return
    # Bound by an import that the tables name (`from torch.cuda.amp import autocast`,
    # `import triton`): that import carries the finding. A use still gets its own when
    # it reaches a more specific entry that needs a person (`cuda.nvtx` after
    # `from torch import cuda`) or one the import's rename does not cover
    # (`ProfilerActivity.CUDA` becomes `ProfilerActivity.NPU`).
    # In the portable style a call the import's rename cannot fix (`GradScaler()` needs
    # the device's type) gets its own finding, with the call's portable fix.
    new = replacement_for(entry, ref.qualname)
    carried = carried_by_import(checker, entry, ref, new)
    if carried and not needs_own_fix(checker, ref.qualname):
        return
    fix = portable = None
    if new and entry.fix is not None and not carried:
        fix = rename_fix(checker, entry, ref, new)
    form = form_of("api", ref.qualname)
    if form is not None and entry.fix is not None:
        portable = api_fix(checker, ref, *written_name(checker, ref, form.replacement), Applicability(entry.fix))
    elif new and entry.fix is not None and (form := form_of("branch", ref.qualname)) is not None:
        module = written_name(checker, ref, form.replacement.partition("(")[0])
        portable = switch_branch(checker, ref, new, module, Applicability(entry.fix))
    remark = reference_place(checker, entry.rule, ref) or transfer_place(checker, entry, ref.node)
    related: tuple[Related, ...] = ()
    if entry.rule.startswith("NPU3"):  # a CUDA library's name bound only where its package is installed
        remark, related = or_opt_in_binding(checker, ref, remark)
    report(checker, entry, ref.node, ref.qualname, new, fix, portable, form, remark, related)


def import_fix(checker: Checker, stmt: ast.Import | ast.ImportFrom, alias: ast.alias, entry: Entry,
               new: str) -> Fix | None:
    if isinstance(stmt, ast.Import):
        if not alias.asname and "." in alias.name:
            return None  # `import a.b` binds `a`: the uses carry the rename
        text = f"{new} as {alias.asname}" if alias.asname else (new if "." not in new else f"{new} as {alias.name}")
        return checker.fix(f"Import `{new}`", Applicability(entry.fix), checker.replace(alias, text), *with_torch_npu(checker, new))
    # `from A import B`: every name the statement imports must move to the same module.
    module, _, name = new.rpartition(".")
    for other in stmt.names:
        other_entry = checker.tables.lookup(f"{stmt.module}.{other.name}")
        other_new = replacement_for(other_entry, f"{stmt.module}.{other.name}") if other_entry else None
        if not other_new or other_new.rpartition(".")[0] != module:
            return None
    found = FROM_MODULE.match(checker.source.segment(checker.range(stmt)))
    if not found:
        return None
    start = checker.range(stmt)
    head = checker.source.line(start.start_line)[start.start_col:]
    if not head.startswith(found.group(0)):
        return None  # the module name spans lines
    col = start.start_col + found.start("module")
    module_range = Range(start.start_line, col, start.start_line, col + len(found.group("module")))
    edits = [checker.replace(module_range, module)]
    if name != alias.name:
        edits.append(checker.replace(alias, f"{name} as {alias.asname or alias.name}"))
    return checker.fix(f"Import from `{module}`", Applicability(entry.fix), *edits, *with_torch_npu(checker, new))


@handles("import", TABLE_HANDLER)
def check_import(checker: Checker, stmt, alias: ast.alias, qualname: str) -> None:
    entry = checker.tables.lookup(qualname)
    if entry is None or entry.if_keyword is not None:
        return
    new = replacement_for(entry, qualname)
    fix = import_fix(checker, stmt, alias, entry, new) if new and entry.fix is not None else None
    form = form_of("api", qualname)
    portable = unused_import_fix(checker, stmt, Applicability(entry.fix)) \
        if form is not None and entry.fix is not None else None
    remark = import_place(checker, stmt, alias, qualname) or transfer_place(checker, entry, stmt)
    if remark is None and entry.rule.startswith("NPU3"):
        remark = opt_in_place(checker, stmt, qualname, (alias.asname or alias.name).partition(".")[0])
    shown = remark is None and (rebound := rebound_for_npu(checker, stmt, alias, qualname)) is not None
    if shown:
        remark = Severity.INFO, rebound
    report(checker, entry, alias, qualname, new, fix, portable, form, remark, shown=shown)


# --- methods and attributes by shape ------------------------------------------------------
def torch_method_shape(entry: Entry, node: ast.Attribute, call: ast.Call | None) -> bool:
    """Whether `x.name(...)` can be torch's method: its arguments fit torch's parameters,
    and `x` is not the result of a method the row excludes (`x.cpu().double()`)."""
    receiver = node.value
    if call is None and (type(node.ctx) is not ast.Load or getattr(receiver, "id", None) in ("self", "cls")):
        return False  # assigning `x.is_cuda`, or `self.is_cuda`: the code's own attribute, not the tensor's
    if (type(receiver) is ast.Call and type(receiver.func) is ast.Attribute
            and receiver.func.attr in entry.not_after):
        return False
    if call is None or entry.parameters is None:
        return True
    if len(call.args) > len(entry.parameters):
        return False
    return all(kw.arg is None or kw.arg in entry.parameters for kw in call.keywords)


@handles("attribute", TABLE_HANDLER, names=lambda tables: tables.methods)
def check_method(checker: Checker, node: ast.Attribute, attr: str, call: ast.Call | None) -> None:
    entry = checker.tables.methods.get(attr)
    if entry is None or entry.call != (call is not None) or not torch_method_shape(entry, node, call):
        return
    shown = f".{attr}()" if entry.call else f".{attr}"
    end = checker.range(node)
    attr_range = Range(end.end_line, end.end_col - len(attr), end.end_line, end.end_col)
    fix = None
    if entry.replacement and entry.fix is not None:
        fix = checker.fix(f"Replace `{shown}` with `.{entry.replacement}{'()' if entry.call else ''}`", Applicability(entry.fix),
                          checker.replace(attr_range, entry.replacement),
                          *with_torch_npu(checker, "torch_npu"))
    new = f".{entry.replacement}{'()' if entry.call else ''}" if entry.replacement else None
    form = form_of("method", attr)
    portable = method_fix(checker, attr, attr_range, call, Applicability(entry.fix)) \
        if form is not None and entry.fix is not None else None
    report(checker, entry, attr_range, shown, new, fix, portable, form,
           method_place(checker, entry.rule, node) or transfer_place(checker, entry, node))


# --- strings: devices, backends, environment variables ------------------------------------
def word_fix(checker: Checker, node: ast.AST, words: list[tuple[str, str]], applicability: Applicability,
             title: str) -> Fix | None:
    """Replace each (old, new) word in the literal text of the string's source (never
    inside an f-string's `{...}`, where `cuda` may be part of a variable's name)."""
    rng = checker.range(node)
    if rng.start_line != rng.end_line:
        return None
    line = checker.source.line(rng.start_line)
    segment = line[rng.start_col:rng.end_col]
    spans = literal_text_spans(segment, type(node) is ast.JoinedStr)
    parts = [segment[a:b] for a, b in spans]
    for old, replacement in words:
        if not any(old in part for part in parts):
            return None  # split across implicit concatenation: not ours to guess
        parts = [part.replace(old, replacement) for part in parts]
    new, end = [], 0
    for (a, b), part in zip(spans, parts):
        new += [segment[end:a], part]
        end = b
    return checker.fix(title, applicability, checker.replace(rng, "".join(new) + segment[end:]))


@handles("string", TABLE_HANDLER, contexts=("arg", "compare", "subscript", "value"))
def check_string(checker: Checker, node: ast.AST, value: str, context: StringContext) -> None:
    if is_prose(context) or len(value) > 64:
        return
    tables = checker.tables
    env = tables.env.get(value)
    if env is not None:
        if hides_every_gpu(checker, node, value):
            return
        fix = portable = None
        form = form_of("env", value)
        if env.value_scale is not None:  # the name alone: its value stays in the old unit
            report(checker, env, node, value, env.replacement, None, None, None,
                   (None, " No fix in Python: the value must be converted with the name, which only a launch "
                          "script's, Dockerfile's or compose file's fix does, for a literal value."))
            return
        place = env_place(checker, node, value)  # TensorFlow's variable: renaming it gives TensorFlow no NPU
        if env.replacement and env.fix is not None and place is None:
            fix = word_fix(checker, node, [(value, env.replacement)], Applicability(env.fix),
                           f"Replace `{value}` with `{env.replacement}`")
            if form is not None:
                portable = word_fix(checker, node, [(value, form.replacement)], Applicability(env.fix),
                                    f"{PORTABLY}Replace `{value}` with `{form.replacement}`")
            else:
                portable = variable_branch(checker, node, value, env.replacement, Applicability(env.fix))
                form = form_of("branch", value)
        report(checker, env, node, value, env.replacement, fix, portable, form, place)
        return
    if "cuda" not in value and "nccl" not in value:
        return
    for entry in tables.literals:
        if names_no_device(checker, context, entry.replacement):
            continue
        if entry.kind == "backend" and backend_spec(value):
            if context.kind == "compare":
                return  # NPU401: a backend comparison is a trap, not a rename
            words = [(entry.name, entry.replacement)] + [(d.name, d.replacement) for d in tables.literals
                                                          if d.kind == "device" and d.name in value]
            new = _replace_words(value, words)
            fix = word_fix(checker, node, words, Applicability(entry.fix), f"Replace `{value}` with `{new}`") if entry.fix else None
            portable = backend_fix(checker, node, context, Applicability(entry.fix)) if entry.fix else None
            place = backend_place(checker, node, context) or passed_in_place(checker, entry, node, context)
            related: tuple[Related, ...] = ()
            if place is None and (callers := callers_of_default(checker, node)) is not None:
                place, related = callers  # `def launch(..., backend="nccl")` that every call gives a backend, or one not
            report(checker, entry, node, value, new, fix, portable, form_of("literal", entry.kind), place, related)
            return
        if entry.kind == "device" and DEVICE_STRING.fullmatch(value.strip()) and entry.name in value:
            new = value.replace(entry.name, entry.replacement)
            applicability = Applicability(entry.fix) if selects_device(context) else Applicability.UNSAFE
            fix = word_fix(checker, node, [(entry.name, entry.replacement)], applicability,
                           f"Replace `{value}` with `{new}`") if entry.fix else None
            portable = device_string_fix(checker, node, value, context, applicability) if entry.fix else None
            place, related = device_remark(checker, node, context)
            if place is None:
                place = passed_in_place(checker, entry, node, context)
            if place is not None and place[1] in (ONNX_PROVIDER, REGISTERED):
                fix = portable = None  # `npu` there would hand CUDA's provider, or CUDA's kernel, to the NPU host
            report(checker, entry, node, value, new, fix, portable, form_of("literal", entry.kind), place, related)
            return


def _replace_words(value: str, words: list[tuple[str, str]]) -> str:
    for old, new in words:
        value = value.replace(old, new)
    return value

