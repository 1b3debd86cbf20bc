"""What the statement being run shows about where its CUDA code stands, gathered in one pass
over its events the first time a finding asks, so that each finding then asks in constant or
logarithmic time: a line of 16,000 findings costs 16,000 questions, not 16,000 walks."""

from __future__ import annotations

import ast
import bisect
from dataclasses import dataclass, field

from ..engine.checker import Checker
from ..engine.backend_members import names_cuda_graph
from ..engine.guards import ENV_REPORT_NAME, name_words
from ..engine.walk import last_name
from .advice_matching import inside

# calls whose first argument is a device or its type: torch.device(...), x.to(...),
# torch.autocast(...), torch.amp.GradScaler("cuda"), torch.Generator("cuda"), torch.get_device_module("cuda")
DEVICE_CALLS = frozenset({"device", "to", "autocast", "GradScaler", "Generator", "get_device_module"})
DEVICE_KEYWORDS = frozenset({"map_location", "device_type", "output_device"})  # and any keyword naming `device`
# unittest.skipIf / skipUnless, pytest.mark.skipif, and the helpers named like them
SKIP_CALLS = frozenset({"skipIf", "skipUnless", "skipif", "skip_if", "skip_unless"})
# calls whose first argument's attribute is tested for or replaced, not run: hasattr(torch.cuda.amp, "x"),
# setattr, monkeypatch.setattr(torch.cuda, "is_available", f), mock.patch.object(torch.cuda, "x")
ATTRIBUTE_CALLS = frozenset({"hasattr", "setattr", "delattr"})
# `CUDA_VISIBLE_DEVICES=""` or `-1` hides every GPU to force the CPU: nothing to move to the NPU
CPU_ONLY = frozenset({"", "-1"})
ENV_SETTERS = frozenset({"setdefault", "putenv"})
# torch.random's manual_seed seeds every device: CUDA's, and through `_seed_custom_device`
# the privateuse1 backend's, which is the NPU once torch_npu is loaded (torch 2.13 random.py)
SEEDS_ALL = frozenset({"torch.manual_seed", "torch.random.manual_seed"})


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
    elif type(target) is ast.Constant and type(target.value) is str:  # a dict display's key
        name = target.value
    else:
        return False
    name = name.lower()
    if " " in name:  # a label (`config["cuda device name"]`), not a name that holds a device
        return False
    words = name_words(name)
    if words and (words[-1] in _FACT_WORDS or words[0] in _COUNT_WORDS):
        return False  # `job_info["device_count"]`, `device_names`, `num_devices`: facts of the devices
    return "device" in name or name in ("dev", "map_location") or name.startswith("dev_") or name.endswith("_dev")


# the last word of a name that holds a fact of the devices, not one (`device_count`, `gpu_memory`; not
# `memory_pool_device`), and the first of a count (`num_devices`)
_FACT_WORDS = frozenset({"count", "counts", "names", "info", "infos", "properties", "props", "capability", "memory",
                         "mem", "stats"})
_COUNT_WORDS = frozenset({"num", "n", "nb"})


def _position(node: ast.AST) -> tuple[int, int]:
    return node.lineno, node.col_offset  # type: ignore[attr-defined]


def _end(node: ast.AST) -> tuple[int, int]:
    return node.end_lineno, node.end_col_offset  # type: ignore[attr-defined]


@dataclass(slots=True)
class StatementFacts:
    in_device_position: set[int] = field(default_factory=set)  # ids of the nodes a device position holds
    in_skip_condition: set[int] = field(default_factory=set)  # ids of the nodes a skip condition holds
    getattr_defaults: set[int] = field(default_factory=set)  # ids of `getattr(x, name, default)`'s defaults
    attribute_owners: set[int] = field(default_factory=set)  # ids of the first arguments of ATTRIBUTE_CALLS
    parameter_defaults: set[int] = field(default_factory=set)  # ids of `def f(device="cuda")`'s defaults
    cpu_only_names: set[int] = field(default_factory=set)  # ids of env names set to "" or "-1"
    # the value windows of `"cuda"` keys of dict displays: (start, end), sorted by start; and
    # the ids of the displays' elements (in a list `["cuda", x]`, x is an element, no value)
    cuda_keys: list[tuple[tuple[int, int], tuple[int, int]]] = field(default_factory=list)
    beside_cuda_keys: set[int] = field(default_factory=set)
    seed_lines: list[int] = field(default_factory=list)  # lines of torch.manual_seed, sorted
    env_reports: list[ast.AST] = field(default_factory=list)  # functions named like environment reports
    # functions of a CUDA feature a project turns on, by their names, each with its kind: CUDA graphs
    # (`init_cuda_graph`; a class so named: engine/backend_members.opt_in_class), transformers' naive model
    # parallelism (`parallelize`, `deparallelize`; code under `if self.model_parallel:`: harmless_calls.flag_off)
    opt_in_functions: list[tuple[ast.FunctionDef | ast.AsyncFunctionDef, str]] = field(default_factory=list)
    # ids of the nodes a copy flag's value holds (`non_blocking=`, `pin_memory=`: harmless_uses.COPY_FLAGS), with the flag
    in_copy_flag: dict[int, str] = field(default_factory=dict)
    stored_keys: set[int] = field(default_factory=set)  # ids of `d[key] = ...`'s keys
    functions: list[ast.AST] = field(default_factory=list)


CUDA_GRAPHS, NAIVE_PARALLELISM = "graphs", "parallelize"


def _mark(ids: set[int], node: ast.AST) -> None:
    ids.update(id(n) for n in ast.walk(node))


def statement_facts(checker: Checker) -> StatementFacts:
    """The StatementFacts of the statement being run, gathered once."""
    events = checker.events
    key = ("statement-facts", id(events))
    known = checker.derived.get(key)
    if known is None or known[0] is not events:
        known = checker.derived[key] = (events, _gather(events))
    return known[1]  # type: ignore[return-value]


def _gather(events) -> StatementFacts:
    facts = StatementFacts()
    for call, _scope in events.calls:
        name = last_name(call.func)
        args = call.args
        if name in SKIP_CALLS:
            for arg in args:
                _mark(facts.in_skip_condition, arg)
        if args and name in DEVICE_CALLS:
            _mark(facts.in_device_position, args[0])
        for kw in call.keywords:
            if device_keyword(kw.arg):
                _mark(facts.in_device_position, kw.value)
            elif kw.arg in ("non_blocking", "pin_memory"):
                facts.in_copy_flag.update((id(n), kw.arg) for n in ast.walk(kw.value))
        if name == "getattr" and len(args) == 3 and type(call.func) is ast.Name:
            facts.getattr_defaults.add(id(args[2]))
        if args and (name in ATTRIBUTE_CALLS or (name == "object" and type(call.func) is ast.Attribute
                                                  and last_name(call.func.value) == "patch")):
            facts.attribute_owners.add(id(args[0]))
        if name in ENV_SETTERS and len(args) == 2 and type(call.func) is ast.Attribute \
                and type(args[1]) is ast.Constant and args[1].value in CPU_ONLY:
            facts.cpu_only_names.add(id(args[0]))
    for stmt, _scope in events.assigns:
        targets = stmt.targets if type(stmt) is ast.Assign else [stmt.target]
        if any(device_name(t) for t in targets):
            _mark(facts.in_device_position, stmt.value)
        facts.stored_keys.update(id(t.slice) for t in targets if type(t) is ast.Subscript)
        value = stmt.value
        if type(value) is ast.Constant and value.value in CPU_ONLY:
            facts.cpu_only_names.update(id(t.slice) for t in targets if type(t) is ast.Subscript)
    for func, _scope in events.functions:
        facts.functions.append(func)
        for default in (*func.args.defaults, *func.args.kw_defaults):
            while default is not None:  # and each value a conditional default may take (`"cuda" if ... else "mps"`)
                facts.parameter_defaults.add(id(default))
                if type(default) is ast.IfExp:
                    facts.parameter_defaults.add(id(default.body))
                default = default.orelse if type(default) is ast.IfExp else None
        lowered = func.name.lower()
        if "device" in lowered:  # `def get_device(): return "cuda"`
            for node in ast.walk(func):
                if type(node) is ast.Return and node.value is not None:
                    _mark(facts.in_device_position, node.value)
        if ENV_REPORT_NAME.search(lowered):
            facts.env_reports.append(func)
        if "cuda" in lowered and names_cuda_graph(func.name):
            facts.opt_in_functions.append((func, CUDA_GRAPHS))
        elif func.name in ("parallelize", "deparallelize"):
            facts.opt_in_functions.append((func, NAIVE_PARALLELISM))
    device_keys = []  # `run_opts = {"device": "cuda"}` places the model: (window, the keys, the key's index)
    for string in events.strings:
        keys = string.context.siblings
        if keys and (string.value == "cuda" or device_name(string.node)):
            key = string.node
            later = [_position(k) for k in keys if k is not None and _position(k) > _position(key)]
            # the last key's value: on its line or the next
            window = (_end(key), min(later) if later else (_end(key)[0] + 2, 0))
            if string.value == "cuda":
                facts.cuda_keys.append(window)
                facts.beside_cuda_keys.update(id(k) for k in keys)
            else:
                device_keys.append((window, keys, next(i for i, k in enumerate(keys) if k is key)))
    facts.cuda_keys.sort()
    for string in events.strings if device_keys else ():
        values, where = string.context.siblings, _position(string.node)
        # the value at the key's index, of as many values as there are keys, in the key's window
        if any(len(values) == len(keys) and values[i] is string.node and start <= where < end
               for (start, end), keys, i in device_keys):
            facts.in_device_position.add(id(string.node))
    for name in events.names:
        if name.root is not None and name.attrs and name.attrs[-1] == "manual_seed":
            binding = name.scope.lookup(name.root.id)
            if binding is not None and ".".join((binding, *name.attrs)) in SEEDS_ALL:
                facts.seed_lines.append(name.node.lineno)
    facts.seed_lines.sort()
    return facts


def innermost_function(facts: StatementFacts, node: ast.AST) -> ast.AST | None:
    """The innermost function (or lambda) of the statement whose span holds `node`; None at module level."""
    holding = [f for f in facts.functions if inside(node, f)]
    return max(holding, key=lambda f: f.lineno) if holding else None  # type: ignore[attr-defined]


def under_cuda_key(facts: StatementFacts, node: ast.AST) -> bool:
    """`node` is (in) the value of a `"cuda"` key of a dict display: `{"cuda": torch.cuda.synchronize}`.
    The walk gives a dict's keys as the siblings of each key string; a value follows its key,
    before the next key."""
    windows = facts.cuda_keys
    if not windows or id(node) in facts.beside_cuda_keys:
        return False
    where = _position(node)
    at = bisect.bisect_right(windows, (where, (1 << 62, 0))) - 1
    return at >= 0 and windows[at][0] <= where < windows[at][1]


def seeded_between(facts: StatementFacts, first: int, last: int) -> bool:
    lines = facts.seed_lines
    at = bisect.bisect_left(lines, first)
    return at < len(lines) and lines[at] <= last
