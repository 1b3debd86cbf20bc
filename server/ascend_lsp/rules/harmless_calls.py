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
from ..engine.walk import Events
from .npu2xx_support import dtype_test
from .cuda_test_paths import failed_cuda_test
from .statement_facts import StatementFacts, inside, seeded_between, statement_facts, under_cuda_key

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
TYPE_ONLY = (" (Only a type here, in a hint or an isinstance() test: naming it runs nothing, and an NPU object "
             "is not one.)")
KEY_ONLY = (" (Only a key here (`hooks[torch.cuda.amp.GradScaler] = ...`): naming the class runs nothing, and an "
            "NPU object is never looked up under it.)")
ENV_REPORT = (" (In an environment report: it describes the host, and on an NPU host reports no GPU; add the "
              "NPU's facts beside it if the report should show them.)")
FALLBACK = (" (A fallback: `getattr(torch, device_type, torch.cuda)` takes it only where torch has no module for "
            "the device type; on an NPU host with torch_npu loaded that is `torch.npu`.)")
DTYPE_ASKED = " (Compared with, not made: a test of a dtype creates no float64 tensor.)"
PER_DEVICE = " (The value of a per-device dict's `\"cuda\"` key: it is looked up only for CUDA.)"
SWITCH_RULES = frozenset({"NPU105", "NPU106"})
TESTED_BESIDE_NPU = (" (A test for CUDA in code that handles `npu` too (its imports, or this statement): on an NPU "
                     "host it is False and the code takes the path its authors gave other devices.)")
SKIP_CONDITION = (" (A test's skip condition: on an NPU host the test is skipped, as on any host without CUDA; "
                  "a test meant for the NPU needs its own condition.)")
# what tests for CUDA: in a file that handles `npu` too, the authors chose the NPU's path
CUDA_PROBES = frozenset({"torch.cuda.is_available", "torch.cuda.device_count"})

# the files of an environment report: collect_env.py (torch's), env.py (LLaMA-Factory's,
# accelerate's `accelerate env`); its functions: statement_facts.ENV_FUNCTION
ENV_FILES = frozenset({"collect_env", "env", "env_info", "envinfo", "sys_info", "system_info"})


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


def seeds_all_beside(facts: StatementFacts, node: ast.AST) -> bool:
    """`torch.manual_seed(...)` in the innermost function holding `node` (or its statement's lines)."""
    holding = [f for f in facts.functions if inside(node, f)]
    func = max(holding, key=lambda f: f.lineno) if holding else None  # type: ignore[attr-defined]
    first, last = (func.lineno, func.end_lineno) if func is not None else (node.lineno, node.end_lineno)  # type: ignore[attr-defined]
    return seeded_between(facts, first, last)


def in_environment_report(checker: Checker, facts: StatementFacts, node: ast.AST) -> bool:
    if checker.path is not None and PurePath(checker.path).stem.lower() in ENV_FILES:
        return True
    return _within_any(node, facts.env_reports)


def reference_place(checker: Checker, rule: str, ref: Reference) -> tuple[Severity | None, str] | None:
    """The lower severity and the reason for a `torch.cuda` reference the code shows harmless;
    for a CUDA-only seed without a seed of every device, or a CUDA probe whose other path fails
    on an NPU host (cuda_test_paths.py), its severity (or None: the rule's) and why; else None."""
    qualname = ref.qualname
    if rule.startswith("NPU3"):
        return opt_in_reference(checker, ref)
    if rule == "NPU405" and dtype_test(checker, ref.node):
        return Severity.INFO, DTYPE_ASKED
    if not qualname.startswith(("torch.cuda", "torch.backends", "torch.version")):
        return None
    if ref.type_only:
        return Severity.INFO, TYPE_ONLY
    facts = statement_facts(checker)
    if ref.call is None and id(ref.node) in facts.stored_keys:
        return Severity.INFO, KEY_ONLY
    if ref.call is None and qualname == "torch.cuda" and id(ref.node) in facts.getattr_defaults:
        return Severity.INFO, FALLBACK
    if id(ref.node) in facts.in_skip_condition:
        return Severity.INFO, SKIP_CONDITION
    if qualname in CUDA_PROBES and handles_npu(checker):
        failed = failed_cuda_test(checker, ref.node)
        return (None, failed) if failed else (Severity.INFO, TESTED_BESIDE_NPU)
    if under_cuda_key(facts, ref.node):
        return Severity.INFO, PER_DEVICE
    if qualname in CUDA_SEEDS:
        if seeds_all_beside(facts, ref.node):
            return Severity.INFO, SEEDED_BESIDE
        return checker.rules[rule].severity, SEED_ONLY
    if qualname == "torch.cuda.empty_cache":
        return Severity.INFO, EMPTY_CACHE
    if rule in SWITCH_RULES and ref.call is None and type(ref.node) is ast.Attribute \
            and type(ref.node.ctx) is ast.Load:
        return Severity.INFO, READ_SWITCH
    if in_environment_report(checker, facts, ref.node):
        return Severity.INFO, ENV_REPORT
    return None


def hides_every_gpu(checker: Checker, node: ast.AST, name: str) -> bool:
    """`os.environ["CUDA_VISIBLE_DEVICES"] = "-1"`, `os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")`."""
    return name == "CUDA_VISIBLE_DEVICES" and id(node) in statement_facts(checker).cpu_only_names


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


OPT_IN = (" (Under `{test}`, which names `{word}`: it runs only where the user turns that feature on; on an NPU "
          "host leave it off.)")
LEFT_EARLY = (" (After `if {test}:` leaves early, which names `{word}`: it runs only where that feature is there "
              "and on; on an NPU host leave it off.)")
# what ends a block at once: `if not HAS_BNB: pytest.skip(...)` keeps the code after it from running
EARLY_EXITS = ("pytest.skip(", "self.skipTest(", "return", "raise ", "continue")


CAMEL_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")


def _names(test: str, words: set[str]) -> str | None:
    """The word of `words` that `test` names as a word, not in a test of a version
    (`if flash_attn_version >= ...`: which release, not whether it is used)."""
    lowered = test.lower()
    if "version" in lowered:
        return None
    camel = {part.lower() for part in CAMEL_WORD.findall(test)}  # `BitsandbytesPrecision`
    return next((w for w in words if w in camel or re.search(rf"(?<![a-z]){re.escape(w)}(?![a-z])", lowered)),
                None)


def feature_test(checker: Checker, node: ast.stmt | ast.expr, words: set[str]) -> tuple[str, str, bool] | None:
    """(the test, the word, whether it leaves early) of an `if`/`elif` around `node`, in its
    function, whose test names one of `words` (a package and the name it is imported as) as a
    word: `if self.use_apex:`, `if args.quant_method == "awq":`; or of an `if not ...:` before
    it in the same block whose body leaves at once (`if not HAS_BNB: pytest.skip(...)`). Read
    from the lines, as import_with_fallback reads them."""
    lines, first = checker.source.lines, node.lineno - 1
    indent = _indent(lines[first])
    for i, line, stripped in _code_lines(lines, range(first - 1, -1, -1)):
        if indent == 0:
            break
        level = _indent(line)
        if level == indent and stripped.startswith("if not ") and stripped.endswith(":"):
            body = next(_code_lines(lines, range(i + 1, first)), None)
            test = stripped[3:-1].strip()
            word = _names(test, words)
            if word is not None and body is not None and _indent(body[1]) > level \
                    and body[2].startswith(EARLY_EXITS):
                return test, word, True
        if level >= indent:
            continue
        indent = level
        if stripped.startswith(("def ", "async def ", "class ")):
            break  # what calls the function may be anything
        if stripped.startswith(("if ", "elif ")):
            test = stripped.partition(" ")[2].rpartition(":")[0].strip()
            word = _names(test, words)
            if word is not None:
                return test, word, False
    return None


def opt_in_place(checker: Checker, node: ast.stmt | ast.expr, qualname: str, local: str) -> tuple[Severity, str] | None:
    """Info and the reason for a third-party package's finding under a test of the feature that
    uses it (feature_test)."""
    found = feature_test(checker, node, {qualname.partition(".")[0].lower(), local.lower()})
    if found is None:
        return None
    return Severity.INFO, (LEFT_EARLY if found[2] else OPT_IN).format(test=found[0], word=found[1])


def opt_in_reference(checker: Checker, ref: Reference) -> tuple[Severity, str] | None:
    """opt_in_place for a reference: the package and the first name of its chain (`amp` in `amp.scale_loss`)."""
    first = ref.node
    while type(first) is ast.Attribute:
        first = first.value
    return opt_in_place(checker, ref.node, ref.qualname, getattr(first, "id", ""))


def import_with_fallback(checker: Checker, stmt: ast.stmt) -> bool:
    """`stmt` is in the body of a `try:` with an `except ImportError:` (or `except Exception:`,
    a bare `except:`) whose body does not raise, or of an `if is_<package>_available():`. Read
    from the lines, as Python reads the blocks: only for the imports the tables name."""
    lines, first, indent = checker.source.lines, stmt.lineno - 1, stmt.col_offset
    if indent == 0:
        return False  # a top-level import: in no block
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
