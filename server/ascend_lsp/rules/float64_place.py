"""Where a float64 tensor of NPU405 lives. On the CPU float64 is exact and the NPU never sees
it (a list made a tensor, a data pipeline, a state dict converted); only on the device does the
NPU compute it in float32. Read from the call that makes or casts it and from the function
around it (or the statement, at module level): whether anything there places a tensor on a
device at all. A cast of a tensor made elsewhere (`x.to(torch.float64)` of an argument) may be of
one on the device, as in a model's code that never names a device: only in CPU-side code (a test,
data loading, a checkpoint's conversion) does a function without a device make it info."""

from __future__ import annotations

import ast

import re
from pathlib import PurePath

from ..engine.checker import Checker
from ..engine.model import Severity
from ..engine.walk import last_name
from .advice_matching import inside
from .dtype_tests import compared_at
from .statement_facts import statement_facts

# torch's functions that make a tensor on the default device (the CPU) unless given `device=`
FACTORIES = frozenset({
    "tensor", "as_tensor", "asarray", "from_numpy", "zeros", "ones", "empty", "full", "arange", "range", "linspace",
    "logspace", "eye", "rand", "randn", "randint", "randperm", "normal", "tril_indices", "triu_indices",
})
# those of them whose first argument is the tensor's data, not its shape
VALUE_FACTORIES = frozenset({"tensor", "as_tensor", "asarray", "scalar_tensor"})
CASTS = frozenset({"to", "type", "double"})
MOVES = frozenset({"cuda", "npu", "xpu"})
# what hands a tensor to a module, which carries it to the device with its own `.to(device)`
MODULE_STATE = frozenset({"register_buffer", "register_parameter", "Parameter", "add_state"})
# what needs its tensors on the device: the collectives of torch.distributed
COLLECTIVES = frozenset({
    "all_reduce", "reduce", "all_gather", "all_gather_into_tensor", "reduce_scatter", "reduce_scatter_tensor",
    "broadcast", "all_to_all", "all_to_all_single", "gather", "scatter",
})
DTYPE_NAMES = frozenset({"float64", "double", "float32", "float", "float16", "half", "bfloat16", "int64", "long",
                         "int32", "int", "bool", "uint8", "int8", "dtype"})

# the dtypes a list of accepted dtypes holds, and the words that name a check accepting them
COMPLEX_DTYPES = frozenset({"complex32", "complex64", "complex128", "chalf", "cfloat", "cdouble"})
TORCH_DTYPES = DTYPE_NAMES | COMPLEX_DTYPES | {"float8_e4m3fn", "float8_e5m2", "int16", "short", "uint16", "uint32",
                                              "uint64"}
ACCEPTING = re.compile(r"accept|allow|valid|support|check|expect")
# a keyword given a list or tuple of names on one line: `accepted_dtypes=[float16, float32, float64]`
LISTED = re.compile(r"\b(\w+)\s*=\s*[\[(]\s*([\w.]+(?:\s*,\s*[\w.]+)*)\s*,?\s*[\])]")

# CPU-side code, by its file (tests; data loading) or its function (a checkpoint's or input's conversion)
TEST_FILE = re.compile(r"^(?:test_.*|.*_test|conftest)$")
DATA_NAMES = frozenset({"data", "dataio", "dataset", "datasets", "dataloader", "dataloaders", "transforms",
                        "collate"})
CONVERSION = re.compile(r"convert|state_dict|checkpoint|filter_fn|collate|to_tensor|to_double|preprocess")

MADE_ON_CPU = (" (Made on the CPU: `{name}` is given no `device=` and nothing here moves it; float64 is exact "
               "there, and the NPU never sees it.)")
ACCEPTED = (" (One of the dtypes a check accepts (`{name}`): it is compared with the data's dtype, and no float64 "
            "tensor is made here.)")
EXACT_COUNT = (" (It holds a tensor's size or dimension count (`{value}`), an integer that float32 holds exactly "
               "up to 2**24: on the NPU the tensor has the same value.)")
NO_DEVICE = (" (Nothing in {where} places a tensor on a device (no `device=`, `.to(device)`, `.cuda()`, "
             "`.device` or collective){kind}: its float64 tensors stay on the CPU, where float64 is exact.)")
IMPORTED_FOR_CHECKS = (" (Imported to be compared with: every use of `{name}` in the file tests a dtype against it "
                       "(`x.dtype in (...)`) or lists it among the dtypes a check accepts (`accepted_dtypes=[...]`), "
                       "and no tensor of it is made.)")
KEPT = " (Chosen only where the data already is float64: it makes no float64 of its own.)"
ON_CPU = " (Of a tensor on the CPU: {how}; float64 is exact there, and the NPU never sees it.)"


def float64_place(checker: Checker, node: ast.expr) -> tuple[Severity, str] | None:
    """Info and the reason where the code shows the float64 tensor `node` makes or casts to
    (`torch.float64`, `torch.double`, the attribute of `.double()`) stays on the CPU; None where
    a tensor may be on the device."""
    calls = [call for call, _scope in checker.events.calls]
    accepting = _accepting_call(calls, node)
    if accepting is not None:
        return Severity.INFO, ACCEPTED.format(name=accepting)
    holder = _holding_call(calls, node)
    if holder is not None and last_name(holder.func) in VALUE_FACTORIES and holder.args and _size_of(holder.args[0]):
        return Severity.INFO, EXACT_COUNT.format(value=ast.unparse(holder.args[0]))
    if holder is not None:
        made = holder if last_name(holder.func) in FACTORIES else _receiver(holder)
        if made is not None and _to_module(calls, made):
            return None
        if made is not None and _made_on_cpu(made) and not _moved(calls, made):
            return Severity.INFO, MADE_ON_CPU.format(name=last_name(made.func))
    if holder is not None and (how := _on_cpu(checker, calls, holder)):
        return Severity.INFO, ON_CPU.format(how=how)
    if _kept_dtype(checker, node):
        return Severity.INFO, KEPT
    function = _holding_function(checker, node)
    if _function_places(checker, function) if function is not None else _places_on_device(calls, None):
        return None
    kind = ""
    if holder is not None and last_name(holder.func) not in FACTORIES:  # a cast of a tensor made elsewhere
        kind = _cpu_side(checker, function)
        if not kind:
            return None
    where = f"`{function.name}`" if function is not None else "this statement"
    return Severity.INFO, NO_DEVICE.format(where=where, kind=kind)


def _accepting_call(calls: list[ast.Call], node: ast.expr) -> str | None:
    """The keyword (or function) name of a check that `node` is one of the accepted dtypes of:
    an element of a list, tuple or set of dtypes alone given to a call whose function or keyword
    is named for accepting (`_validate_input_dtype(x, accepted_dtypes=[torch.float16, ...,
    torch.float64])`, `check_dtype(x, (torch.float32, torch.float64))`)."""
    for call in calls:
        function = last_name(call.func)
        for name, value in (*((function, arg) for arg in call.args), *((kw.arg, kw.value) for kw in call.keywords)):
            if isinstance(value, (ast.List, ast.Tuple, ast.Set)) and any(e is node for e in value.elts) \
                    and all(last_name(e) in TORCH_DTYPES for e in value.elts) \
                    and ACCEPTING.search(f"{function} {name or ''}".lower()):
                return name or function
    return None


def _size_of(value: ast.expr) -> bool:
    """A tensor's size or dimension count: `x.shape[i]`, `x.size(i)`, `x.ndim`, `x.dim()`."""
    if type(value) is ast.Subscript:
        return last_name(value.value) == "shape"
    if type(value) is ast.Call:
        return type(value.func) is ast.Attribute and value.func.attr in ("size", "dim") and len(value.args) <= 1
    return type(value) is ast.Attribute and value.attr == "ndim"


def imported_for_checks(checker: Checker, stmt: ast.ImportFrom, alias: ast.alias) -> tuple[Severity, str] | None:
    """Info and the reason for `from torch import float64` where every other use of the name in
    the file only compares a dtype with it: a dtype test (`x.dtype in (float32, float64)`) or a
    list of the dtypes a check accepts (`accepted_dtypes=[float16, float32, float64]`); a mention in
    a comment or a quoted word (a docstring's ``float64``) is no use. Read from the whole text (a
    text fact: a use added anywhere changes it)."""
    if alias.name not in TORCH_DTYPES:
        return None
    name = alias.asname or alias.name
    compared, others = checker.text_fact(f"dtype-name-uses:{name}", lambda checker: _uses_of(checker, name))
    if not compared or any(not stmt.lineno <= line <= (stmt.end_lineno or stmt.lineno) for line in others):
        return None
    return Severity.INFO, IMPORTED_FOR_CHECKS.format(name=name)


def _uses_of(checker: Checker, name: str) -> tuple[int, tuple[int, ...]]:
    """How many uses of `name` as a word only compare a dtype with it, and the 1-based lines of
    the others (its import's among them)."""
    source = checker.source
    text = source.text
    listed = [found.span(2) for found in LISTED.finditer(text) if ACCEPTING.search(found.group(1).lower())
              and all(item.strip().rpartition(".")[2] in TORCH_DTYPES for item in found.group(2).split(","))]
    compared, others = 0, []
    for found in re.finditer(rf"(?<![\w.`'\"]){re.escape(name)}\b(?![`'\"])", text):
        line, col = source.position(found.start())
        if "#" in source.line(line)[:col]:
            continue  # in a comment
        if any(a <= found.start() < b for a, b in listed) or compared_at(source, line, col):
            compared += 1
        else:
            others.append(line + 1)
    return compared, tuple(others)


def _cpu_side(checker: Checker, function: ast.FunctionDef | ast.AsyncFunctionDef | None) -> str:
    """`, a test` (`, data loading`, `, a conversion`) where the code is CPU-side; else ""."""
    path = PurePath(checker.path or "")
    if TEST_FILE.match(path.stem):
        return ", a test"
    if path.stem in DATA_NAMES or path.parent.name in DATA_NAMES:
        return ", data loading"
    if function is not None and CONVERSION.search(function.name.lower()):
        return ", a conversion"
    return ""


def _holding_call(calls: list[ast.Call], node: ast.expr) -> ast.Call | None:
    """The call that takes `node` as its dtype (`zeros(3, dtype=torch.float64)`, `x.to(torch.float64)`),
    or the `.double()` call whose attribute it is."""
    for call in calls:
        if call.func is node:
            return call
        if any(kw.value is node for kw in call.keywords if kw.arg == "dtype"):
            return call
        if last_name(call.func) in CASTS and any(arg is node for arg in call.args):
            return call
    return None


def _receiver(call: ast.Call) -> ast.Call | None:
    """What a cast (`.to`, `.type`, `.double`) is called on, where that is itself a call."""
    func = call.func
    if type(func) is ast.Attribute and last_name(func) in CASTS and type(func.value) is ast.Call:
        return func.value
    return None


def _on_cpu(checker: Checker, calls: list[ast.Call], cast: ast.Call) -> str:
    """How a cast (`.to`, `.type`, `.double`) shows its tensor is on the CPU: `.cpu()` or `.to()` the CPU
    in the chain it is called on (`x.detach().cpu().to(torch.float64)`, `x.to(host).double()` where the
    function sets `host = torch.device("cpu")`), or `.numpy()` called on its result
    (`img.to(torch.double).numpy()`); "" where neither."""
    func = cast.func
    if type(func) is not ast.Attribute or func.attr not in CASTS:
        return ""
    receiver = func.value
    while type(receiver) is ast.Call and type(receiver.func) is ast.Attribute:
        if receiver.func.attr == "cpu" and not receiver.args:
            return "`.cpu()` comes before the cast"
        if receiver.func.attr == "to" and receiver.args and _cpu_device(checker, receiver.args[0]):
            return f"`.to({ast.unparse(receiver.args[0])})` comes before the cast"
        receiver = receiver.func.value
    if any(type(call.func) is ast.Attribute and call.func.attr == "numpy" and call.func.value is cast for call in calls):
        return "`.numpy()` reads the result, which only a CPU tensor allows"
    return ""


def _cpu_device(checker: Checker, value: ast.expr) -> bool:
    """`"cpu"`, `torch.device("cpu")`, or a name the function around it gives only such a value."""
    if _cpu(value):
        return True
    function = _holding_function(checker, value) if type(value) is ast.Name else None
    if function is None:
        return False
    given = [node.value for node in ast.walk(function) if type(node) is ast.Assign
             and any(type(target) is ast.Name and target.id == value.id for target in node.targets)]  # type: ignore[attr-defined]
    return bool(given) and all(_cpu(each) for each in given)


def _made_on_cpu(call: ast.Call) -> bool:
    """A factory, or an object constructed (`Model(...)`, a module made on the CPU), given no
    device but the CPU's."""
    name = last_name(call.func)
    if name not in FACTORIES and not name[:1].isupper():
        return False
    device = next((kw.value for kw in call.keywords if kw.arg == "device"), None)
    return device is None or _cpu(device)


def _cpu(value: ast.expr) -> bool:
    """`"cpu"` or `torch.device("cpu")`."""
    if type(value) is ast.Call and last_name(value.func) == "device" and value.args:
        value = value.args[0]
    return type(value) is ast.Constant and value.value == "cpu"


def _moved(calls: list[ast.Call], made: ast.Call) -> bool:
    """Whether the statement moves `made`'s result to a device: `made.to(device)`, `made.cuda()`."""
    for call in calls:
        func = call.func
        if type(func) is not ast.Attribute or not inside(made, func.value):
            continue
        if func.attr in MOVES or (func.attr == "to" and _to_device(call)):
            return True
    return False


def _to_module(calls: list[ast.Call], made: ast.Call) -> bool:
    """Whether the statement hands `made`'s result to a module (`register_buffer`, `nn.Parameter`, a
    metric's `add_state`), whose `.to(device)` takes it to the device, wherever that is called."""
    return any(last_name(call.func) in MODULE_STATE and any(
        inside(made, value) for value in (*call.args, *(kw.value for kw in call.keywords))) for call in calls)


def _to_device(call: ast.Call) -> bool:
    """`.to(x)` with a device: a first argument that is no dtype, or `device=`."""
    if any(kw.arg == "device" and not _cpu(kw.value) for kw in call.keywords):
        return True
    if not call.args:
        return False
    first = call.args[0]
    return last_name(first) not in DTYPE_NAMES and not _cpu(first)


def _kept_dtype(checker: Checker, node: ast.expr) -> bool:
    """`torch.float64 if x.dtype == torch.float64 else torch.float32`: the float64 is the arm a test
    of the data's own dtype chose."""
    function = _holding_function(checker, node)
    roots = [function] if function is not None else [stmt for stmt, _scope in checker.events.assigns]
    for root in roots:
        for choice in ast.walk(root):
            if type(choice) is ast.IfExp and choice.body is node and type(choice.test) is ast.Compare \
                    and any(last_name(part) == "dtype" for part in (choice.test.left, *choice.test.comparators)):
                return True
    return False


def _holding_function(checker: Checker, node: ast.expr) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The innermost function whose body holds `node` (a decorator's argument is outside it)."""
    holding = [f for f in statement_facts(checker).functions
               if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)) and inside(node, f)
               and (f.body[0].lineno, f.body[0].col_offset) <= (node.lineno, node.col_offset)]
    return max(holding, key=lambda f: f.lineno) if holding else None


def _function_places(checker: Checker, function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """_places_on_device of a function's calls, walked once per function."""
    key = ("float64-device", id(function))
    known = checker.derived.get(key)
    if known is None or known[0] is not function:
        calls = [n for n in ast.walk(function) if type(n) is ast.Call]
        known = checker.derived[key] = (function, _places_on_device(calls, function))
    return bool(known[1])


def _places_on_device(calls: list[ast.Call], function: ast.AST | None) -> bool:
    for call in calls:
        name = last_name(call.func)
        if name in MOVES and type(call.func) is ast.Attribute:
            return True
        if name == "to" and type(call.func) is ast.Attribute and _to_device(call):
            return True
        if name in COLLECTIVES:
            return True
        if any(kw.arg is not None and "device" in kw.arg and not _cpu(kw.value)
               and not (type(kw.value) is ast.Constant and kw.value.value is None) for kw in call.keywords):
            return True
    if function is not None:
        return any(type(n) is ast.Attribute and n.attr == "device" for n in ast.walk(function))
    return False

