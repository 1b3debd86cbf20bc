"""Table-driven findings about `torch.cuda` that the code around them shows harmless on an NPU
host without `transfer_to_npu` (checked on torch 2.13 without CUDA): the lower severity and
the reason, said in the message. Where the call changes what a run does, the finding keeps
its severity and the message says what happens."""

from __future__ import annotations

import ast
import re
from pathlib import PurePath

from ..engine.checker import Checker, Reference
from ..engine.model import Severity

# torch.random's manual_seed seeds every device: CUDA's, and through `_seed_custom_device`
# the privateuse1 backend's, which is the NPU once torch_npu is loaded (torch 2.13 random.py)
SEEDS_ALL = frozenset({"torch.manual_seed", "torch.random.manual_seed"})
CUDA_SEEDS = frozenset({"torch.cuda.manual_seed", "torch.cuda.manual_seed_all"})
SEEDED_BESIDE = (" (`torch.manual_seed` beside it seeds every device, the NPU too; without CUDA this call is "
                 "queued and never runs.)")
SEED_ONLY = (" (Without CUDA this call is queued and never runs: on an NPU host the NPU's generator stays "
             "unseeded unless `torch.manual_seed` or `torch.npu.manual_seed_all` is called.)")
EMPTY_CACHE = (" (Without CUDA it does nothing (CUDA is never initialised); the NPU's cached memory is freed by "
               "`torch.npu.empty_cache()` where that matters.)")
READ_SWITCH = " (Read, not set: it reports CUDA's setting, which the NPU ignores; reading it changes nothing.)"
TYPE_ONLY = (" (Only a type here, in a hint or an isinstance() test: naming it runs nothing, and an NPU object "
             "is not one.)")
ENV_REPORT = (" (In an environment report: it describes the host, and on an NPU host reports no GPU; add the "
              "NPU's facts beside it if the report should show them.)")
SWITCH_RULES = frozenset({"NPU105", "NPU106"})

# what an environment report is called: collect_env.py (torch's), env.py (LLaMA-Factory's,
# accelerate's `accelerate env`), `print_env()`, `get_env_info()`, `collect_system_info()`
ENV_FILES = frozenset({"collect_env", "env", "env_info", "envinfo", "sys_info", "system_info"})
ENV_FUNCTION = re.compile(r"(?:collect|print|get|show|report|dump|log)_?(?:env|environment|sys|system)(?:_?info)?$")


def innermost_function(checker: Checker, node: ast.AST) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The innermost function of the statement being run that holds `node`."""
    found = None
    line = node.lineno  # type: ignore[attr-defined]
    for func, _scope in checker.events.functions:
        if func.lineno <= line <= func.end_lineno and (found is None or func.lineno >= found.lineno):
            found = func
    return found


def seeds_all_beside(checker: Checker, node: ast.AST) -> bool:
    """`torch.manual_seed(...)` in the same function (or statement) as `node`."""
    func = innermost_function(checker, node)
    first, last = (func.lineno, func.end_lineno) if func is not None else (node.lineno, node.end_lineno)  # type: ignore[attr-defined]
    for name in checker.events.names:
        root = name.root
        if root is None or not first <= name.node.lineno <= last or not name.attrs or name.attrs[-1] != "manual_seed":
            continue
        binding = name.scope.lookup(root.id)
        if binding is not None and ".".join((binding, *name.attrs)) in SEEDS_ALL:
            return True
    return False


def in_environment_report(checker: Checker, node: ast.AST) -> bool:
    if checker.path is not None and PurePath(checker.path).stem.lower() in ENV_FILES:
        return True
    func = innermost_function(checker, node)
    return func is not None and ENV_FUNCTION.search(func.name.lower()) is not None


def reference_place(checker: Checker, rule: str, ref: Reference) -> tuple[Severity, str] | None:
    """The lower severity and the reason for a `torch.cuda` reference the code shows harmless;
    for a CUDA-only seed without a seed of every device, its severity and what happens; else None."""
    qualname = ref.qualname
    if not qualname.startswith(("torch.cuda", "torch.backends", "torch.version")):
        return None
    if ref.type_only:
        return Severity.INFO, TYPE_ONLY
    if qualname in CUDA_SEEDS:
        if seeds_all_beside(checker, ref.node):
            return Severity.INFO, SEEDED_BESIDE
        return checker.rules[rule].severity, SEED_ONLY
    if qualname == "torch.cuda.empty_cache":
        return Severity.INFO, EMPTY_CACHE
    if rule in SWITCH_RULES and ref.call is None and type(ref.node) is ast.Attribute \
            and type(ref.node.ctx) is ast.Load:
        return Severity.INFO, READ_SWITCH
    if in_environment_report(checker, ref.node):
        return Severity.INFO, ENV_REPORT
    return None


# `CUDA_VISIBLE_DEVICES=""` or `-1` hides every GPU to force the CPU: nothing to move to the NPU
CPU_ONLY = frozenset({"", "-1"})
ENV_SETTERS = frozenset({"setdefault", "putenv"})


def hides_every_gpu(checker: Checker, node: ast.AST, name: str) -> bool:
    """`os.environ["CUDA_VISIBLE_DEVICES"] = "-1"`, `os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")`."""
    if name != "CUDA_VISIBLE_DEVICES":
        return False
    for stmt, _scope in checker.events.assigns:
        value = stmt.value
        if type(value) is ast.Constant and value.value in CPU_ONLY and any(
                type(t) is ast.Subscript and t.slice is node for t in
                (stmt.targets if type(stmt) is ast.Assign else [stmt.target])):
            return True
    for call, _scope in checker.events.calls:
        if len(call.args) == 2 and call.args[0] is node and type(call.func) is ast.Attribute \
                and call.func.attr in ENV_SETTERS:
            value = call.args[1]
            return type(value) is ast.Constant and value.value in CPU_ONLY
    return False
