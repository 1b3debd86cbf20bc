"""Where a `"cuda"` string stands (NPU101): a device position, a default that a caller may
override, or no device at all (a mode or timer name, a key, a test marker's argument, a
setting compared with it). Only a device position is a warning: `"npu"` put anywhere else may
raise ("unknown mode") or change nothing."""

from __future__ import annotations

import ast

from ..engine.checker import Checker
from ..engine.model import Severity
from ..engine.walk import StringContext, last_name
from .harmless_calls import SKIP_CONDITION, TESTED_BESIDE_NPU, handles_npu, in_skip_condition, inside

# calls whose first argument is a device or its type: torch.device(...), x.to(...),
# torch.autocast(...), torch.amp.GradScaler("cuda"), torch.Generator("cuda"), torch.get_device_module("cuda")
DEVICE_CALLS = frozenset({"device", "to", "autocast", "GradScaler", "Generator", "get_device_module"})
DEVICE_KEYWORDS = frozenset({"map_location", "device_type", "output_device"})  # and any keyword naming `device`
# `getattr(args, "device", "cuda")`, `config.get("device", "cuda")`, `os.getenv("DEVICE", "cuda")`: the fallback
FALLBACK_POSITION = {"getattr": 2, "get": 1, "getenv": 1, "pop": 1, "setdefault": 1}

DEFAULT_BESIDE_NPU = " (A default: the code around it handles `npu` too, so a run on the NPU passes its own device.)"
DEFAULT = (" (A default, used where no device is passed: on an NPU host pass `npu` or change the default; a caller "
           "that passes its device is unaffected.)")
NOT_A_DEVICE = (" (Here it may be no device: no `torch.device`, `.to`, `device=`, `map_location=` or `device` "
                "variable takes it, and as a mode, key or marker name it stays `cuda`; `npu` there may raise.)")
COMPARED = (" (Compared with a setting, not with a device's type: on an NPU host the test is False and the other "
            "branch runs.)")


def device_keyword(name: str | None) -> bool:
    return name is not None and ("device" in name or name in DEVICE_KEYWORDS)


def device_name(target: ast.expr) -> bool:
    """A variable, attribute or key that holds a device: `device`, `self.device`, `cfg["device"]`, `dev`."""
    if isinstance(target, ast.Name):
        name = target.id
    elif isinstance(target, ast.Attribute):
        name = target.attr
    elif isinstance(target, ast.Subscript) and type(target.slice) is ast.Constant and type(target.slice.value) is str:
        name = target.slice.value
    else:
        return False
    name = name.lower()
    return "device" in name or name in ("dev", "map_location") or name.startswith("dev_") or name.endswith("_dev")


def at_device_argument(context: StringContext) -> bool:
    """Passed where a device goes: `torch.device("cuda")`, `.to("cuda")`, `device="cuda"`."""
    call = context.call
    if context.kind != "arg" or call is None:
        return False
    if context.keyword is not None:
        return device_keyword(context.keyword)
    return context.position == 0 and last_name(call.func) in DEVICE_CALLS


def compared_with_device(context: StringContext) -> bool:
    """`x.device.type == "cuda"`, `args.device == "cuda"`, `device == "cuda"`."""
    if context.kind != "compare" or type(context.node) is not ast.Compare:
        return False
    operands = (context.node.left, *context.node.comparators)
    return any(type(o) is not ast.Constant and (last_name(o) == "type" or "device" in last_name(o).lower())
               for o in operands)


def is_default(checker: Checker, node: ast.AST, context: StringContext) -> bool:
    """A fallback or default: `add_argument(..., default="cuda")`, `getattr(args, "device",
    "cuda")`, `.get("device", "cuda")`, `def f(device="cuda")`."""
    call = context.call
    if context.kind == "arg" and call is not None:
        if context.keyword == "default":
            return True
        return context.keyword is None and FALLBACK_POSITION.get(last_name(call.func)) == context.position
    if context.kind == "value":
        for func, _scope in checker.events.functions:
            args = func.args
            if any(default is node for default in (*args.defaults, *args.kw_defaults)):
                return True
    return False


def flows_to_device(checker: Checker, node: ast.AST) -> bool:
    """A value that reaches a device position in its statement: assigned to a device variable
    (`device = "cuda" if ok else "cpu"`), inside a device argument (`torch.device("cuda:{}".format(i))`),
    or returned by a function that names a device (`def get_device(): return "cuda"`)."""
    events = checker.events
    for stmt, _scope in events.assigns:
        targets = stmt.targets if type(stmt) is ast.Assign else [stmt.target]
        if any(device_name(t) for t in targets) and inside(node, stmt.value):
            return True
    for call, _scope in events.calls:
        if not inside(node, call):
            continue
        if call.args and last_name(call.func) in DEVICE_CALLS and inside(node, call.args[0]):
            return True
        if any(device_keyword(kw.arg) and inside(node, kw.value) for kw in call.keywords):
            return True
    for func, _scope in events.functions:
        if "device" in func.name.lower() and inside(node, func):
            return any(type(s) is ast.Return and s.value is not None and inside(node, s.value)
                       for s in ast.walk(func))
    return False


def device_place(checker: Checker, node: ast.AST, context: StringContext) -> tuple[Severity, str] | None:
    """None for a string in a device position (the rule's warning); else the lower severity
    and the reason, for the message."""
    if at_device_argument(context):
        return None
    if in_skip_condition(checker, node):
        return Severity.INFO, SKIP_CONDITION
    if compared_with_device(context):
        return (Severity.INFO, TESTED_BESIDE_NPU) if handles_npu(checker) else None
    if is_default(checker, node, context):
        return (Severity.HINT, DEFAULT_BESIDE_NPU) if handles_npu(checker) else (Severity.INFO, DEFAULT)
    if context.kind == "compare":
        return Severity.INFO, COMPARED
    if context.kind == "value" and flows_to_device(checker, node):
        return None
    return Severity.INFO, NOT_A_DEVICE
