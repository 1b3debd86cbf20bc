"""Table-driven findings that the code around them shows harmless on an NPU host: `torch.cuda`
calls without `transfer_to_npu` (checked on torch 2.13 without CUDA), and imports of CUDA-only
packages with a fallback where they are missing. The lower severity and the reason, said in
the message. Where the call changes what a run does, the finding keeps its severity and the
message says what happens."""

from __future__ import annotations

import ast
import re
from pathlib import PurePath

from ..engine.checker import Checker, Reference
from ..engine.model import Severity
from ..engine.guards import NPU_WORD
from ..engine.walk import Events, last_name

# a string that names the NPU as a device or its collectives: "npu", "npu:0", "hccl"
NPU_STRING = re.compile(r"(?:npu|hccl)(?::|$)")

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
FALLBACK = (" (A fallback: `getattr(torch, device_type, torch.cuda)` takes it only where torch has no module for "
            "the device type; on an NPU host with torch_npu loaded that is `torch.npu`.)")
PER_DEVICE = " (The value of a per-device dict's `\"cuda\"` key: it is looked up only for CUDA.)"
SWITCH_RULES = frozenset({"NPU105", "NPU106"})
TESTED_BESIDE_NPU = (" (A test for CUDA in code that handles `npu` too (its imports, or this statement): on an NPU "
                     "host it is False and the code takes the path its authors gave other devices.)")
SKIP_CONDITION = (" (A test's skip condition: on an NPU host the test is skipped, as on any host without CUDA; "
                  "a test meant for the NPU needs its own condition.)")
# unittest.skipIf / skipUnless, pytest.mark.skipif, and the helpers named like them
SKIP_CALLS = frozenset({"skipIf", "skipUnless", "skipif", "skip_if", "skip_unless"})
# what tests for CUDA: in a file that handles `npu` too, the authors chose the NPU's path
CUDA_PROBES = frozenset({"torch.cuda.is_available", "torch.cuda.device_count"})

# what an environment report is called: collect_env.py (torch's), env.py (LLaMA-Factory's,
# accelerate's `accelerate env`), `print_env()`, `get_env_info()`, `collect_system_info()`
ENV_FILES = frozenset({"collect_env", "env", "env_info", "envinfo", "sys_info", "system_info"})
ENV_FUNCTION = re.compile(r"(?:collect|print|get|show|report|dump|log)_?(?:env|environment|sys|system)(?:_?info)?$")


def handles_npu(checker: Checker) -> bool:
    """Whether the code names the NPU: a top-level import (`torch_npu`, `is_torch_npu_available`),
    or the statement being run (`"npu"`, `"hccl"`, `torch.npu`, `x.npu()`). Not the rest of the
    file's text: what an edit elsewhere changes would then change this statement's findings,
    which an incremental analysis keeps; an edit among the imports re-reads them all."""
    module = checker.module
    key = ("imports-npu", id(module))
    known = checker.derived.get(key)
    if known is None or known[0] is not module:
        named = " ".join((*module.imported, *module.scope.imports, *module.scope.imports.values())).lower()
        known = checker.derived[key] = (module, NPU_WORD.search(named) is not None)
    if known[1]:
        return True
    events = checker.events
    key = ("names-npu", id(events))  # advice_matching.own_code keys its fact of the events by id alone
    known = checker.derived.get(key)
    if known is None or known[0] is not events:
        known = checker.derived[key] = (events, _names_npu(events))
    return bool(known[1])


def _names_npu(events: Events) -> bool:
    for name in events.names:
        if any("npu" in part.lower() and NPU_WORD.search(part.lower()) for part in name.attrs):
            return True
        if name.root is not None and "npu" in name.root.id.lower() and NPU_WORD.search(name.root.id.lower()):
            return True
    return any(NPU_STRING.match(string.value.lower()) for string in events.strings)


def in_skip_condition(checker: Checker, node: ast.AST) -> bool:
    """`node` is in the arguments of a test's skip condition: `@pytest.mark.skipif(not
    torch.cuda.is_available(), ...)`, `unittest.skipUnless(torch_device == "cuda", ...)`."""
    return any(last_name(call.func) in SKIP_CALLS and any(inside(node, arg) for arg in call.args)
               for call, _scope in checker.events.calls)


def inside(node: ast.AST, outer: ast.AST) -> bool:
    """`node` lies within `outer`'s source span."""
    return ((outer.lineno, outer.col_offset) <= (node.lineno, node.col_offset)  # type: ignore[attr-defined]
            and (node.end_lineno, node.end_col_offset) <= (outer.end_lineno, outer.end_col_offset))  # type: ignore[attr-defined]


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


def is_getattr_fallback(checker: Checker, node: ast.AST) -> bool:
    """`node` is the default of a `getattr(...)` in the statement being run."""
    return any(len(call.args) == 3 and call.args[2] is node and type(call.func) is ast.Name
               and call.func.id == "getattr" for call, _scope in checker.events.calls)


def under_cuda_key(checker: Checker, node: ast.AST) -> bool:
    """`node` is (in) the value of a `"cuda"` key of a dict display: `{"cuda": torch.cuda.synchronize, ...}`.
    The walk gives a dict's keys as the siblings of each key string; its value follows its key,
    before the next key (the last key's value: on its line or the next)."""
    where = (node.lineno, node.col_offset)  # type: ignore[attr-defined]
    for string in checker.events.strings:
        keys = string.context.siblings
        if string.value != "cuda" or not keys or any(k is node for k in keys):
            continue
        key = string.node
        if (key.end_lineno, key.end_col_offset) > where:
            continue
        later = [k for k in keys if k is not None and (k.lineno, k.col_offset) > (key.lineno, key.col_offset)]
        if later:
            if where < min((k.lineno, k.col_offset) for k in later):
                return True
        elif node.lineno <= key.end_lineno + 1:  # type: ignore[attr-defined]
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
    if ref.call is None and qualname == "torch.cuda" and is_getattr_fallback(checker, ref.node):
        return Severity.INFO, FALLBACK
    if in_skip_condition(checker, ref.node):
        return Severity.INFO, SKIP_CONDITION
    if qualname in CUDA_PROBES and handles_npu(checker):
        return Severity.INFO, TESTED_BESIDE_NPU
    if under_cuda_key(checker, ref.node):
        return Severity.INFO, PER_DEVICE
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


FALLBACK_IMPORT = (" (Imported under `try:` whose `except ImportError` goes on without it, or under a test that "
                   "it is installed: where it is not, as on an NPU host, the code goes on without it.)")
# `if is_apex_available():`, `elif is_bitsandbytes_available():`, `if utils.is_xformers_available():`
AVAILABILITY_TEST = re.compile(r"(?:el)?if\s+(?:\w+\.)*is_\w+_available\(\)\s*:")
# what a handler catches that a missing package raises
IMPORT_ERRORS = re.compile(r"except\s*(?::|\(?[\w.,\s]*\b(?:ImportError|ModuleNotFoundError|Exception|BaseException)\b)")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _code_lines(lines: list[str], indices: range):
    for i in indices:
        stripped = lines[i].strip()
        if stripped and not stripped.startswith("#"):
            yield i, lines[i], stripped


def import_with_fallback(checker: Checker, stmt: ast.stmt) -> bool:
    """`stmt` is in the body of a `try:` with an `except ImportError:` (or `except Exception:`,
    a bare `except:`) whose body does not raise, or of an `if is_<package>_available():`. Read
    from the lines, as Python reads the blocks: only for the imports the tables name."""
    lines, first, indent = checker.source.lines, stmt.lineno - 1, stmt.col_offset
    opening = next(((i, line) for i, line, _ in _code_lines(lines, range(first - 1, -1, -1))
                    if _indent(line) < indent), None)
    if opening is not None and AVAILABILITY_TEST.match(opening[1].strip()):
        return True
    if opening is None or opening[1].strip() != "try:":
        return False
    outer = _indent(opening[1])
    handler = None  # the indentation of the lines below the handler being read
    for _i, line, stripped in _code_lines(lines, range(stmt.end_lineno or first + 1, len(lines))):
        level = _indent(line)
        if level < outer or (level == outer and not stripped.startswith(("except", "else", "finally"))):
            return False
        if level == outer:
            handler = IMPORT_ERRORS.match(stripped) is not None
            body = stripped.partition(":")[2].partition("#")[0].strip()
            if handler and body:  # `except ImportError: pass` on one line
                return not body.startswith("raise")
        elif handler:
            return not stripped.startswith("raise")
    return False
