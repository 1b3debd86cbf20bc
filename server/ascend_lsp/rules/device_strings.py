"""Where a `"cuda"` string stands (NPU101): a device position, a default that a caller may
override, or no device at all (a mode or timer name, a key, a test marker's argument, a
setting compared with it). Only a device position is a warning: `"npu"` put anywhere else may
raise ("unknown mode") or change nothing."""

from __future__ import annotations

import ast
import os

from ..call_sites import counted
from ..custom_ops import KERNEL_REGISTRATIONS
from ..engine.checker import Checker
from ..engine.model import Range, Related, Severity
from ..engine.guards import name_words, parameter_defaults
from ..engine.walk import StringContext, last_name
from .advice_matching import inside
from .cuda_test_paths import failed_cuda_test
from .harmless_calls import (ONNX_PROVIDER, SKIP_CONDITION, TESTED_BESIDE_NPU, opt_in_function_place, handles_npu,
                             onnx_provider_choice, reports_only, skip_test)
from .harmless_uses import COPY_FLAG, COPY_FLAGS
from .statement_facts import DEVICE_CALLS, device_keyword, statement_facts

# `getattr(args, "device", "cuda")`, `config.get("device", "cuda")`, `os.getenv("DEVICE", "cuda")`: the fallback
FALLBACK_POSITION = {"getattr": 2, "get": 1, "getenv": 1, "pop": 1, "setdefault": 1}

DEFAULT_BESIDE_NPU = " (A default: the code around it handles `npu` too, so a run on the NPU passes its own device.)"
DEFAULT = (" (A default, used where no device is passed: on an NPU host pass `npu` or change the default; a caller "
           "that passes its device is unaffected.)")
NOT_A_DEVICE = (" (Here it may be no device: no `torch.device`, `.to`, `device=`, `map_location=`, `device` "
                "variable or function named for a device takes it, and as a mode, key or marker name it stays "
                "`cuda`; `npu` there may raise.)")
COMMAND_LINE_DEFAULT = (" (The default of the command line's device option: a run whose command line names no "
                        "device gets CUDA. On an NPU host make the default `npu`, or pass it in every command.)")
DEVICE_CHOICE = " (One of the choices of a device option: the option refuses `npu` until it is among them.)"
OMITTED = (" (A default the project uses: a call of `{name}` ({where}) passes no `{parameter}`, so it gets `{value}`: on "
           "an NPU host pass one there, or change the default.)")
PASSED = " (A default no call in the project uses: every call of `{name}` passes `{parameter}`: {calls}.)"
REGISTERED = (" (The device an operator's implementation is registered for: CUDA's kernel, which `npu` here would "
              "not make run on the NPU. The NPU needs an implementation of its own registered for `npu`; NPU308 reports "
              "each call of the operator that has none.)")
COMPARED = (" (Compared with a setting, not with a device's type: on an NPU host the test is False and the other "
            "branch runs.)")


def at_device_argument(context: StringContext) -> bool:
    """Passed where a device goes: `torch.device("cuda")`, `torch.device(type="cuda")`, `.to("cuda")`,
    `device="cuda"`."""
    call = context.call
    if context.kind != "arg" or call is None:
        return False
    if context.keyword is not None:  # `device=`, and `torch.device(type="cuda", index=rank)`
        return device_keyword(context.keyword) or (context.keyword == "type" and last_name(call.func) == "device")
    return context.position == 0 and last_name(call.func) in DEVICE_CALLS


def kernel_registration(context: StringContext) -> bool:
    """The device of a kernel registration (custom_ops.KERNEL_REGISTRATIONS): `device_types="cuda"`,
    `register_kernel(op, "cuda")`."""
    call = context.call
    if context.kind != "arg" or call is None or (name := last_name(call.func)) not in KERNEL_REGISTRATIONS:
        return False
    return context.keyword in ("device_types", "types") or context.keyword is None and context.position == KERNEL_REGISTRATIONS[name]


def to_device_function(context: StringContext) -> bool:
    """Passed to a function named for moving to or setting a device (`to_device(batch, "cuda" if
    ngpu else "cpu")`, `move_to_device(x, "cuda")`): a device, though what the project's function
    does with it is its own (so its rename still needs review)."""
    call = context.call
    return context.kind == "arg" and call is not None and context.keyword is None \
        and "device" in name_words(last_name(call.func))[1:]


def device_choice(context: StringContext) -> bool:
    """One of the `choices` of an option named for a device (`add_argument("--device", choices=["cpu",
    "cuda"])`): what the option accepts, so without `npu` beside it a run on the NPU is refused."""
    return context.keyword == "choices" and context.call is not None and _device_option(context.call)


def _device_option(call: ast.Call) -> bool:
    """The call's option names (its strings, `dest=`) name a device: `add_argument("--device", ...)`."""
    names = [arg.value for arg in call.args if type(arg) is ast.Constant and type(arg.value) is str]
    names += [kw.value.value for kw in call.keywords
              if kw.arg == "dest" and type(kw.value) is ast.Constant and type(kw.value.value) is str]
    return any("device" in name_words(name) for name in names)


def command_line_default(checker: Checker, node: ast.AST, context: StringContext) -> bool:
    """The default of a command line's device option: `add_argument("--device", default="cuda")`, or
    of a parameter named for a device of a function a command-line framework runs as a command
    (`@app.command()`, `@click.command()`: typer, click): what a run gets where its command line
    names no device."""
    call = context.call
    if context.kind == "arg" and call is not None:
        return context.keyword == "default" and last_name(call.func) == "add_argument" and _device_option(call)
    if context.kind != "value":
        return False
    for func, _scope in checker.events.functions:
        if any(last_name(d) == "command" for d in func.decorator_list):
            for arg, default in parameter_defaults(func.args):
                if default is not None and inside(node, default) and "device" in name_words(arg.arg):
                    return True
    return False


def bound_device_argument(checker: Checker, context: StringContext) -> bool:
    """The first argument of a call that takes a device first, imported under another name
    (`_amp_autocast("cuda")` after `from torch.amp import autocast as _amp_autocast`), or the
    first that `functools.partial` binds to one (`autocast = partial(torch.amp.autocast, "cuda")`)."""
    call = context.call
    if context.kind != "arg" or call is None or context.keyword is not None:
        return False
    if context.position == 1 and last_name(call.func) == "partial":
        bound = call.args[0]
    elif context.position == 0 and type(call.func) is ast.Name:
        bound = call.func
    else:
        return False
    if last_name(bound) in DEVICE_CALLS:
        return True
    scope = next((s for c, s in checker.events.calls if c is call), None)
    qualname = checker.qualname(bound, scope) if scope is not None else None
    return qualname is not None and qualname.rpartition(".")[2] in DEVICE_CALLS


def device_prefix_test(call: ast.Call) -> bool:
    """`device.type.startswith("cuda")`, `str(x.device).startswith("cuda")`: a device compared by its
    beginning, as `x.device.type == "cuda"` is whole."""
    func = call.func
    if type(func) is not ast.Attribute or func.attr != "startswith":
        return False
    receiver = func.value
    if type(receiver) is ast.Call and last_name(receiver.func) == "str" and len(receiver.args) == 1:
        receiver = receiver.args[0]
    return last_name(receiver) in ("type", "device")


def compared_with_device(context: StringContext) -> bool:
    """`x.device.type == "cuda"`, `args.device == "cuda"`, `device == "cuda"`, `device.type.startswith("cuda")`."""
    if context.kind == "arg" and context.call is not None:
        return device_prefix_test(context.call)
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
    return context.kind == "value" and id(node) in statement_facts(checker).parameter_defaults


def device_place(checker: Checker, node: ast.AST, context: StringContext) -> tuple[Severity | None, str] | None:
    """None for a string in a device position (the rule's warning); else the lower severity
    and the reason, for the message (no severity: the rule's, with the reason it stays)."""
    if kernel_registration(context):
        return Severity.INFO, REGISTERED
    if (graphs := opt_in_function_place(checker, node)) is not None:
        return graphs
    if at_device_argument(context) or bound_device_argument(checker, context) or to_device_function(context):
        return None
    if device_choice(context):
        return None, DEVICE_CHOICE
    facts = statement_facts(checker)
    if id(node) in facts.in_skip_condition or skip_test(checker, node):
        return Severity.INFO, SKIP_CONDITION
    if (flag := facts.in_copy_flag.get(id(node))) is not None:
        return Severity.INFO, COPY_FLAG.format(flag=flag, loses=COPY_FLAGS[flag])
    if compared_with_device(context):
        if (reason := reports_only(checker, node)) is not None:
            return Severity.INFO, reason
        if onnx_provider_choice(checker, node):
            return Severity.INFO, ONNX_PROVIDER
        if not handles_npu(checker):
            return None
        failed = failed_cuda_test(checker, node)
        return (None, failed) if failed else (Severity.INFO, TESTED_BESIDE_NPU)
    if is_default(checker, node, context):
        if handles_npu(checker):
            return Severity.HINT, DEFAULT_BESIDE_NPU
        return (None, COMMAND_LINE_DEFAULT) if command_line_default(checker, node, context) else (Severity.INFO, DEFAULT)
    if context.kind == "compare":
        return Severity.INFO, COMPARED
    # a value that reaches a device position in its statement: assigned to a device variable
    # (`device = "cuda" if ok else "cpu"`), inside a device argument (`torch.device("cuda:{}".format(i))`),
    # or returned by a function that names a device (`def get_device(): return "cuda"`)
    if context.kind == "value" and id(node) in facts.in_device_position:
        return None
    return Severity.INFO, NOT_A_DEVICE


def device_remark(checker: Checker, node: ast.AST,
                  context: StringContext) -> tuple[tuple[Severity | None, str] | None, tuple[Related, ...]]:
    """device_place's verdict and no related place; or, for a parameter's default (a
    warning in `torch.device("cuda")`, else a plain default's info) that every call in the
    project passes, info with those calls."""
    place = device_place(checker, node, context)
    if place is None or place[0] is None or place[1] == DEFAULT:
        found = callers_of_default(checker, node)
        if found is not None:
            return found
    return place, ()


def callers_of_default(checker: Checker,
                       node: ast.AST) -> tuple[tuple[Severity | None, str], tuple[Related, ...]] | None:
    """For a string in the default of a parameter (call_sites.py: a module's function, or a
    module class's `__init__`): info and the calls, where every call in the project passes it;
    the rule's severity and the first call that passes nothing, where one does (that call gets
    CUDA); None otherwise."""
    project = checker.project
    if project is None or checker.path is None:
        return None
    own = os.path.relpath(checker.path, project.root)
    for func, _scope in checker.events.functions:
        for arg, default in parameter_defaults(func.args):
            if default is None or not inside(node, default):
                continue
            passed = project.calls.passed(checker.path, func.name, arg.arg, func.lineno - 1)
            if passed is None:
                omitted = project.calls.omitted(checker.path, func.name, arg.arg, func.lineno - 1)
                if omitted is None:
                    return None
                name, (path, line) = omitted
                where = "this file" if path == own else f"{path}:{line + 1}"
                omitting = Related(Range(line, 0, line, 0), f"calls `{name}` without `{arg.arg}`",
                                   "" if path == own else os.path.join(project.root, path))
                value = node.value if isinstance(node, ast.Constant) else "cuda"
                return (None, OMITTED.format(name=name, where=where, parameter=arg.arg, value=value)), (omitting,)
            name, calls = passed
            related = tuple(Related(Range(line, 0, line, 0), f"passes `{arg.arg}`",
                                    "" if path == own else os.path.join(project.root, path)) for path, line in calls)
            return (Severity.INFO, PASSED.format(name=name, calls=counted(calls, own), parameter=arg.arg)), related
    return None
