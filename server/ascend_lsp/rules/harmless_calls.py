"""Table-driven findings that the code around them shows harmless on an NPU host: `torch.cuda`
calls without `transfer_to_npu` (checked on torch 2.13 without CUDA), and imports of CUDA-only
packages with a fallback where they are missing. The lower severity and the reason, said in
the message. Where the call changes what a run does, the finding keeps its severity and the
message says what happens."""

from __future__ import annotations

import ast
import os
import re
from collections.abc import Callable
from functools import partial
from pathlib import PurePath

from ..engine.checker import ENV_REPORT, Checker, Reference
from ..engine.model import Severity
from ..engine.text import indent_width
from ..engine.guards import ENV_REPORT_NAME, NPU_WORD, leaves, name_words, skips
from ..engine.walk import MESSAGE_FUNCTIONS, Events, last_name
from ..option_tests import computes, off_option
from .cpp_builds import CPU_BUILD, NPU_BUILD, cpu_build, npu_build
from .cuda_test_paths import failed_cuda_test, prose, reports, reports_all
from .env_switches import module_reads, unset_off
from .float64_place import COMPLEX_DTYPES, TORCH_DTYPES, float64_place
from .import_uses import cuda_only_check, holds_only_with_cuda
from .dtype_tests import dtype_test
from .npu2xx_support import NOT_CALLED, not_called, rebinding
from .advice_matching import inside, own_nodes
from .uncalled_helpers import uncalled_place
from .statement_facts import (CUDA_GRAPHS, NAIVE_PARALLELISM, StatementFacts, innermost_function, seeded_between,
                              statement_facts, under_cuda_key)

# a string that names the NPU as a device or its collectives: "npu", "npu:0", "hccl"
NPU_STRING = re.compile(r"(?:npu|hccl)(?::|$)")

# a seed of every device beside these (statement_facts.SEEDS_ALL) seeds the NPU too
CUDA_SEEDS = frozenset({"torch.cuda.manual_seed", "torch.cuda.manual_seed_all"})
SEEDED_BESIDE = (" (`torch.manual_seed` beside it seeds every device, the NPU too; without CUDA this call is "
                 "queued and never runs.)")
SEED_ONLY = (" (Without CUDA this call is queued and never runs: on an NPU host the NPU's generator stays "
             "unseeded unless `torch.manual_seed` or `torch.npu.manual_seed_all` is called.)")
EMPTY_CACHE = (" (Without CUDA it does nothing (CUDA is never initialised); the NPU's cached memory is freed by "
               "`torch.npu.empty_cache()` where that matters.)")
READ_SWITCH = " (Read, not set: it reports CUDA's setting, which the NPU ignores; reading it changes nothing.)"
TYPE_ONLY = (" (Only a type here, in a hint, an isinstance() test or typing.cast(): naming it runs nothing, and an "
             "NPU object is not one.)")
UNION_MEMBER = (" (A member of a type union (`Union[...]`, `Optional[...]`, `A | B`), as in a type alias: naming it "
                "runs nothing, and an NPU object is not one.)")
ATTRIBUTE_OWNER = (" (Only its attribute is tested for or replaced (`hasattr`, `setattr`, `monkeypatch.setattr`, "
                   "`mock.patch.object`), which needs no CUDA; a call through it is reported where it is made.)")
# torch.cuda.OutOfMemoryError is torch.OutOfMemoryError (torch 2.13), which torch_npu raises for the
# NPU's (c10::OutOfMemoryError, NPUException.h in the torch_npu 2.13.0 wheel)
SAME_ERROR = (" (The same class as `torch.OutOfMemoryError`, which torch_npu raises when the NPU runs out of "
              "memory: catching it catches the NPU's too. torch.npu has no such name: keep it, or write "
              "`torch.OutOfMemoryError`.)")
KEY_ONLY = (" (Only a key here (`hooks[torch.cuda.amp.GradScaler] = ...`): naming the class runs nothing, and an "
            "NPU object is never looked up under it.)")
FALLBACK = (" (A fallback: `getattr(torch, device_type, torch.cuda)` takes it only where torch has no module for "
            "the device type; on an NPU host with torch_npu loaded that is `torch.npu`.)")
DTYPE_ASKED = " (Compared with, not made: a test of a dtype creates no tensor of it.)"
DTYPE_RULES = frozenset({"NPU405", "NPU202"})  # float64 and complex dtypes
REPORTS_ONLY = (" (The test only decides what is reported: its branches only log or record facts, or call "
                "functions named for checking or reporting (`check_...`, `print_...`), so on an NPU host only the "
                "report differs.)")
NO_OPS_ONLY = (" (Its branches only do what does nothing without CUDA (`torch.cuda.empty_cache()`, a CUDA seed "
               "beside `torch.manual_seed`, cuDNN's flags), make tensors contiguous for a CUDA kernel (`q = "
               "q.contiguous()`, the same values), or log: on an NPU host the test is False and nothing that "
               "matters is skipped.)")
# what returns at once, doing nothing, where torch has no CUDA (torch 2.13 CPU, each run): a seed only
# beside a seed of every device (seeds_all_beside), as its own finding says; ipc_collect,
# synchronize and reset_peak_memory_stats raise there instead
NO_OPS_WITHOUT_CUDA = frozenset({"torch.cuda.empty_cache"})
DTYPE_KEY = " (A key of a table, looked up, not made: no float64 tensor is created here.)"
DTYPE_TRANSLATION = (" (An entry of a table that translates another library's dtype of the same name (`np.complex64: "
                     "torch.complex64`): it is taken only for data that holds that dtype already; nothing here makes it.)")
DTYPE_MAP = (" (An entry of a table from dtype to dtype (`{torch.complex64: torch.complex128}`), as its key or beside a "
             "key of its kind: it is taken only for data that holds that kind already; nothing here makes it.)")
DTYPE_NAME = (" (The value of a table that looks a dtype up by its name (`\"float64\": torch.float64`): it is taken only "
              "where the user names that dtype; nothing here makes it.)")
PER_DEVICE = " (The value of a per-device dict's `\"cuda\"` key: it is looked up only for CUDA.)"
SCRIPTED_FUNCTION = (" (Code scripted only to be run (a decorator, `f = torch.jit.script(f)`, or a function of this "
                     "module scripted where nothing here saves or inspects the TorchScript object): under "
                     "transfer_to_npu it stays plain Python with the same results; only code that needs the "
                     "TorchScript object (`torch.jit.save`, `.graph`, `.code`) changes.)")
# what reads 0, False or None without CUDA, not an error (torch 2.13 on a host without it, checked): CUDA's
# memory statistics, the CUDA version torch was built with, whether there is a GPU and how many
# (`print(torch.cuda.is_available())` in a script that reports the host)
HARMLESS_READS = frozenset({"torch.cuda.memory_allocated", "torch.cuda.max_memory_allocated",
                            "torch.cuda.memory_reserved", "torch.cuda.max_memory_reserved",
                            "torch.cuda.memory_cached", "torch.cuda.max_memory_cached", "torch.version.cuda",
                            "torch.cuda.is_available", "torch.cuda.device_count"})
MESSAGE_READ = (" (Only read for a message (a print, a log, a recorded metric, an exception's text, text with prose "
                "it is formatted into): without CUDA it is 0, False or None, and only the message says so.)")
SWITCH_RULES = frozenset({"NPU105", "NPU106"})
# CUDA's switches set to what their NPU analogue is by default: torch_npu 2.13.0 reads its conv HF32 as
# enabled while unset and its matmul HF32 as disabled (torch_npu/npu/npu_config.py, _allowHF32Conv and
# _allowHF32Matmul.__getattr__: conv's "" or no value is "enable", matmul's only "enable" is)
NPU_DEFAULTS = {"torch.backends.cudnn.allow_tf32": ("torch.npu.conv.allow_hf32", True, "TF32 in fp32 convolutions",
                                                    "they already run in HF32"),
                "torch.backends.cuda.matmul.allow_tf32": ("torch.npu.matmul.allow_hf32", False,
                                                          "no TF32 in fp32 matrix products", "they run in fp32")}
NPU_DEFAULT = (" (Set {value}, it asks for {asks}; torch_npu's `{npu}` is {value} unless set, so on the NPU {does}: the "
               "intent holds without change.)")
TESTED_BESIDE_NPU = (" (A test for CUDA in code that handles `npu` too (its imports, or this statement): on an NPU "
                     "host it is False and the code takes the path its authors gave other devices.)")
SKIP_CONDITION = (" (A test's skip condition: on an NPU host the test is skipped, as on any host without CUDA; "
                  "a test meant for the NPU needs its own condition.)")
# what tests for CUDA: in a file that handles `npu` too, the authors chose the NPU's path
CUDA_PROBES = frozenset({"torch.cuda.is_available", "torch.cuda.device_count"})


def names_environment_report(stem: str) -> bool:
    """A module that reports the host by its name (ENV_REPORT_NAME), or `env.py` (LLaMA-Factory's, accelerate's
    `accelerate env`): for `torch.cuda` names it reads; `env.py` alone may hold a project's settings, so its other
    findings keep their severity (Checker.env_report)."""
    return stem == "env" or ENV_REPORT_NAME.search(stem) is not None


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


def _within_any(node: ast.AST, outers: list) -> bool:
    return any(inside(node, outer) for outer in outers)


def seeds_all_beside(checker: Checker, node: ast.AST) -> bool:
    """`torch.manual_seed(...)` in the innermost function holding `node`; at module level, in its
    statement's lines or in a statement of the module's own (a script seeding at its top level)."""
    facts = statement_facts(checker)
    func = innermost_function(facts, node)
    if func is None and checker.text_fact("module-seed", _seeds_module):
        return True
    first, last = (func.lineno, func.end_lineno) if func is not None else (node.lineno, node.end_lineno)  # type: ignore[attr-defined]
    return seeded_between(facts, first, last)


# `torch.manual_seed(...)` as a statement of the module's own, at the start of a line
MODULE_SEED = re.compile(r"^torch\.manual_seed\(", re.MULTILINE)


def _seeds_module(checker: Checker) -> bool:
    return MODULE_SEED.search(checker.source.text) is not None


NAIVE_PARALLELISM_WHY = ("transformers' naive model parallelism (deprecated), which spreads layers over CUDA devices "
                         "where a user calls it; on an NPU host leave it uncalled, or change this first.)")
OPT_IN_FUNCTION = {
    CUDA_GRAPHS: (" (In `{name}`, code for CUDA graphs, which runs where the project captures one: an optimisation it "
                  "chooses. On the NPU port it to torch_npu's graphs (`torch.npu.NPUGraph`, `torch.npu.graph`) where "
                  "they are turned on, or keep them off.)"),
    NAIVE_PARALLELISM: " (In `{name}()`, " + NAIVE_PARALLELISM_WHY,
}


def opt_in_function_place(checker: Checker, node: ast.AST) -> tuple[Severity, str] | None:
    """Info and the reason for a CUDA name in a function named for a CUDA feature a project turns on
    (StatementFacts.opt_in_functions)."""
    found = next(((func, kind) for func, kind in statement_facts(checker).opt_in_functions if inside(node, func)), None)
    return (Severity.INFO, OPT_IN_FUNCTION[found[1]].format(name=found[0].name)) if found is not None else None


def in_environment_report(checker: Checker, facts: StatementFacts, node: ast.AST) -> bool:
    if checker.path is not None and names_environment_report(PurePath(checker.path).stem.lower()):
        return True
    return _within_any(node, facts.env_reports)


def reference_place(checker: Checker, rule: str, ref: Reference) -> tuple[Severity | None, str] | None:
    """The lower severity and the reason for a `torch.cuda` reference the code shows harmless;
    for a CUDA-only seed without a seed of every device, or a CUDA probe whose other path fails
    on an NPU host (cuda_test_paths.py), its severity (or None: the rule's) and why; else None."""
    qualname = ref.qualname
    if (uncalled := uncalled_place(checker, ref.node)) is not None:
        return uncalled
    if rule == "NPU306" and npu_build(checker, ref.node):
        return Severity.INFO, NPU_BUILD
    if rule == "NPU306" and ref.qualname == "torch.utils.cpp_extension.load" and type(ref.call) is ast.Call \
            and ref.call.func is ref.node and cpu_build(ref.call):
        return Severity.INFO, CPU_BUILD
    if rule.startswith("NPU3"):
        return opt_in_reference(checker, ref)
    if rule in DTYPE_RULES and dtype_test(checker, ref.node):
        return Severity.INFO, DTYPE_ASKED
    if rule == "NPU405" and dict_key(checker, ref.node):
        return Severity.INFO, DTYPE_KEY
    if rule in DTYPE_RULES and (translated := translated_dtype(checker, ref.node)) is not None:
        return Severity.INFO, translated
    if rule == "NPU202" and ref.qualname == "torch.view_as_complex" and complex_product_only(checker, ref):
        return Severity.INFO, COMPLEX_PRODUCT
    if rule == "NPU405":
        return float64_place(checker, ref.node)
    if rule.startswith("NPU2") and ref.call is None and not_called(checker, ref.node):
        return Severity.INFO, NOT_CALLED
    if rule == "NPU404" and scripts_in_place(checker, ref):
        return Severity.INFO, SCRIPTED_FUNCTION
    if rule.startswith("NPU1") \
            and (off := cuda_flag_off(checker, ref.node) or opt_in_function_place(checker, ref.node)):
        return off
    if ref.type_only:
        return Severity.INFO, TYPE_ONLY
    if not qualname.startswith(("torch.cuda", "torch.backends", "torch.version")):
        return None
    if id(ref.node) in type_union_members(checker):
        return Severity.INFO, UNION_MEMBER
    if qualname == "torch.cuda.OutOfMemoryError":
        return Severity.INFO, SAME_ERROR
    facts = statement_facts(checker)
    if id(ref.node) in facts.attribute_owners:
        return Severity.INFO, ATTRIBUTE_OWNER
    if ref.call is None and id(ref.node) in facts.stored_keys:
        return Severity.INFO, KEY_ONLY
    if ref.call is None and qualname == "torch.cuda" and id(ref.node) in facts.getattr_defaults:
        return Severity.INFO, FALLBACK
    if id(ref.node) in facts.in_skip_condition or skip_test(checker, ref.node):
        return Severity.INFO, SKIP_CONDITION
    if qualname in CUDA_PROBES and (loaded := state_dict_place(checker, ref.node)) is not None:
        return loaded
    if qualname in CUDA_PROBES and onnx_provider_choice(checker, ref.node):
        return Severity.INFO, ONNX_PROVIDER
    if qualname in CUDA_PROBES and handles_npu(checker):
        failed = failed_cuda_test(checker, ref.node)
        return (None, failed) if failed else (Severity.INFO, TESTED_BESIDE_NPU)
    if under_cuda_key(facts, ref.node):
        return Severity.INFO, PER_DEVICE
    if qualname in HARMLESS_READS and (in_message(checker, ref.node) or read_for_messages(checker, ref.node)):
        return Severity.INFO, MESSAGE_READ
    if rule.startswith("NPU1") and (reason := reports_only(checker, ref.node)) is not None:
        return Severity.INFO, reason
    if qualname in CUDA_SEEDS:
        if seeds_all_beside(checker, ref.node):
            return Severity.INFO, SEEDED_BESIDE
        return checker.rules[rule].severity, SEED_ONLY
    if qualname == "torch.cuda.empty_cache":
        return Severity.INFO, EMPTY_CACHE
    if rule in SWITCH_RULES and ref.call is None and type(ref.node) is ast.Attribute \
            and type(ref.node.ctx) is ast.Load:
        return Severity.INFO, READ_SWITCH
    if rule in SWITCH_RULES and qualname in NPU_DEFAULTS and _set_to(checker, ref.node, NPU_DEFAULTS[qualname][1]):
        npu, value, asks, does = NPU_DEFAULTS[qualname]
        return Severity.INFO, NPU_DEFAULT.format(npu=npu, value=value, asks=asks, does=does)
    if in_environment_report(checker, facts, ref.node):
        return Severity.INFO, ENV_REPORT
    return None


# ONNX Runtime's CUDA provider: a session's choice of it is ONNX Runtime's, apart from torch's devices
CUDA_PROVIDER = "CUDAExecutionProvider"
ONNX_PROVIDER = (" (It chooses ONNX Runtime's `CUDAExecutionProvider` for a CUDA device: ONNX Runtime runs the "
                 "model apart from torch and has no provider for torch's `npu` device, so `npu` here is no fix; on an "
                 "NPU host give the session the CPU's provider, or ONNX Runtime's CANN build (`onnxruntime-cann`) "
                 "and its `CANNExecutionProvider`.)")


def _set_to(checker: Checker, node: ast.AST, value: bool) -> bool:
    """`node` is a target of `... = <value>` in the statement."""
    return any(type(stmt) is ast.Assign and any(t is node for t in stmt.targets)
               and type(stmt.value) is ast.Constant and stmt.value.value is value
               for stmt, _scope in checker.events.assigns)


def onnx_provider_choice(checker: Checker, node: ast.AST) -> bool:
    """`node` is in the test of an `if` that chooses ONNX Runtime's CUDA provider (its test or
    body names `CUDAExecutionProvider`), or in the value of `name = ...` that such an `if` of the
    function tests (`cuda = torch.cuda.is_available() and ...` then `if cuda and
    "CUDAExecutionProvider" in available:`)."""
    path = statement_path(checker, node)
    if not path:
        return False
    block, index = path[-1]
    stmt = block[index]
    if type(stmt) is ast.If and inside(node, stmt.test):
        return _names_provider(stmt)
    function = innermost_function(statement_facts(checker), node)
    if type(stmt) is not ast.Assign or len(stmt.targets) != 1 or type(stmt.targets[0]) is not ast.Name \
            or not inside(node, stmt.value) or not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    name = stmt.targets[0].id
    return any(type(n) is ast.If and _names_provider(n) and any(type(t) is ast.Name and t.id == name
                                                                  for t in ast.walk(n.test))
               for n in own_nodes(function.body))


def _names_provider(stmt: ast.If) -> bool:
    """The `if`'s test or body (not its `else`) names ONNX Runtime's CUDA provider."""
    return any(type(n) is ast.Constant and n.value == CUDA_PROVIDER
               for part in (stmt.test, *stmt.body) for n in ast.walk(part))


# what reads a checkpoint onto the device `map_location=` names
LOADERS = frozenset({"load", "load_state_dict_from_url"})
STATE_DICT_LOAD = (" (The `map_location` of a state dict that is only loaded into a module (`.load_state_dict(...)`), "
                   "which copies each tensor into the module's own parameters, on whatever device they are: on an "
                   "NPU host it is read onto the CPU, which is correct. A CUDA `map_location` without this fallback "
                   "raises there.)")


def state_dict_place(checker: Checker, node: ast.AST) -> tuple[Severity, str] | None:
    """Info and the reason for `map_location="cuda" if <CUDA test> else "cpu"` (`node` in it) of
    a `torch.load(...)` or `load_state_dict_from_url(...)` whose result only goes into
    `.load_state_dict(...)`: directly, or through a name every later use of which, in its
    function, lies in what a `.load_state_dict(...)` call is given."""
    for call, _scope in checker.events.calls:
        choice = next((kw.value for kw in call.keywords if kw.arg == "map_location"), None)
        if type(choice) is not ast.IfExp or not inside(node, choice) or last_name(call.func) not in LOADERS \
                or not (type(choice.orelse) is ast.Constant and choice.orelse.value == "cpu"):
            continue
        if _loaded_into_module(checker, call):
            return Severity.INFO, STATE_DICT_LOAD
    return None


def _loaded_into_module(checker: Checker, load: ast.Call) -> bool:
    # not with `assign=True`, which keeps the loaded tensors themselves (torch 2.13 nn/modules/module.py:2495
    # copies them otherwise: `param.copy_(input_param)`)
    loads_into = [call for call, _scope in checker.events.calls if last_name(call.func) == "load_state_dict"
                  and not any(kw.arg == "assign" and not (type(kw.value) is ast.Constant and kw.value.value is False)
                              for kw in call.keywords)]
    if any(inside(load, arg) for call in loads_into for arg in call.args):
        return True
    target = next((stmt.targets[0] for stmt, _scope in checker.events.assigns
                   if type(stmt) is ast.Assign and stmt.value is load and len(stmt.targets) == 1), None)
    function = innermost_function(statement_facts(checker), load)
    if type(target) is not ast.Name or not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    uses = [n for n in own_nodes(function.body) if type(n) is ast.Name and n.id == target.id and type(n.ctx) is ast.Load]
    return bool(uses) and all(any(inside(use, arg) for call in loads_into for arg in call.args) for use in uses)


UNION_FORMS = frozenset({"typing.Union", "typing.Optional", "typing_extensions.Union", "typing_extensions.Optional"})


def _class_name(node: ast.expr) -> bool:
    """A class named as in a union of classes: `None`, or a CamelCase name or chain's last part."""
    if type(node) is ast.Constant:
        return node.value is None
    name = last_name(node) if isinstance(node, (ast.Name, ast.Attribute)) else ""
    return name[:1].isupper() and not name.isupper()


def type_union_members(checker: Checker) -> set[int]:
    """The ids of the statement's nodes that are members of a type union: the slice of
    `Union[...]`/`Optional[...]`, the operands of a `|` of classes (`Stream | None`).
    Gathered once per statement."""
    events = checker.events
    key = ("union-members", id(events))
    known = checker.derived.get(key)
    if known is None or known[0] is not events:
        members: set[int] = set()
        for root in events.roots:
            for node in ast.walk(root):
                if type(node) is ast.Subscript and checker.qualname(node.value, checker.module.scope) in UNION_FORMS:
                    members.update(map(id, node.slice.elts if type(node.slice) is ast.Tuple else (node.slice,)))
                elif type(node) is ast.BinOp and type(node.op) is ast.BitOr:
                    operands: list[ast.expr] = []
                    pending: list[ast.expr] = [node]
                    while pending:
                        part = pending.pop()
                        if type(part) is ast.BinOp and type(part.op) is ast.BitOr:
                            pending.extend((part.left, part.right))
                        else:
                            operands.append(part)
                    if all(_class_name(o) for o in operands):
                        members.update(map(id, operands))
        known = checker.derived[key] = (events, members)
    return known[1]  # type: ignore[return-value]


# the rule pages' words for flag_off (NPU1xx, NPU3xx)
OPTION_LEFT_OFF_DOC = (
    "Info under an `if` (or in the value of `... if ... else ...`) whose test is an option the project leaves off: "
    "a flag its Python files give only `False` (`if cfg.compile_model:`, `if autogptq:`: a dataclass field, a "
    "parameter default such as `def load(path, autogptq=False)`, argparse's `store_true`; never `True`, neither as a "
    "caller's keyword nor as a dict's key; or set only from such a flag, `self.is_vllm = use_vllm`), an argparse "
    "option None unless the command line gives it "
    "(`add_argument(\"--write_profile\", default=None)`, and no file gives it a value), or a string option "
    "compared with values they never give it (`if "
    "args.optimizer == \"Adam8bit\":` where `optimizer` is declared with the default `\"AdamW\"`: an annotated "
    "default, a field's or argparse's `default=`; a keyword, a dict's key or an assignment giving the value keeps the "
    "finding): it runs only where the user turns the option on, and the message names it and where its default is "
    "given (flag_defaults.py); or an environment switch false where its variable is unset (`if "
    "os.getenv(\"BUILD_CUDA_EXTENSIONS\", \"0\") == \"1\":`, `os.environ.get(\"X\", \"false\").lower() in (\"1\", "
    "\"true\")`, `int(os.getenv(\"X\", \"0\"))`, `os.getenv(\"X\")`; env_switches.py). An `else` keeps its finding "
    "(what the option holds there is not known), and so does "
    "a test of an attribute no file of the project gives a value (a library's, such as transformers' "
    "`model_parallel`), of a string no declaration gives a default (data: `x.type == \"image\"`), of a device or "
    "backend (`device.type == \"cuda\"`, a CUDA test), of a flag named for a fact or for what the run does "
    "(`is_moe_model`, `has_bias`, `HAVE_TE`, `do_train`: computed, or the run's main path), or of a boolean field whose "
    "default is None (a config file gives its value). A module the project imports only under such a test, and what "
    "only it imports, is info as a whole (opt_in_modules.py).")
# the reasons for code under an option left off, by its kind (option_tests.OffOption, whose phrase is `option`)
FLAG_OFF = (" (Under {test}, and {option}: it runs only where the user turns that flag on; on an NPU host leave it off, "
            "or change this first.)")
PARALLELIZE_OFF = " (Under {test}: `{name}` is True only after `parallelize()` ({place}), " + NAIVE_PARALLELISM_WHY
# `def parallelize(self, device_map=None):` of transformers' naive model parallelism, in vendored modeling code
PARALLELIZE_DEF = re.compile(r"^[ \t]+def parallelize\(", re.MULTILINE)
UNSET_OFF = (" (Under {test}, and {option}: it runs only where the user passes it; on an NPU host leave it out, or "
             "change this first.)")
ENV_OFF = (" (Under {test}, which is false where the environment variable `{name}` is unset: it runs only where the "
           "user sets it; on an NPU host leave it unset, or change this first.)")
OPTION_OFF = (" (Under {test}, and {option}: it runs only where the user chooses that; on an NPU host leave the "
              "option as it is, or change this first.)")


def flag_off(checker: Checker, node: ast.AST) -> tuple[Severity, str] | None:
    """Info and the reason for code in the body of an `if` whose test is a flag (`if
    cfg.compile_model:`, `if self.use_tf32 and ...:`) or a string option compared with values
    (`if args.optimizer == "Adam8bit":`, `in ("a", "b")`), or in the value a conditional
    expression takes when it is (`"flash_attention_2" if args.use_flash_attn else None`), that
    the project leaves off (flag_defaults.py: its only literal value anywhere is False; it gives
    the option strings and none of those), nearest first. An `else` is never read: what the
    option is set to there is not known."""
    if checker.project is None:
        return None
    path = statement_path(checker, node)
    if path:  # the conditional expressions of the innermost statement, innermost (last in the walk) first
        block, index = path[-1]
        for choice in reversed([n for n in _conditional_values(checker, block[index]) if inside(node, n.body)]):
            if (found := _flag_test(checker, choice.test)) is not None:
                return Severity.INFO, found[1].format(test=f"`... if {found[0]} else ...`", **found[2])
    for block, index in reversed(path):
        stmt = block[index]
        if type(stmt) is ast.If and any(inside(node, child) for child in stmt.body) \
                and (found := _flag_test(checker, stmt.test)) is not None:
            return Severity.INFO, found[1].format(test=f"`if {found[0]}:`", **found[2])
    return None


def _conditional_values(checker: Checker, stmt: ast.stmt) -> list[ast.IfExp]:
    """The conditional expressions of a statement, in the walk's order, once per statement (each of
    its thousands of references asks)."""
    key = ("conditional-values", id(stmt))
    known = checker.derived.get(key)
    if known is None or known[0] is not stmt:
        known = checker.derived[key] = (stmt, [n for n in ast.walk(stmt) if type(n) is ast.IfExp])
    return known[1]  # type: ignore[return-value]


def cuda_flag_off(checker: Checker, node: ast.AST) -> tuple[Severity, str] | None:
    """flag_off for a CUDA name (NPU1xx) outside the CUDA arm of a backend test: inside one the
    engine lowers it for that test and lists it with the test's finding (engine/checker.py)."""
    if any(inside(node, part) for found in checker.branches for _test, branch in found.guarded
           for part in (branch if isinstance(branch, list) else [branch])):
        return None
    return flag_off(checker, node)


def _flag_test(checker: Checker, test: ast.expr) -> tuple[str, str, dict[str, str]] | None:
    """The test as written (on one line), the reason's form and what it names: the flag it needs
    on that the project leaves off, or the string option it needs at values the project never
    gives it, with where its default is given; the test, or one of the tests it joins by `and`."""
    project = checker.project
    assert project is not None
    tested = test.values if type(test) is ast.BoolOp and type(test.op) is ast.And else [test]
    for flag in tested:
        if (variable := unset_off(flag, partial(_held_read, checker, flag))) is not None:
            return " ".join(checker.source.segment(checker.range(test)).split()), ENV_OFF, {"name": variable}
        if type(flag) is ast.Attribute and flag.attr == "model_parallel" \
                and (found := PARALLELIZE_DEF.search(checker.source.text)) is not None:
            line = checker.source.text.count("\n", 0, found.start())
            text = " ".join(checker.source.segment(checker.range(test)).split())
            return text, PARALLELIZE_OFF, {"name": "model_parallel",
                                           "place": f"{os.path.relpath(checker.path or '', project.root)}:{line + 1}"}
        off = off_option(flag, project.flags, checker.path, partial(computed_here, checker))
        if off is not None:
            form = OPTION_OFF if off.kind == "option" else UNSET_OFF if off.kind == "unset" else FLAG_OFF
            return " ".join(checker.source.segment(checker.range(test)).split()), form, {"option": off.phrase(project.root)}
    return None


def _held_read(checker: Checker, test: ast.expr, name: str) -> ast.expr | None:
    """The value of `name` where the test reads it: its one assignment in the innermost function
    around the test, or, where that function assigns it nowhere (or the test is at the top level),
    its one top-level assignment in the file (env_switches.module_reads); None otherwise."""
    func = innermost_function(statement_facts(checker), test)
    values = _assigned(checker, func).get(name) if func is not None else None
    if values:
        return values[0] if len(values) == 1 else None
    return checker.text_fact("module-env-reads", lambda c: module_reads(c.source.text)).get(name)


def _assigned(checker: Checker, func: ast.AST) -> dict[str, list[ast.expr | None]]:
    """The values each name is given in the function (None for an augmented assignment's, or a bare
    annotation's), read once per function (each of its findings under a test asks)."""
    key = ("assigned", id(func))
    known = checker.derived.get(key)
    if known is None or known[0] is not func:
        names: dict[str, list[ast.expr | None]] = {}
        for node in ast.walk(func):
            if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
                for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                    if type(target) is ast.Name:
                        names.setdefault(target.id, []).append(None if type(node) is ast.AugAssign else node.value)
        known = checker.derived[key] = (func, names)
    return known[1]  # type: ignore[return-value]


def computed_here(checker: Checker, name: str) -> bool:
    """option_tests.computes for the file, once per name (each finding under a test of it asks)."""
    project = checker.project
    sources = project.flags.sources(name) if project is not None else ()
    return checker.text_fact(f"computed {name}", lambda c: computes(c.source.text, name, sources))


# what needs the TorchScript object itself, not the scripted code's results
TORCHSCRIPT_USE = re.compile(r"jit\.save|jit\.freeze|save_to_buffer|\.(?:inlined_)?graph\b|\.code\b|\.schema\b|\._c\b")


def scripts_in_place(checker: Checker, ref: Reference) -> bool:
    """`@torch.jit.script` on a function or a class, `f = torch.jit.script(f)`, or `g =
    torch.jit.script(f)` (or `g = f if ... else torch.jit.script(f)`) of a function the module defines
    where the module never needs the TorchScript object (TORCHSCRIPT_USE)."""
    call = ref.call
    if type(call) is not ast.Call:
        line = checker.source.line(ref.node.lineno - 1).encode("utf-8")
        return line[:ref.node.col_offset].strip() == b"@"
    if call.func is not ref.node:
        return False
    if rebinding(checker, call):
        return True
    text = checker.source.text
    return len(call.args) == 1 and not call.keywords and type(call.args[0]) is ast.Name \
        and any(stmt.value is call or (type(stmt.value) is ast.IfExp and call in (stmt.value.body, stmt.value.orelse))
                for stmt, _scope in checker.events.assigns) \
        and re.search(rf"^[ \t]*(?:async[ \t]+)?def[ \t]+{call.args[0].id}\b", text, re.M) is not None \
        and TORCHSCRIPT_USE.search(text) is None


def method_place(checker: Checker, rule: str, node: ast.Attribute) -> tuple[Severity, str] | None:
    """The lower severity and the reason for a method found by its shape (`x.double()`, `x.cuda()`,
    `x.is_cuda`) that the code shows harmless; else None."""
    if rule == "NPU405":
        return float64_place(checker, node)
    if rule.startswith("NPU1"):
        if (reason := reports_only(checker, node)) is not None:
            return Severity.INFO, reason
        return cuda_flag_off(checker, node) or opt_in_function_place(checker, node)
    return None


def hides_every_gpu(checker: Checker, node: ast.AST, name: str) -> bool:
    """`os.environ["CUDA_VISIBLE_DEVICES"] = "-1"`, `os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")`."""
    return name == "CUDA_VISIBLE_DEVICES" and id(node) in statement_facts(checker).cpu_only_names


FALLBACK_IMPORT = (" (Imported under `try:` whose `except ImportError` goes on without it, or under a test that "
                   "it is installed: where it is not, as on an NPU host, the code goes on without it.)")
# `if is_apex_available():`, `elif is_bitsandbytes_available():`, `if utils.is_xformers_available():`
AVAILABILITY_TEST = re.compile(r"(?:el)?if\s+(?:\w+\.)*is_\w+_(?:available|installed)\(\)\s*:")
TRY_LINE = re.compile(r"try\s*:\s*(?:#.*)?")  # `try:`, and a comment after it (`try:  # optional`)
# what a handler catches that a missing package raises
IMPORT_ERRORS = re.compile(r"except\s*(?::|\(?[\w.,\s]*\b(?:ImportError|ModuleNotFoundError|Exception|BaseException)\b)")


def _code_lines(lines: list[str], indices: range):
    for i in indices:
        stripped = lines[i].strip()
        if stripped and not stripped.startswith("#"):
            yield i, lines[i], stripped


OPT_IN = (" (Under `{test}`, which names `{word}`: it runs only where the user turns that feature on; on an NPU "
          "host leave it off.)")
LEFT_EARLY = (" (After `if {test}:` leaves early, which names `{word}`: it runs only where that feature is there "
              "and on; on an NPU host leave it off.)")



def _names(test: str, words: set[str]) -> str | None:
    """The word of `words` that `test` names as a word, not in a test of a version
    (`if flash_attn_version >= ...`: which release, not whether it is used); the longest where
    several are named (`apex_amp` over `apex`), so the message does not hang on a set's order."""
    lowered = test.lower()
    if "version" in lowered:
        return None
    camel = set(name_words(test))  # `BitsandbytesPrecision`
    named = [w for w in words if w in camel or re.search(rf"(?<![a-z]){re.escape(w)}(?![a-z])", lowered)]
    return max(named, key=lambda w: (len(w), w), default=None)


def blocks(stmt: ast.stmt) -> list[list[ast.stmt]]:
    """The statement lists a statement holds, but a function's or a class's: what calls a
    function, or uses a class, may be anything."""
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return []
    if type(stmt) is ast.Match:
        return [case.body for case in stmt.cases]
    blocks = [getattr(stmt, name) for name in ("body", "orelse", "finalbody") if getattr(stmt, name, None)]
    return blocks + [handler.body for handler in getattr(stmt, "handlers", ())]


def holding(node: ast.AST, body: list[ast.stmt]) -> list[tuple[list[ast.stmt], int]]:
    """(block, index) of each statement holding `node`, from `body` in."""
    out: list[tuple[list[ast.stmt], int]] = []
    while True:
        index = next((i for i, stmt in enumerate(body) if inside(node, stmt)), None)
        if index is None:
            return out
        out.append((body, index))
        body = next((block for block in blocks(body[index]) if any(inside(node, stmt) for stmt in block)), [])


def statement_path(checker: Checker, node: ast.AST) -> list[tuple[list[ast.stmt], int]]:
    """holding() from the innermost function of the statement holding `node`, else from the statement."""
    holders = [f for f in statement_facts(checker).functions if inside(node, f)]
    if holders:
        return holding(node, max(holders, key=lambda f: f.lineno).body)  # type: ignore[attr-defined]
    return holding(node, [root for root in checker.events.roots if isinstance(root, ast.stmt)])


# what a complex tensor from view_as_complex goes through in rotary embeddings (`view_as_real(view_as_complex(x) *
# freqs)`): each takes complex64 on the chips the support list marks (2.13.0: torch.mul complex64 and complex128,
# view_as_real complex64, view_as_complex float32 input, on A2, A3 and 950DT)
COMPLEX_PRODUCT_APIS = ("torch.mul", "torch.view_as_real", "torch.view_as_complex")
COMPLEX_PRODUCT = (" (Only multiplied and turned back to real here (`view_as_real(view_as_complex(x) * freqs)`): the "
                   "support list gives torch.mul complex64 and view_as_real complex64 input on this chip, so these run "
                   "on the NPU; other complex math would not.)")


def complex_product_only(checker: Checker, ref: Reference) -> bool:
    """The complex tensor `torch.view_as_complex(...)` makes is only multiplied (`*`), and the
    product turned back by `torch.view_as_real`, in its statement or through a local of its
    function read only so; on a chip where the support list gives each of them complex64."""
    call = ref.call
    support = checker.tables.support if checker.tables is not None else {}
    if call is None or not all((row := support.get(name)) is not None and row.chips.get(checker.settings.chip) is True
                               and (row.complex or name == "torch.view_as_complex") for name in COMPLEX_PRODUCT_APIS):
        return False  # (the list marks A2, A3 and 950DT: on 910A and 310P it says nothing)
    function = innermost_function(statement_facts(checker), call)
    roots = [function] if function is not None else list(checker.events.roots)
    if _multiplied_back(checker, roots, call):
        return True
    reads = local_reads(roots, lambda value: value is call)
    return bool(reads) and all(_multiplied_back(checker, roots, read) for read in reads)


def _multiplied_back(checker: Checker, roots: list, node: ast.AST) -> bool:
    """`node` is an operand of a `*` whose product is the argument of `torch.view_as_real(...)`."""
    for root in roots:
        for back in ast.walk(root):
            if type(back) is ast.Call and len(back.args) == 1 and type(product := back.args[0]) is ast.BinOp \
                    and type(product.op) is ast.Mult and node in (product.left, product.right) \
                    and checker.qualname(back.func, checker.module.scope) == "torch.view_as_real":
                return True
    return False


def translated_dtype(checker: Checker, node: ast.AST) -> str | None:
    """The reason, where `node` is a key or a value of a dict display that pairs it with another
    library's dtype of the same name (`{np.complex64: torch.complex64, ...}`), a value paired with
    its own name (`{"float64": torch.float64, "torch.float64": torch.float64}`), or an entry of a
    table from torch dtype to torch dtype that is its key or is paired with a key of its kind
    (`{torch.complex64: torch.complex128}`, `table[torch.complex32] = torch.complex128`; not
    `{torch.float32: torch.float64}`, which makes float64 of float32): a table that translates
    dtypes; else None."""
    if type(node) is not ast.Attribute:
        return None
    for root in checker.events.roots:
        for display in ast.walk(root):
            for key, value in _pairs(display):
                if node is key or node is value:
                    other = value if node is key else key
                    if type(other) is ast.Constant and type(other.value) is str:
                        named = node is value and other.value.removeprefix("torch.") == node.attr
                        return DTYPE_NAME if named else None
                    if not isinstance(other, ast.Attribute):
                        return None
                    if other.attr == node.attr and ast.dump(other.value) != ast.dump(node.value):
                        return DTYPE_TRANSLATION
                    kept = _torch_dtype(node) and _torch_dtype(other) \
                        and (node is key or _dtype_kind(node.attr) == _dtype_kind(other.attr))
                    return DTYPE_MAP if kept else None
    return None


def _pairs(node: ast.AST) -> list[tuple[ast.expr | None, ast.expr]]:
    """The (key, value) pairs a node writes: a dict display's, `table[key] = value`'s."""
    if isinstance(node, ast.Dict):
        return list(zip(node.keys, node.values))
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Subscript):
        return [(node.targets[0].slice, node.value)]
    return []


def _torch_dtype(node: ast.expr) -> bool:
    return type(node) is ast.Attribute and type(node.value) is ast.Name and node.value.id == "torch" \
        and node.attr in TORCH_DTYPES


def _dtype_kind(name: str) -> str:
    """What NPU202 and NPU405 ask of a dtype: complex, float64, or neither (the name itself)."""
    return "complex" if name in COMPLEX_DTYPES else "float64" if name in ("float64", "double") else name


def dict_key(checker: Checker, node: ast.AST) -> bool:
    """`node` is a key of a dict display in the statement (`{torch.float64: 3.4e13, ...}`, a
    table of peak FLOPs per dtype). The keys are gathered once per statement."""
    events = checker.events
    key = ("dict-keys", id(events))
    known = checker.derived.get(key)
    if known is None or known[0] is not events:
        keys = {id(k) for root in events.roots for d in ast.walk(root) if type(d) is ast.Dict for k in d.keys
                if k is not None}
        known = checker.derived[key] = (events, keys)
    return id(node) in known[1]  # type: ignore[operator]


def reports_only(checker: Checker, node: ast.AST) -> str | None:
    """The reason, where `node` is in the test of an `if` both of whose ways only report: its
    branches only log or record (cuda_test_paths.reports), or go on at once (no `else`): `if
    fabric.device.type == "cuda": fabric.print(f"Memory used: ...")`; or only do, beside
    that, what does nothing without CUDA (`if torch.cuda.is_available(): torch.cuda.empty_cache()`).
    None otherwise."""
    path = statement_path(checker, node)
    if not path:
        return None
    block, index = path[-1]
    stmt = block[index]
    if type(stmt) is not ast.If or not inside(node, stmt.test):
        return None
    branches = (*stmt.body, *stmt.orelse)
    if reports_all(checker, stmt.body) and (not stmt.orelse or reports_all(checker, stmt.orelse)):
        return REPORTS_ONLY
    in_cuda = holds_only_with_cuda(checker, stmt.test)
    if all(reports(s) or _no_op(checker, s, in_cuda and s in stmt.body) for s in branches):
        return NO_OPS_ONLY
    return CUDA_ONLY_CHECK if cuda_only_check(checker, stmt) else None


CUDA_ONLY_CHECK = (" (A check only CUDA runs: its test holds only where CUDA does and it only logs, raises or sets "
                   "CUDA's sync debugging, so on an NPU host the test is False and nothing but the check is skipped.)")


def _no_op(checker: Checker, stmt: ast.stmt, in_cuda: bool = False) -> bool:
    """`stmt` is a call that does nothing without CUDA: NO_OPS_WITHOUT_CUDA, or a CUDA seed
    beside a seed of every device; sets a flag of cuDNN's; or, where only CUDA runs it
    (`in_cuda`), is `with torch.cuda.device(d):` around such statements alone."""
    scope = checker.module.scope
    if type(stmt) is ast.Assign:
        return _made_contiguous(stmt) or all((checker.qualname(t, scope) or "").startswith(CUDNN_FLAGS)
                                             for t in stmt.targets)
    if type(stmt) is ast.With:
        return in_cuda and all(type(item.context_expr) is ast.Call and item.optional_vars is None
                               and checker.qualname(item.context_expr.func, scope) in CUDA_DEVICE_CONTEXTS
                               for item in stmt.items) \
            and all(reports(s) or _no_op(checker, s, in_cuda) for s in stmt.body)
    if type(stmt) is not ast.Expr or type(stmt.value) is not ast.Call:
        return False
    name = checker.qualname(stmt.value.func, scope)
    return name in NO_OPS_WITHOUT_CUDA or (name in CUDA_SEEDS and seeds_all_beside(checker, stmt))


# cuDNN's switches (`torch.backends.cudnn.deterministic = True`): set without CUDA, nothing reads
# them (torch 2.13 CPU: set, no error); an NPU's own are torch.npu's
CUDNN_FLAGS = "torch.backends.cudnn."
# what only selects the current CUDA device for the statements it holds
CUDA_DEVICE_CONTEXTS = frozenset({"torch.cuda.device", "torch.cuda.device_of"})


def _made_contiguous(stmt: ast.Assign) -> bool:
    """`query = query.contiguous()`: a tensor laid out anew, the same values (a workaround for a CUDA kernel, as
    transformers' SDPA code has for the memory-efficient kernel, pytorch#112577)."""
    value = stmt.value
    return len(stmt.targets) == 1 and type(stmt.targets[0]) is ast.Name and type(value) is ast.Call \
        and not value.args and not value.keywords and type(value.func) is ast.Attribute \
        and value.func.attr == "contiguous" and type(value.func.value) is ast.Name \
        and value.func.value.id == stmt.targets[0].id


def skip_test(checker: Checker, node: ast.AST) -> bool:
    """`node` is in the test of an `if` whose branch skips a test: `if not torch.cuda.is_available():
    pytest.skip(...)`, a decorator's `return unittest.skip(reason)(test_case)`: a skip condition."""
    path = statement_path(checker, node)
    if not path:
        return False
    block, index = path[-1]
    stmt = block[index]
    return type(stmt) is ast.If and inside(node, stmt.test) and skips(stmt.body)


def in_message(checker: Checker, node: ast.AST) -> bool:
    """`node` is in what a print or log call of the statement is given (_records), in the exception a
    `raise` makes, or in the values of text with prose: an f-string (`f"cuda.available={torch.cuda.is_available()}, "`),
    `"peak: {:.3f} GB".format(...)`, `"peak: %d MB" % ...` (a message, never a device)."""
    if any(_records(last_name(call.func))
           and any(inside(node, value) for value in (*call.args, *(kw.value for kw in call.keywords)))
           for call, _scope in checker.events.calls):
        return True
    path = statement_path(checker, node)
    stmt = path[-1][0][path[-1][1]] if path else None
    if stmt is not None and any(prose(text) and inside(node, text) for text in ast.walk(stmt)):
        return True
    return type(stmt) is ast.Raise and type(stmt.exc) is ast.Call and inside(node, stmt.exc) \
        and not inside(node, stmt.exc.func)


def _records(name: str) -> bool:
    """A call that prints, logs or records a metric (MESSAGE_FUNCTIONS), or one named for a log
    entry (nanotron's `LogItem("Mem Alloc (GB)", torch.cuda.max_memory_allocated())`, `log_scalar`)."""
    return name in MESSAGE_FUNCTIONS or name_words(name)[:1] == ["log"] and name not in LOG_MATH


# what is named `log...` and computes rather than records (torch's and numpy's)
LOG_MATH = frozenset({"log", "log_softmax", "logsumexp", "log1p", "log2", "log10", "logit", "logaddexp",
                      "logaddexp2", "logcumsumexp", "logdet", "log_normal_", "log_sigmoid", "logspace", "log_prob"})


def read_for_messages(checker: Checker, node: ast.AST) -> bool:
    """`node` is in the value a function assigns to a local name that the function then reads
    only in messages (`gpu_mem = torch.cuda.memory_allocated() / 2**20` ... `logger.info(f"mem
    {gpu_mem} MB")`); not a name it returns, passes or stores anywhere else."""
    function = innermost_function(statement_facts(checker), node)
    reads = local_reads([function], lambda value: inside(node, value)) if function is not None else []
    return bool(reads) and all(in_message(checker, read) for read in reads)


def local_reads(roots: list, assigned: Callable[[ast.expr], bool]) -> list[ast.Name]:
    """The reads, in `roots`, of the name the first `name = value` there assigns where
    `assigned(value)`; none where no such assignment is."""
    name = next((stmt.targets[0].id for root in roots for stmt in ast.walk(root) if type(stmt) is ast.Assign
                 and len(stmt.targets) == 1 and type(stmt.targets[0]) is ast.Name and assigned(stmt.value)), None)
    return [] if name is None else [n for root in roots for n in ast.walk(root)
                                    if type(n) is ast.Name and n.id == name and type(n.ctx) is ast.Load]


def feature_test(checker: Checker, node: ast.stmt | ast.expr, words: set[str],
                 path: list[tuple[list[ast.stmt], int]] | None = None) -> tuple[str, str, bool] | None:
    """(the test, the word, whether it leaves early) of an `if`/`elif` around `node`, in its
    function (else its statement), whose test names one of `words` (a package and the name it
    is imported as) as a word: `if self.use_apex:`, `if args.quant_method == "awq":`; or of an
    `if not ...:` before it in a block holding it, whose body leaves (`if not HAS_BNB:
    pytest.skip(...)`). Nearest first. `path`: the blocks holding `node` where it is not in the
    statement being run (_holding)."""
    for block, index in reversed(statement_path(checker, node) if path is None else path):
        for before in reversed(block[:index]):
            if type(before) is ast.If and type(before.test) is ast.UnaryOp and type(before.test.op) is ast.Not \
                    and leaves(before.body):
                found = _test_naming(checker, before.test, words)
                if found is not None:
                    return found[0], found[1], True
        stmt = block[index]
        if type(stmt) is ast.If and any(inside(node, child) for child in stmt.body):
            found = _test_naming(checker, stmt.test, words)
            if found is not None:
                return found[0], found[1], False
    return None


def _test_naming(checker: Checker, test: ast.expr, words: set[str]) -> tuple[str, str] | None:
    """The test as written (on one line) and the word of `words` it names, if it names one."""
    text = " ".join(checker.source.segment(checker.range(test)).split())
    word = _names(text, words)
    return None if word is None else (text, word)


def opt_in_place(checker: Checker, node: ast.stmt | ast.expr, qualname: str, local: str) -> tuple[Severity, str] | None:
    """Info and the reason for a third-party package's finding under a test of the feature that
    uses it (feature_test), or under an option the project leaves off (flag_off)."""
    found = feature_test(checker, node, {word for word in (qualname.partition(".")[0].lower(), local.lower()) if word})
    if found is None:
        return flag_off(checker, node)
    return Severity.INFO, (LEFT_EARLY if found[2] else OPT_IN).format(test=found[0], word=found[1])


def opt_in_reference(checker: Checker, ref: Reference) -> tuple[Severity, str] | None:
    """opt_in_place for a reference: the package and the first name of its chain (`amp` in `amp.scale_loss`)."""
    first = ref.node
    while type(first) is ast.Attribute:
        first = first.value
    return opt_in_place(checker, ref.node, ref.qualname, getattr(first, "id", ""))


def import_with_fallback(checker: Checker, stmt: ast.stmt) -> bool:
    """`stmt` is in the body of a `try:` with an `except ImportError:` (or `except Exception:`,
    a bare `except:`) whose body does not raise, or of an `if is_<package>_available():` (or
    `_installed()`), also around a `try:` whose handler raises. Read from the lines, as Python
    reads the blocks: only for the imports the tables name."""
    lines, first, indent = checker.source.lines, stmt.lineno - 1, stmt.col_offset
    if indent == 0:
        return False  # a top-level import: in no block
    opening = _opening(lines, first, indent)
    if opening is not None and AVAILABILITY_TEST.match(opening[1].strip()):
        return True
    if opening is None or TRY_LINE.fullmatch(opening[1].strip()) is None:
        return False
    if _handled(lines, stmt, first, indent_width(opening[1])):
        return True
    around = _opening(lines, opening[0], indent_width(opening[1]))  # `if is_flash_v2_installed(): try: import ...`
    return around is not None and AVAILABILITY_TEST.match(around[1].strip()) is not None


def _opening(lines: list[str], first: int, indent: int) -> tuple[int, str] | None:
    """The nearest code line above line `first` that is less indented than `indent`: the block's head."""
    return next(((i, line) for i, line, _ in _code_lines(lines, range(first - 1, -1, -1))
                 if indent_width(line) < indent), None)


def _handled(lines: list[str], stmt: ast.stmt, first: int, outer: int) -> bool:
    """Whether a handler of the `try:` at indentation `outer` that holds `stmt` catches a missing
    package and goes on without it."""
    packages = _packages(stmt)
    handler = None  # the indentation of the lines below the handler being read
    for _i, line, stripped in _code_lines(lines, range(stmt.end_lineno or first + 1, len(lines))):
        level = indent_width(line)
        if level < outer or (level == outer and not stripped.startswith(("except", "else", "finally"))):
            return False
        if level == outer:
            handler = IMPORT_ERRORS.match(stripped) is not None
            body = stripped.partition(":")[2].partition("#")[0].strip()
            if handler and body:  # `except ImportError: pass` on one line
                return _goes_on(body, packages)
        elif handler:
            return _goes_on(stripped, packages)
    return False


IMPORTED = re.compile(r"(?:from\s+([\w.]+)\s+import|import\s+([\w.]+))\b")


def _packages(stmt: ast.stmt) -> set[str]:
    """The top-level packages an import statement names (none for another statement)."""
    if type(stmt) is ast.Import:
        return {alias.name.partition(".")[0] for alias in stmt.names}
    return {stmt.module.partition(".")[0]} if type(stmt) is ast.ImportFrom and stmt.module and not stmt.level else set()


def _goes_on(handler_line: str, packages: set[str]) -> bool:
    """The handler's first line goes on without the package: it neither raises nor imports the
    same package another way (`except: from flash_attn... import other_name`, which fails alike)."""
    imported = IMPORTED.match(handler_line)
    return not handler_line.startswith("raise") and not (
        imported is not None and (imported.group(1) or imported.group(2)).partition(".")[0] in packages)
