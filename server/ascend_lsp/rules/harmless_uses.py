"""CUDA names used in ways that run fine on an NPU host, each with the reason said in the
message: a copy's `non_blocking=` flag set from a test for CUDA (device_strings.py), `import
torch.cuda` alone, a `torch.cuda` name imported by an environment report, a package imported
under `try:` with a fallback, one used only as a type or in checks only CUDA runs
(import_uses.py), `torch.jit.script` imported only to decorate functions in place, the backend of an mmengine config's `dist_cfg`, the GPU a
TensorFlow run is given; a name setup.py
imports only for functions nothing calls (uncalled_helpers.py). (A class object named only as a type or a key: harmless_calls.py;
ROCm's tests: engine/guards.py.)"""

from __future__ import annotations

import ast
import os
import re

from ..engine.checker import Checker, own_path
from ..engine.model import Severity
from ..engine.guards import NPU_WORDS, name_words, named_for
from ..engine.walk import StringContext, last_name
from ..engine.versions import allows_before
from .call_arguments import assigned_key
from .advice_matching import own_nodes
from .float64_place import imported_for_checks
from .cpp_builds import CPU_BUILD_IMPORT, NPU_BUILD, cpu_build, npu_build
from .harmless_calls import ENV_REPORT, FALLBACK_IMPORT, SCRIPTED_FUNCTION, import_with_fallback, in_environment_report
from .import_uses import CHECK, DECORATOR, TYPE, calls_only, import_uses, never_read
from .statement_facts import innermost_function, statement_facts
from .uncalled_helpers import uncalled_import

# what a copy's flag loses on an NPU host where a CUDA test gives it False: speed, not results
COPY_FLAGS = {"non_blocking": "the copy is made synchronously, which is correct, only not overlapped",
              "pin_memory": "host memory is not pinned, which is correct, only copied more slowly"}
COPY_FLAG = " (It only sets `{flag}=`: on an NPU host {loses}.)"
TRITON_ASCEND = (" (In {part}, named for the NPU: Triton kernels there are written for triton-ascend, which installs "
                 "as `triton`.)")
IMPORT_ALONE = " (It imports the module, which works on any host; its uses are reported where they are.)"
REBOUND_FOR_NPU = (" (The module imports `{name}` again from `{module}` (line {line}), inside a block, where the NPU is "
                   "there or chosen: this import is what other devices keep.)")


def rebound_for_npu(checker: Checker, stmt: ast.Import | ast.ImportFrom, alias: ast.alias, qualname: str) -> str | None:
    """REBOUND_FOR_NPU where the module imports the name `from torch.cuda import synchronize` binds
    again from torch.npu or torch_npu, indented (`if envs._is_npu(): from torch.npu import synchronize`):
    the code chooses per device, so the finding's fix is only shown (rewriting this import would take
    the other devices' default away)."""
    if not qualname.startswith("torch.cuda") or type(stmt) is not ast.ImportFrom:
        return None
    name = alias.asname or alias.name
    for found in checker.text_fact("npu-imports", _npu_imports):
        if found[0] == name:
            return REBOUND_FOR_NPU.format(name=name, module=found[1], line=found[2])
    return None


# an indented `from torch.npu import a, b as c` (or from torch_npu...), on one line
NPU_IMPORT = re.compile(r"^[ \t]+from[ \t]+((?:torch\.npu|torch_npu)\b[\w.]*)[ \t]+import[ \t]+([\w \t,]+?)[ \t]*(?:#.*)?$",
                        re.MULTILINE)


def _npu_imports(checker: Checker) -> list[tuple[str, str, int]]:
    """(the name bound, the module, the 1-based line) of each indented import from torch.npu or torch_npu."""
    text = checker.source.text
    found = []
    for match in NPU_IMPORT.finditer(text):
        line = text.count("\n", 0, match.start()) + 1
        for part in match.group(2).split(","):
            words = part.split()
            if words:
                found.append((words[-1], match.group(1), line))
    return found


def import_place(checker: Checker, stmt: ast.Import | ast.ImportFrom, alias: ast.alias,
                 qualname: str) -> tuple[Severity, str] | None:
    """A name setup.py imports only for functions nothing calls (uncalled_helpers.py); `import
    torch.cuda` binds `torch`, whose CUDA uses have findings of their own; a `torch.cuda`
    name an environment report imports (`from torch.cuda import device_count` in collect_env.py):
    its uses there carry no finding of their own, and only describe the host; a package other than
    torch imported with a fallback where it is missing (`try: import pynvml` ... `except
    Exception:` going on without it)."""
    if (uncalled := uncalled_import(checker, alias)) is not None:
        return uncalled
    if isinstance(stmt, ast.Import) and alias.asname is None and qualname.startswith("torch."):
        return Severity.INFO, IMPORT_ALONE
    if type(stmt) is ast.ImportFrom and stmt.module == "torch" and (checks := imported_for_checks(checker, stmt, alias)):
        return checks
    if qualname.startswith("torch.cuda") and in_environment_report(checker, statement_facts(checker), stmt):
        return Severity.INFO, ENV_REPORT
    if qualname.partition(".")[0] == "triton" and checker.path \
            and (part := named_for(own_path(checker.path, checker.project), NPU_WORDS, files=True, unless=None)):
        return Severity.INFO, TRITON_ASCEND.format(part=part)
    if qualname.startswith("torch.utils.cpp_extension") and npu_build(checker, stmt):
        return Severity.INFO, NPU_BUILD
    if qualname == "torch.utils.cpp_extension.load" and calls_only(checker, alias, "cpu-build", cpu_build):
        return Severity.INFO, CPU_BUILD_IMPORT
    if not qualname.startswith("torch") and import_with_fallback(checker, stmt):
        return Severity.INFO, FALLBACK_IMPORT
    if qualname.startswith("torch.cuda") and type(stmt) is ast.ImportFrom and unused_import(checker, stmt, alias):
        return Severity.INFO, UNUSED_IMPORT
    if qualname.startswith("torch.cuda") and never_read(checker, stmt, alias):
        return Severity.INFO, NEVER_READ
    uses = import_uses(checker, stmt, alias) if qualname.startswith(("torch.cuda", "torch.jit.script")) else ()
    if uses and qualname.startswith("torch.cuda") and set(uses) <= {TYPE, CHECK}:
        return Severity.INFO, TYPES_AND_CHECKS
    if uses and qualname.startswith("torch.jit.script") and set(uses) == {DECORATOR}:
        return Severity.INFO, SCRIPTED_FUNCTION
    return None


TYPES_AND_CHECKS = (" (Used here only as a type (a hint, an isinstance() test) or in the tests of checks only CUDA "
                    "runs (`if cuda.is_available() and not x.is_cuda: raise ...`): on an NPU host none of them runs "
                    "anything, and importing it needs no CUDA.)")


UNUSED_IMPORT = (" (Imported and not used in its function, as in a check of the torch release (`try: from torch.cuda "
                 "import amp` ... `except ImportError: raise`): importing it needs no CUDA, so on an NPU host it does "
                 "nothing.)")


NEVER_READ = (" (Imported and never used in this module: importing it needs no CUDA, so on an NPU host it does "
              "nothing. A module that imports it from here names this module, not CUDA: its use is what would change.)")


def unused_import(checker: Checker, stmt: ast.ImportFrom, alias: ast.alias) -> bool:
    """The name `from torch.cuda... import name` binds in a function is not in the rest of the
    function's text. Read as words of the text, so a use through a string (`locals()["amp"]`),
    `global amp` or a comment keeps the finding. At module level: import_uses.never_read."""
    function = innermost_function(statement_facts(checker), stmt)
    if function is None or alias.name == "*":
        return False
    lines = checker.source.lines
    word = re.compile(rf"\b{re.escape(alias.asname or alias.name)}\b")
    return not any(word.search(lines[i]) for i in range(function.lineno - 1, function.end_lineno)  # type: ignore[attr-defined]
                   if not stmt.lineno - 1 <= i < stmt.end_lineno)


# the first mmengine whose `pytorch` launcher initialises with hccl where an NPU is available
# (open-mmlab/mmengine tags v0.1.0 to v0.10.7 read: v0.3.0 on; v0.10.7 mmengine/dist/utils.py:113-120)
MMENGINE_HCCL = "0.3.0"
DIST_CFG = (" (The backend of an mmengine config's `dist_cfg` ({tie}): mmengine's `pytorch` launcher (torchrun, "
            "`dist_train.sh`) initialises with `hccl` wherever an NPU is available and does not read it (mmengine "
            "0.10.7 mmengine/dist/utils.py:113-120, the same since 0.3.0); its `slurm` and `mpi` launchers pass it on, "
            "but call `torch.cuda.set_device` first, which raises without CUDA.)")


def backend_place(checker: Checker, node: ast.AST, context: StringContext) -> tuple[Severity, str] | None:
    """Info and the reason for `dist_cfg=dict(backend="nccl")` (or `dist_cfg = dict(...)`) in a file
    that a project pinning mmengine 0.3.0 or later holds, or that imports mmengine where the project
    pins none: only mmengine's launchers read it (`Runner.setup_env` hands it to `init_dist`)."""
    holder = context.call
    if context.kind != "arg" or context.keyword != "backend" or holder is None or last_name(holder.func) != "dict":
        return None
    events = checker.events
    if not any(kw.arg == "dist_cfg" and kw.value is holder for call, _scope in events.calls for kw in call.keywords) \
            and not any(stmt.value is holder and any(_names_dist_cfg(t) for t in _targets(stmt))
                        for stmt, _scope in events.assigns):
        return None
    tie = _mmengine_tie(checker)
    return (Severity.INFO, DIST_CFG.format(tie=tie)) if tie else None


def _targets(stmt: ast.Assign | ast.AnnAssign) -> list[ast.expr]:
    return stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]


def _names_dist_cfg(target: ast.expr) -> bool:
    return (target.id if type(target) is ast.Name else assigned_key(target)) == "dist_cfg"


def _mmengine_tie(checker: Checker) -> str | None:
    """What ties the file to an mmengine whose launcher picks hccl: the project's pin (none
    that admits a release before MMENGINE_HCCL), else an import of mmengine; None otherwise."""
    project = checker.project
    pin = project.pin("mmengine") if project is not None else None
    if pin is not None:
        if allows_before(pin, MMENGINE_HCCL):
            return None
        path, _line = project.pin_place("mmengine")
        return f"mmengine pinned `{pin}` in {os.path.relpath(path, project.root)}"
    return "the file imports mmengine" if checker.module.imports_module("mmengine") else None


SUBPROCESS_CALLS = frozenset({"run", "Popen", "call", "check_call", "check_output"})
TENSORFLOW = (" (It sets the GPU of {what}: TensorFlow has no NPU, and torch_npu reads `ASCEND_RT_VISIBLE_DEVICES`, "
              "not this, so on an NPU host it changes nothing; renaming it gives TensorFlow no NPU.)")


def env_place(checker: Checker, node: ast.AST, name: str) -> tuple[Severity, str] | None:
    """Info and the reason for `CUDA_VISIBLE_DEVICES` set (`env[...] = ...`) in a function that
    hands that environment to a subprocess whose call names TensorFlow (`env={**env,
    **self.tf_env}`, a `tensorflow` script), or that runs TensorFlow itself and names no torch."""
    if name != "CUDA_VISIBLE_DEVICES":
        return None
    store = next((t for stmt, _scope in checker.events.assigns if type(stmt) is ast.Assign for t in stmt.targets
                  if type(t) is ast.Subscript and t.slice is node), None)
    function = innermost_function(statement_facts(checker), node)
    if store is None or not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    holder = store.value
    names = [n for n in own_nodes(function.body) if isinstance(n, (ast.Name, ast.Attribute))]
    for call in (n for n in own_nodes(function.body) if type(n) is ast.Call and last_name(n.func) in SUBPROCESS_CALLS):
        env = next((kw.value for kw in call.keywords if kw.arg == "env"), None)
        passed = env is not None and any(type(n) is ast.Name and type(holder) is ast.Name and n.id == holder.id
                                         for n in ast.walk(env))
        if (passed or (env is None and last_name(holder) == "environ")) and _names_tensorflow(checker, call):
            return Severity.INFO, TENSORFLOW.format(what="a TensorFlow subprocess, through the environment it is given")
    bound = {_binding(checker, n) for n in names} | {alias.name.partition(".")[0] for n in own_nodes(function.body)
                                                     if isinstance(n, (ast.Import, ast.ImportFrom))
                                                     for alias in n.names}
    if "tensorflow" in bound and "torch" not in bound:
        return Severity.INFO, TENSORFLOW.format(what="the TensorFlow this function runs, which uses no torch")
    return None


def _binding(checker: Checker, node: ast.Name | ast.Attribute) -> str:
    """The top package a name or chain's first name is bound to by the module's imports, or ""."""
    while type(node) is ast.Attribute:
        node = node.value  # type: ignore[assignment]
    bound = checker.module.scope.lookup(node.id) if type(node) is ast.Name else None
    return (bound or "").partition(".")[0]


def _names_tensorflow(checker: Checker, call: ast.Call) -> bool:
    """The call's arguments name TensorFlow: a name with the word `tf` or `tensorflow`
    (`self.tf_env`), one bound to tensorflow, or a string that names it."""
    for part in (*call.args, *(kw.value for kw in call.keywords)):
        for n in ast.walk(part):
            if isinstance(n, (ast.Name, ast.Attribute)):
                word = n.id if type(n) is ast.Name else n.attr  # type: ignore[union-attr]
                if {"tf", "tensorflow"} & set(name_words(word)) or _binding(checker, n) == "tensorflow":
                    return True
            elif type(n) is ast.Constant and type(n.value) is str and "tensorflow" in n.value.lower():
                return True
    return False
