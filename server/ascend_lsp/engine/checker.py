"""Runs the registered rule handlers over one statement's events and collects findings."""

from __future__ import annotations

import ast
import os
import traceback
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, TypeVar

from .config import Settings
from .guards import (ENV_REPORT_NAME, FP8_WORDS, KERNEL_FOLDER_WORDS, KERNEL_WORDS, NPU_WORDS, OTHER_DEVICE_WORDS,
                     TENSORRT_WORDS, GuardFacts, backend_module, named_for, on_by_default,
                     part_words, transfer_to_npu_imports, written)
from .model import Applicability, Edit, Finding, Fix, Range, Related, Severity
from .registry import STRING_CONTEXTS, RuleSet
from ..knowledge.api_tables import Tables
from ..knowledge.chips import load_chips
from .test_suites import SuiteFile, is_test_file
from .text import LINE_BREAK, SourceText
from .walk import Events, ModuleContext, Scope

if TYPE_CHECKING:
    from ..project import ProjectContext
    from .shell_script import ShellScript


@dataclass(slots=True)
class Reference:
    """A name or attribute chain that resolves, through the file's imports, to an API."""

    node: ast.expr  # the Name or the outermost Attribute of the chain
    qualname: str
    binding: str  # what the chain's first name is bound to by its import
    call: ast.Call | ast.ClassDef | None  # the call whose callee this is, or the class it is a base of
    scope: Scope
    type_only: bool = False  # named in a type hint or isinstance()/issubclass(): not run


_Fact = TypeVar("_Fact")  # what Checker.text_fact reads
OFF_NPU = " (On a branch that does not run on the NPU: the code beside it handles the NPU.)"
CUDA_MODULE = " (In {module}, the CUDA module of a per-backend scheme: it runs only where CUDA was chosen.)"
ENGINE_FOLDER = (" (In {folder}, named for TensorRT, NVIDIA's inference engine: what is there serves a model only "
                 "where that engine was chosen, on NVIDIA GPUs.)")
FP8_PART = (" (In {part}, named for FP8: it runs only where FP8 is chosen, and {chip} has no FP8, so on it the choice is "
            "what changes: keep FP8 off.)")
OTHER_BACKEND = " (For another backend (ROCm, XPU, MPS, HPU, ...): it does not run on the NPU.)"
GPU_VARIANT = (" (The GPU's module of a pair written per device: {twin} is the NPU's, so this one runs only where the "
               "GPU's is chosen.)")
OPT_IN_MODULE = (" (In a module the project imports only under `{test}` ({site}), and {option}: it runs only where the "
                 "user turns that on; on an NPU host leave it off, or change this first.)")
OTHER_DEVICE_PART = " (In {part}, named for another device ({word}): it does not run on the NPU.)"
KERNEL_PART = (" (In {part}, named for one device's kernels or extensions: such code is replaced as a whole where the "
               "project chooses it (a torch path, torch_npu's fused operators, triton-ascend for Triton kernels), not "
               "line by line.)")
# `torch.cuda.get_device_capability()` and `get_device_properties()` under a CUDA test ask about the CUDA
# device the test found: like a CUDA name, the test is what changes (held-out projects: 2 right in 25)
CUDA_QUERIES = frozenset({"NPU402"})
ENV_REPORT = (" (In an environment report: it describes the host, and on an NPU host reports no GPU; add the "
              "NPU's facts beside it if the report should show them.)")
WITHOUT_TRANSFER = (" (No file of the project imports `transfer_to_npu`, which this is about: with `import torch_npu` "
                    "alone it does not happen. Where you migrate with `transfer_to_npu`, it does.)")
# the test as written, not its line: findings keep their text when lines move above them
GUARDED = (" (Runs only when `{test}` passes: on an NPU host not before that CUDA test is changed, and then this "
           "needs the change too.)")


def own_path(path: str, project: ProjectContext | None) -> str:
    """The file's path in its project (the folders above the root are not the project's: a checkout
    under `~/trt/` is not TensorRT's); without a project, its name alone (the folder it is in may be a
    user's, named for the port: `~/ascend-port/`, `cuda_port/`)."""
    return os.path.relpath(path, project.root) if project is not None else os.path.basename(path)


def off_npu_file(path: str | None, project: ProjectContext | None, settings: Settings, text: str) -> str:
    """Why the whole file's findings are info ("": they keep their severity). It runs only where the
    NPU is not used: the CUDA
    module of a per-backend scheme (`accelerators/cuda.py`), a file named for TensorRT or in a folder so
    named (`tools/trt.py`, `deploy/tensorrt/serve.py`), the GPU's module of a pair written per device
    (`modeling_x_gpu.py` beside `modeling_x_npu.py`), one named for another device (`mlu_group_gemm.py`,
    `ops/xpu/`); it is one device's kernels, replaced as a whole where the project chooses them, not line
    by line: a Python module so named or in a folder so named (`gguf_triton.py`, `ops/kernels/`, `csrc/`),
    not for the NPU's; or it is a Python module named for FP8 (`quantization/fp8.py`) where
    the configured chip has no FP8: not a config, a launch script or a script run as `__main__`
    named so, which is the choice of FP8 itself; or the project imports it only under a test of an option
    it leaves off (opt_in_modules.py). The folders read are the project's own (a checkout
    under `~/trt/` is not TensorRT's); without a project, the file's own name alone."""
    if not path:
        return ""
    scheme = backend_module(path)
    if scheme:
        return CUDA_MODULE.format(module=scheme)
    twin = project.gpu_variant(path) if project is not None else None
    if twin:
        return GPU_VARIANT.format(twin=twin)
    opt_in = project.opt_in(path) if project is not None and path.endswith(".py") else None
    if opt_in is not None:
        return OPT_IN_MODULE.format(test=opt_in.test, site=opt_in.site, option=opt_in.option)
    own = own_path(path, project)
    folder = named_for(own, TENSORRT_WORDS, files=True)
    if folder:
        return ENGINE_FOLDER.format(folder=folder)
    other = named_for(own, OTHER_DEVICE_WORDS, files=True)
    if other:  # `moe/mlu_group_gemm.py`, `ops/xpu/`
        word = next(w for w in OTHER_DEVICE_WORDS if w in part_words(other))
        return OTHER_DEVICE_PART.format(part=other, word=OTHER_DEVICE_WORDS[word])
    if not own.endswith(".py"):
        return ""
    kernels = named_for(own, KERNEL_FOLDER_WORDS) or named_for(os.path.basename(own), KERNEL_WORDS, files=True)
    if kernels and not named_for(own, NPU_WORDS, files=True, unless=None):
        return KERNEL_PART.format(part=kernels)
    part = named_for(own, FP8_WORDS, files=True)
    if part is None or "__main__" in text or "fp8" not in load_chips().chips[settings.chip].lacks:
        return ""
    return FP8_PART.format(part=part, chip=settings.chip)


def env_report(path: str | None) -> str:
    """ENV_REPORT for a Python module named for a report of the host (`collect_env.py`, `sys_info.py`), whose
    CUDA names (NPU1xx, NPU402) are then info; else "". By the file's own name: a folder named for the NPU or
    a device may be where a user ports code (`npu_port/train.py`), and its findings are the port's work."""
    if not path or not path.endswith(".py"):
        return ""
    return ENV_REPORT if ENV_REPORT_NAME.search(os.path.basename(path)[:-3].lower()) else ""


def shown_only(fixes: tuple[Fix, ...]) -> tuple[Fix, ...]:
    """The fixes, shown but never applied (a finding lowered where rewriting would break the code where it runs)."""
    return tuple(replace(f, applicability=Applicability.DISPLAY) for f in fixes)


def _within(rng: Range, regions: list[Range]) -> bool:
    return any((r.start_line, r.start_col) <= (rng.start_line, rng.start_col)
               and (rng.end_line, rng.end_col) <= (r.end_line, r.end_col) for r in regions)


class Checker:
    """The view of a file that rule handlers get, and where they report."""

    def __init__(self, source: SourceText, module: ModuleContext, settings: Settings, tables: Tables | None,
                 path: str | None, rules: RuleSet, project: ProjectContext | None = None) -> None:
        self.source = source
        self.module = module
        self.settings = settings
        self.tables = tables
        self.path = path
        # the project the file belongs to (its operators, its pinned versions); None: an
        # unsaved document, or an adapter that names none
        self.project = project
        self.rule_set = rules
        self.rules = rules.rules
        self.handlers = handlers = rules.handlers(settings)
        self.gates = gates = word_gates(handlers, tables)
        self.by_attribute, self.any_attribute = name_dispatch(gates.attribute, tables)
        # what a name or chain that no import binds must end with to reach a handler (the
        # words among them): the walk leaves the others out; None when any attribute may
        self.attribute_names: frozenset[str] | None = None if self.any_attribute else frozenset(self.by_attribute)
        self.by_reference, self.any_reference = name_dispatch(gates.reference, tables)
        self.reads_names = bool(self.by_attribute or self.any_attribute or self.by_reference or self.any_reference
                                or handlers["base"])
        # the gate words the statement being run names (WordGates), with the lines of each
        self.seen: dict[str, list[int]] = {}
        self.active = rules.codes(settings)
        self.findings: list[Finding] = []
        self.errors: list[str] = []  # rule crashes, for the adapter's log
        self.facts: dict[str, Range] = {}  # what the current statement showed, for "module" handlers
        self.references: list[Reference] | None = None  # every resolved reference, when asked for
        self.in_type_only = False  # while handling a reference that is only a type (a hint, isinstance())
        # per-object facts handlers derive once, not once per element (id → (object, fact)):
        # the strings of a 10,000-element list each ask about the same list. A second fact
        # about the same object is keyed (purpose, id).
        self.derived: dict[object, tuple[object, object]] = {}
        # facts about the whole text (key → (how it is read, its value)), read once: an edit
        # analysed alone reads each again and is analysed whole when one changed (text_fact)
        self.text_facts: dict[str, tuple[Callable[[Checker], object], object]] = {}
        # the current statement's backend branches (engine/guards.Branches): never / only on the NPU,
        # another backend's, and (branch, its test) of the CUDA tests of chains without an NPU branch
        self.off_npu: list[Range] = []
        self.off_why: list[tuple[Range, str]] = []  # those off the NPU for a reason of their own (Branches.why)
        self.on_npu: list[Range] = []
        self.other_backend: list[Range] = []
        self.guarded: list[tuple[Range, Range]] = []
        self.written: dict[Range, str] = {}  # the text of a CUDA test the code writes negated (guards.written)
        # the statement's findings lowered for a CUDA test: (finding, the test, its message without the reason)
        self.under_guard: list[tuple[Finding, Range, str]] = []
        # the statement's Branches, their ranges made at its first NPU1xx-4xx finding (most have none)
        self.branches: list = []
        self.ranged = False
        self.off_npu_file = off_npu_file(path, project, settings, source.text)
        # a report of the host, by the file's name (`collect_env.py`): its CUDA names are info
        self.env_report = env_report(path)
        self.enclosing: list = []  # the branches of the top-level backend class being walked (guards.class_branches)
        # why the top-level class member being walked runs only where CUDA was chosen (a `cuda()`
        # method beside `npu()`, a class beside its NPU variant: engine/backend_members.py); "" if not
        self.cuda_member = ""
        # the module function being walked (its name, its `def`'s 0-based line, where its body
        # begins): the NPU1xx findings in its body follow the CUDA tests every call of it is under,
        # where the project's calls show that (call_sites.py; asked at its first such finding)
        self.top_function: tuple[str, int, tuple[int, int]] | None = None
        self._under_tests: tuple[object, tuple[str, tuple[Related, ...]] | None] = (None, None)
        self.events = Events()  # the statement being run: for handlers that read more of it than their event
        # whether the text can test for a backend (guards.may_test_backend), with what the whole text
        # tells of its tests; once asked
        self.backend_tests: GuardFacts | bool | None = None
        # a test file's NPU findings are info (engine/test_suites.py); what its top level says
        # about CUDA is read at its first finding
        self.test_file = is_test_file(path, project.root if project is not None else settings.root)
        self.suite: SuiteFile | None = None

    @property
    def imports_transfer_to_npu(self) -> bool:
        """Whether the project imports `transfer_to_npu` in a Python file (without a project: this file)."""
        if self.project is not None:
            return self.project.imports_transfer_to_npu
        return self.text_fact("transfer-to-npu", lambda c: bool(transfer_to_npu_imports(c.source.text)))

    def named(self, node: ast.stmt | ast.expr, *words: str) -> bool:
        """Whether the statement being run names one of `words` (gate words of the handler
        asking: WordGates) on `node`'s lines."""
        first, last = node.lineno, node.end_lineno
        for word in words:
            for line in self.seen.get(word, ()):
                if first <= line <= last:
                    return True
        return False

    def text_fact(self, key: str, read: Callable[[Checker], _Fact]) -> _Fact:
        """A fact about the whole current text, `read` once per analysis. The findings an
        incremental analysis keeps were made with the previous text's facts: it reads every
        one of them again first, and gives way to a whole analysis when one changed."""
        known = self.text_facts.get(key)
        if known is None:
            known = self.text_facts[key] = (read, read(self))
        return known[1]  # type: ignore[return-value]  # the key names one fact, read by one function

    def saw(self, word: str, node: ast.expr) -> None:
        self.seen.setdefault(word, []).append(node.lineno)

    def note(self, fact: str, where: ast.AST | Range) -> None:
        """Record a fact about the file (first place wins) for the "module" handlers."""
        if fact not in self.facts:
            self.facts[fact] = where if isinstance(where, Range) else self.source.range_of(where)

    # --- reporting ---------------------------------------------------------------------
    def range(self, node: ast.AST) -> Range:
        return self.source.range_of(node)

    def report(self, code: str, where: ast.AST | Range, message: str | None = None, fixes: tuple[Fix, ...] = (),
               *, origin: str = "", deprecated: bool = False, extra: dict | None = None,
               severity: Severity | None = None, related: tuple[Related, ...] = (), **fmt) -> None:
        if code not in self.active:
            return
        rule = self.rules[code]
        if self.in_type_only and not rule.on_type_only:
            return
        rng = where if isinstance(where, Range) else self.source.range_of(where)
        guard = None  # (the CUDA test this finding is lowered for, its message without the reason)
        # (a launch script's or Dockerfile's arms come as off_npu/on_npu ranges, packaging_analysis.py)
        # (a file off the NPU as a whole: its configs' findings too, a compose file's GPU reservation)
        if (self.branches or self.off_npu_file or self.cuda_member or self.off_npu or self.on_npu) \
                and code[:3] == "NPU" and code[3:4] in ("123458" if self.off_npu_file else "12345"):
            if self.branches and not self.ranged:
                self._range_branches()
            text = message if message is not None else rule.message.format(**fmt)
            lowered = max(severity or rule.severity, Severity.INFO)
            test = next((test for branch, test in self.guarded if _within(rng, [branch])), None)
            if self.off_npu_file or self.cuda_member or _within(rng, self.off_npu) or _within(rng, self.other_backend):
                severity = lowered
                message = text + (self.off_npu_file or self.cuda_member
                                  or (self._off_reason(rng) if _within(rng, self.off_npu) else OTHER_BACKEND))
                # shown, never applied: rewriting the CUDA path to the NPU would break it where it runs
                fixes = shown_only(fixes)
            elif code == "NPU109" and _within(rng, self.on_npu):
                return  # the branch's test (`is_torch_npu_available()`, a device of type "npu") loaded torch_npu
            elif test is not None and (code[3] == "1" or code in CUDA_QUERIES) and lowered != (severity or rule.severity):
                # the test is the finding to act on: where it has one, this is listed with it
                # (_relate_guarded). Only CUDA names (NPU1xx) and queries of the CUDA device, ported with the
                # test: what is unsupported or differs on the NPU (NPU2xx-4xx) fails there once the test passes
                severity, guard = lowered, (test, text)
                message = text + GUARDED.format(test=self._test_text(test))
        if self.env_report and guard is None and code[:3] == "NPU" and (code[3] == "1" or code in CUDA_QUERIES) \
                and (severity or rule.severity) < Severity.INFO:
            severity = Severity.INFO
            message = (message if message is not None else rule.message.format(**fmt)) + self.env_report
            fixes = shown_only(fixes)
        if rule.transfer_only and (severity or rule.severity) < Severity.INFO and not self.imports_transfer_to_npu:
            severity = Severity.INFO
            message = (message if message is not None else rule.message.format(**fmt)) + WITHOUT_TRANSFER
        function = self.top_function
        if function is not None and guard is None and code[:4] == "NPU1" and (severity or rule.severity) < Severity.INFO \
                and (rng.start_line, rng.start_col) >= function[2] and self.project is not None and self.path:
            if self._under_tests[0] != function:
                self._under_tests = (function, self.project.calls.under_tests(self.path, *function[:2]))
            called = self._under_tests[1]
            if called is not None:  # like the code under a test (above), ported with it
                severity, related = Severity.INFO, related + called[1]
                message = (message if message is not None else rule.message.format(**fmt)) + called[0]
        if self.test_file and code[:3] == "NPU" and (severity or rule.severity) < Severity.INFO:
            if self.suite is None:
                self.suite = SuiteFile(self.source)
            reason = self.suite.reason(rng, self.events, self.settings.tests)
            if reason is not None:
                severity = Severity.INFO
                message = (message if message is not None else rule.message.format(**fmt)) + reason
                # shown, never applied: the suite runs where its authors run it, CUDA's tests on CUDA
                fixes = shown_only(fixes)
        finding = Finding(
            code=code,
            range=rng,
            message=message if message is not None else rule.message.format(**fmt),
            severity=self.settings.severity_for(code, severity or rule.severity),
            fixes=fixes,
            deprecated=deprecated,
            origin=origin,
            extra=extra or {},
            related=related,
        )
        if guard is not None:
            self.under_guard.append((finding, *guard))
        self.findings.append(finding)

    # --- fixes -------------------------------------------------------------------------
    def replace(self, where: ast.AST | Range, text: str) -> Edit:
        rng = where if isinstance(where, Range) else self.source.range_of(where)
        return Edit(rng, text)

    def require_module(self, module: str) -> Edit | None:
        """The edit that imports `module` (for its side effects), unless the file does."""
        return None if self.module.imports_module(module) else self.below_imports(f"import {module}")

    def require_name(self, module: str) -> Edit | None:
        """The edit that binds the name `module` to that module, unless it is bound."""
        return None if self.module.scope.imports.get(module) == module else self.below_imports(f"import {module}")

    def below_imports(self, text: str) -> Edit:
        """The edit that inserts the line `text` below the file's last top-level import (so
        `import torch_npu` follows `import torch`), ended as that line is (a CRLF or CR file
        stays one), or as the file's first line where it ends the file."""
        line, lines = self.module.import_line, self.source.lines
        above = lines[line - 1] if 0 < line <= len(lines) else ""
        found = LINE_BREAK.search(above) or LINE_BREAK.search(self.source.text)
        ending = found.group() if found else "\n"
        if line >= len(lines):  # the last import ends the file, with no line break
            end = len(self.source.line(line - 1))
            return Edit(Range(line - 1, end, line - 1, end), ending + text)
        return Edit(Range(line, 0, line, 0), text + ending)

    def fix(self, title: str, applicability: Applicability, *edits: Edit | None) -> Fix:
        return Fix(title, tuple(e for e in edits if e is not None), applicability)

    # --- running -----------------------------------------------------------------------
    def run(self, events: Events) -> None:
        backends = events.backends + self.enclosing if self.enclosing else events.backends
        if self.seen:
            self.seen = {}
        self.events = events
        if not backends:  # most statements: no branch to range
            self._run(events)
            return
        self.branches, self.ranged = backends, False
        before = len(self.findings)
        try:
            self._run(events)
            if self.under_guard:
                self._relate_guarded(before)
        finally:
            if self.ranged:
                self.off_npu, self.off_why, self.on_npu, self.other_backend, self.guarded = [], [], [], [], []
                self.written = {}
            self.branches, self.ranged, self.under_guard = [], False, []

    def _relate_guarded(self, before: int) -> None:
        """Where a CUDA test has a finding of its own (`torch.cuda.is_available` in `if
        torch.cuda.is_available():`), the findings lowered for it are listed with it as related
        locations, and not reported again on their own: changing the test is the first step,
        and the code inside is reported with its own fixes once the test runs on the NPU. The
        test's most severe finding (the first of equals) takes them. A test without a finding
        (`if use_cuda:`) leaves them where they are, each saying why it is lowered."""
        statement = self.findings[before:]
        lowered = {id(finding) for finding, _, _ in self.under_guard}
        listed: set[int] = set()
        for test in dict.fromkeys(test for _, test, _ in self.under_guard):
            on_test = [f for f in statement if id(f) not in lowered and _within(f.range, [test])]
            if not on_test:
                continue
            anchor = min(on_test, key=lambda f: (f.severity, f.range))
            inside = sorted(((f, text) for f, guard, text in self.under_guard if guard == test),
                            key=lambda pair: pair[0].range)
            anchor.related += tuple(Related(f.range, f"inside the guard: {f.code} {text}") for f, text in inside)
            listed.update(id(f) for f, _ in inside)
        if listed:
            self.findings[before:] = [f for f in statement if id(f) not in listed]

    def _range_branches(self) -> None:
        backends = self.branches
        self.off_npu = [self._branch(b) for found in backends for b in found.never]
        self.off_why = [(self._branch(b), found.why) for found in backends if found.why for b in found.never]
        self.on_npu = [self._branch(b) for found in backends for b in found.only]
        self.other_backend = [self._branch(b) for found in backends for b in found.other]
        self.guarded = [(self._branch(b), self.range(test)) for found in backends for test, b in found.guarded
                        if not on_by_default(test, self.events.functions)]
        self.written = {self.range(test): text for found in backends for test, _ in found.guarded
                        if (text := written(test)) is not None}
        self.ranged = True

    def _off_reason(self, rng: Range) -> str:
        return next((why for branch, why in self.off_why if _within(rng, [branch])), OFF_NPU)

    def _test_text(self, test: Range) -> str:
        text = self.written.get(test) or " ".join(self.source.segment(test).split())
        return text if len(text) <= 60 else text[:57] + "..."

    def _branch(self, branch: ast.AST | list[ast.stmt]) -> Range:
        if not isinstance(branch, list):
            return self.source.range_of(branch)
        first, last = self.source.range_of(branch[0]), self.source.range_of(branch[-1])
        return Range(first.start_line, first.start_col, last.end_line, last.end_col)

    def _run(self, events: Events) -> None:
        handlers = self.handlers
        if events.imports and handlers["import"]:
            for stmt, alias, qualname, _scope in events.imports:
                self._call(handlers["import"], stmt, alias, qualname)
        if events.names and (self.reads_names or self.references is not None):
            by_attribute, any_attribute = self.by_attribute, self.any_attribute
            by_reference, any_reference = self.by_reference, self.any_reference
            words, bases = self.gates.words, handlers["base"]
            for node, root, attrs, scope, call, type_only in events.names:
                if root is None or root.id not in scope.bound or (binding := scope.lookup(root.id)) is None:
                    if attrs:
                        on_attribute = by_attribute.get(attrs[-1], any_attribute)
                        if on_attribute:
                            self._call(on_attribute, node, attrs[-1], call)
                    elif root.id in words:  # a local `softmax(x)`: the names of the dispatch are seen there
                        self.saw(root.id, root)
                    continue
                qualname = binding + "." + ".".join(attrs) if attrs else binding
                ref = Reference(node, qualname, binding, call, scope, type_only)
                if self.references is not None:
                    self.references.append(ref)
                on_reference = by_reference.get(attrs[-1] if attrs else binding.rpartition(".")[2], any_reference)
                if on_reference:
                    self.in_type_only = type_only
                    self._call(on_reference, ref)
                    self.in_type_only = False
                if bases and type(call) is ast.ClassDef:
                    self._call(bases, ref)
        if events.assigns or events.functions or events.loops:
            handlers = self.gates.lists(self.seen) if self.seen else self.gates.quiet
        if events.calls and handlers["call"]:
            for call, scope in events.calls:
                self._call(handlers["call"], call, self.qualname(call.func, scope))
        if events.strings and handlers["string"]:
            by_context = context_dispatch(handlers["string"])
            for node, value, context in events.strings:
                on_string = by_context[context.kind]
                if on_string:
                    self._call(on_string, node, value, context)
        if events.assigns and handlers["assign"]:
            by_value, any_value = value_dispatch(handlers["assign"])
            for node, scope in events.assigns:
                on_assign = by_value.get(type(node.value), any_value)
                if on_assign:
                    self._call(on_assign, node, scope)
        if events.functions and handlers["function"]:
            by_function, any_function = self.gates.function_dispatch(handlers["function"])
            for func, scope in events.functions:
                on_function = by_function.get(func.name, any_function)
                if on_function:
                    self._call(on_function, func, scope)
        if events.loops and handlers["loop"]:
            self._each(handlers["loop"], events.loops)

    def run_module(self, facts: dict[str, Range]) -> None:
        self._call(self.handlers["module"], facts)

    def run_packaging(self, items: list) -> None:
        """A packaging document's items (engine/packaging.py), each beside all of them."""
        for item in items:
            self._call(self.handlers["packaging"], item, items)

    def run_launch(self, script: ShellScript) -> None:
        """A launch script's variable settings and commands (engine/shell_script.py), each beside the script."""
        for found in (*script.assignments, *script.commands):
            self._call(self.handlers["launch"], found, script)

    def qualname(self, node: ast.expr, scope: Scope) -> str | None:
        attrs = []
        while type(node) is ast.Attribute:
            attrs.append(node.attr)
            node = node.value
        if type(node) is not ast.Name:
            return None
        binding = scope.lookup(node.id)
        if binding is None:
            return None
        return ".".join((binding, *reversed(attrs)))

    def _each(self, handlers, items: Sequence[tuple]) -> None:
        """Call the handlers with each of `items` (their arguments after the checker)."""
        for args in items:
            for func in handlers:
                try:
                    func(self, *args)
                except Exception as exc:  # a broken rule must not take the others down, nor go unnoticed
                    self.errors.append(rule_failure(func, args[0], exc))

    def _call(self, handlers, *args) -> None:
        """Call the handlers with `args` (one event: _each without a list to hold it)."""
        for func in handlers:
            try:
                func(self, *args)
            except Exception as exc:  # as in _each
                self.errors.append(rule_failure(func, args[0], exc))


_BUILT: dict[tuple[object, int, int], tuple[object, Tables | None, Any]] = {}


def _per_handlers(purpose: object, handlers: object, tables: Tables | None, build: Callable[[], Any]) -> Any:
    """`build()`, once per handler collection and tables (kept while both are the same
    objects; bounded, for a server whose settings change)."""
    key = (purpose, id(handlers), id(tables))
    known = _BUILT.get(key)
    if known is not None and known[0] is handlers and known[1] is tables:
        return known[2]
    if len(_BUILT) > 128:
        _BUILT.clear()
    value = build()
    _BUILT[key] = (handlers, tables, value)
    return value


def _declared(func: Callable, attribute: str, tables: Tables | None) -> Collection[str] | None:
    """A handler's `names` or `words` (registry.handles): a collection, or a function of
    the tables giving one; a table rule without tables reads nothing."""
    value = getattr(func, attribute, None)
    if callable(value):
        return value(tables) if tables is not None else ()
    return value


def name_dispatch(handlers: list[Callable], tables: Tables | None) -> tuple[dict[str, tuple], tuple]:
    """(name → the handlers to call, in registry order; the handlers for any other name), for
    attribute names, the last part of references' qualified names, or function names. Most attributes
    (`self.weight`, `x.shape`) and most references concern few handlers, and calling every
    handler to find that out cost more than walking to them. Built once per handler list
    and tables."""
    def build() -> tuple[dict[str, tuple], tuple]:
        reads = [_declared(func, "names", tables) for func in handlers]
        every = tuple(func for func, names in zip(handlers, reads) if names is None)
        named = {name for names in reads if names is not None for name in names}
        by_name = {name: tuple(func for func, names in zip(handlers, reads) if names is None or name in names)
                   for name in named}
        return by_name, every
    return _per_handlers("names", handlers, tables, build)


def context_dispatch(handlers: list[Callable]) -> dict[str, tuple]:
    """The string handlers for each kind of StringContext (those that declare `contexts`
    only for theirs, registry.handles), in registry order: most strings are prose or values
    that few handlers read. Built once per handler list."""
    def build() -> dict[str, tuple]:
        return {kind: tuple(func for func in handlers if kind in getattr(func, "contexts", (kind,)))
                for kind in STRING_CONTEXTS}
    return _per_handlers("contexts", handlers, None, build)


def value_dispatch(handlers: list[Callable]) -> tuple[dict[type, tuple], tuple]:
    """(type of an assigned value → the assign handlers to call, in registry order; those
    for any other type): name_dispatch for the `values` of registry.handles."""
    def build() -> tuple[dict[type, tuple], tuple]:
        reads = [getattr(func, "values", None) for func in handlers]
        every = tuple(func for func, values in zip(handlers, reads) if values is None)
        types = {kind for values in reads if values is not None for kind in values}
        by_value = {kind: tuple(func for func, values in zip(handlers, reads) if values is None or kind in values)
                    for kind in types}
        return by_value, every
    return _per_handlers("values", handlers, None, build)


class WordGates:
    """The "assign", "function" and "loop" handlers with `words` (registry.handles) run
    only for a statement that names one of them: a bare name, an attribute name, or the last
    part of a qualified name its references resolve to (`Loader(ds)` names `DataLoader`
    after `from torch.utils.data import DataLoader as Loader`). Most statements name none
    of the words of the advice that reads every assignment, function or loop. The words are
    seen by two handlers dispatched by name beside the attribute and reference handlers, so
    a name that is no word costs nothing more, and no text is searched."""

    def __init__(self, handlers: dict[str, list[Callable]], tables: Tables | None) -> None:
        self.handlers = handlers
        self.gated = [(func, frozenset(words)) for kind in ("assign", "function", "loop") for func in handlers[kind]
                      if (words := _declared(func, "words", tables)) is not None]
        self.words: frozenset[str] = frozenset().union(*(words for _, words in self.gated))
        self.attribute, self.reference = handlers["attribute"], handlers["reference"]
        if self.words:
            on_attribute, on_reference = _seeing(self.words)
            self.attribute, self.reference = self.attribute + [on_attribute], self.reference + [on_reference]
        self.tables = tables
        self._lists: dict[tuple[int, ...], dict[str, list[Callable]]] = {}
        self._dispatch: dict[int, tuple[dict[str, tuple], tuple]] = {}
        self.quiet = self.lists(())  # for a statement that names no word

    def lists(self, seen: Collection[str]) -> dict[str, list[Callable]]:
        """The handlers for a statement that names the words `seen`: the same lists for the
        same gated handlers left out, and the very lists of the kinds they are not of, so
        that the dispatch caches hold."""
        out = tuple(func for func, words in self.gated if words.isdisjoint(seen))
        if not out:
            return self.handlers
        key = tuple(map(id, out))
        known = self._lists.get(key)
        if known is None:
            known = self._lists[key] = {kind: [f for f in funcs if f not in out] if any(f in out for f in funcs)
                                        else funcs for kind, funcs in self.handlers.items()}
        return known

    def function_dispatch(self, functions: list[Callable]) -> tuple[dict[str, tuple], tuple]:
        """name_dispatch of the "function" list of one of these lists (by identity: the gates
        keep the lists), looked up for every statement with a function in it."""
        known = self._dispatch.get(id(functions))
        if known is None:
            known = self._dispatch[id(functions)] = name_dispatch(functions, self.tables)
        return known


def _seeing(words: frozenset[str]) -> tuple[Callable, Callable]:
    """The attribute and the reference handler, named by `words`, that tell the checker
    where the statement names one."""
    def attribute(checker: Checker, node: ast.expr, attr: str, call: object) -> None:
        checker.saw(attr, node)

    def reference(checker: Checker, ref: Reference) -> None:
        checker.saw(ref.qualname.rpartition(".")[2], ref.node)

    attribute.names = reference.names = words  # type: ignore[attr-defined]
    return attribute, reference


def word_gates(handlers: dict[str, list[Callable]], tables: Tables | None) -> WordGates:
    """The WordGates of a handler collection and tables, built once."""
    return _per_handlers("gates", handlers, tables, lambda: WordGates(handlers, tables))


def rule_failure(func: Callable, subject: object, exc: Exception) -> str:
    """What an adapter shows for a handler that raised: the rules it reports, where, what,
    then the traceback (first line alone is the summary)."""
    codes = sorted(getattr(func, "codes", ()))  # set by registry.handles
    node = subject.node if isinstance(subject, Reference) else subject
    where = f" at line {node.lineno}" if isinstance(node, ast.AST) and hasattr(node, "lineno") else ""
    rules = "the table-driven rules" if "table" in codes else "rule " + ", ".join(codes)
    return (f"{rules} ({func.__module__}.{func.__qualname__}) failed{where}: {type(exc).__name__}: {exc}\n"
            + "".join(traceback.format_exception(exc)))
