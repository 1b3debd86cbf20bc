"""NPU7xx: reproducibility — what makes a GPU run and an NPU run not comparable, as
msprobe's config_check and its `seed_all` see it: generators left unseeded, determinism
switches that mean nothing on the NPU, randomness left on in a comparison run."""

from __future__ import annotations

import ast
import re

from ..engine.checker import Checker, Reference
from ..engine.model import Applicability, Edit, Range, Severity
from ..engine.walk import CLASS, FUNCTION, Scope
from .advice_matching import ADVICE_TABLE, DATALOADERS, ON_BY_DEFAULT, argument, call_name, callee_of, literal, own_nodes
from ..engine.registry import handles, rule
from .citations import ASCEND_TOOLS, MSPROBE

SEED_ALL = (f"{MSPROBE} msprobe/pytorch/reproducibility/random_reproducibility.py `set_reproducibility`, called "
            "by `seed_all`; determinism_seed_all.tsv " + ASCEND_TOOLS)

rule(
    code="NPU701", name="unseeded-generator", severity=Severity.INFO, fix="sometimes",
    message="Seeds {seeded} but not {missing}, which this file draws from: a GPU run and an NPU run will not "
            "see the same random numbers.",
    doc=dict(
        what="In a file that seeds at least one generator (`random.seed`, `np.random.seed`, `torch.manual_seed`), "
             "finds a generator it draws from (`random.*`, `np.random.*`, `torch.rand*`, `torch.randperm`, "
             "`torch.normal`, …) but never seeds. Files that call a complete seeding helper (`transformers."
             "set_seed`, `accelerate.utils.set_seed`, msprobe's `seed_all`, Lightning's `seed_everything`) or any "
             "other function with `seed` in its name (a project helper the file cannot see into) are not "
             "reported; nor are seeds set inside a method (a model reseeding its own sampling). "
             + ON_BY_DEFAULT + "the "
             "file shows both the intent (a seed) and the gap (a draw from an unseeded generator).",
        why="msprobe's `seed_all`, which its dump and config_check documentation ask for before comparing a GPU "
            "run with an NPU run, seeds Python's `random`, `PYTHONHASHSEED`, NumPy and torch (and the device "
            "generators). `torch.manual_seed` also seeds the NPU generators in torch 2.13 once torch_npu is "
            "imported (`_seed_custom_device`).",
        example="random.seed(seed)\ntorch.manual_seed(seed)  # NPU701: np.random.permutation below is unseeded\n"
                "idx = np.random.permutation(n)\n\n# becomes\n\nrandom.seed(seed)\ntorch.manual_seed(seed)\n"
                'os.environ["PYTHONHASHSEED"] = str(seed)\nnp.random.seed(seed)\nidx = np.random.permutation(n)',
        fix="Unsafe (the random streams change): after the first seeding statement, inserts the seeds of every "
            "generator the file does not seed yet (and `PYTHONHASHSEED`, unless the file sets it), with the same "
            "seed expression, so the file seeds what `seed_all(seed)` seeds; adds the imports. Offered when the "
            "first seeding call is a statement of its own with a plain seed argument.",
        source=SEED_ALL + f"; {MSPROBE} config_check random checker (only `torch.manual_seed` is tracked).",
    ),
)

rule(
    code="NPU702", name="deterministic-without-hccl", severity=Severity.INFO, fix="never",
    message="`torch.use_deterministic_algorithms(True)` without `HCCL_DETERMINISTIC`: collective reductions on "
            "the NPU stay non-deterministic.",
    doc=dict(
        what="Finds `torch.use_deterministic_algorithms(True)` in a file that never mentions `HCCL_DETERMINISTIC`; "
             "not a call under a test for another accelerator (`if is_torch_xpu_available():`), nor one switched "
             "back in the same function (a test harness restoring the previous state). "
             + ON_BY_DEFAULT + "the file shows "
             "the intent and not the NPU half of it.",
        why="On the NPU, deterministic kernels come from `use_deterministic_algorithms`, but HCCL's all-reduce "
            "order is fixed only by `HCCL_DETERMINISTIC`; msprobe's `seed_all(mode=True)` sets both, and "
            "config_check compares `HCCL_DETERMINISTIC` (GPU: `NCCL_DETERMINISTIC`) between the runs.",
        example='torch.use_deterministic_algorithms(True)  # NPU702\n\n'
                'os.environ["HCCL_DETERMINISTIC"] = "true"  # before init_process_group\n'
                "torch.use_deterministic_algorithms(True)",
        fix="None automatic: the variable must be set before the process group starts, often in the launcher.",
        source=SEED_ALL + f"; {MSPROBE} config_check env checker (HCCL_DETERMINISTIC / NCCL_DETERMINISTIC).",
    ),
)

rule(
    code="NPU703", name="cudnn-determinism-only", severity=Severity.INFO, fix="never",
    message="Determinism rests on `torch.backends.cudnn.deterministic`, which the NPU ignores.",
    doc=dict(
        what="Finds `torch.backends.cudnn.deterministic = True` in a file that never calls "
             "`torch.use_deterministic_algorithms(True)`. (NPU105 reports every cuDNN switch; this rule says the "
             "file's determinism depends on one.) "
             + ON_BY_DEFAULT + "without the torch-level switch, nothing makes the NPU "
             "run deterministic.",
        why="torch_npu never reads the cuDNN flags. msprobe's `seed_all(mode=True)` uses "
            "`torch.use_deterministic_algorithms(True)`, which selects deterministic NPU kernels.",
        example="torch.backends.cudnn.deterministic = True  # NPU703\n\n"
                "torch.use_deterministic_algorithms(True)",
        fix="None automatic: deterministic algorithms are slower, and some operators raise without one.",
        source=SEED_ALL,
    ),
)

rule(
    code="NPU704", name="randomness-in-comparison-run", severity=Severity.INFO, fix="never",
    message="{what} in a file that uses msprobe: the GPU and NPU runs compared will not match.",
    doc=dict(
        what="In a file that imports msprobe (a precision-comparison run), finds dropout left on (`nn.Dropout`, "
             "`F.dropout` with `p` other than 0, unless `seed_all(..., rm_dropout=True)` is called) and "
             "`DataLoader(..., shuffle=True)`. " + ON_BY_DEFAULT + "msprobe in the file marks a comparison run.",
        why="msprobe's dump documentation: `seed_all` does not make the inputs identical — turn shuffling off — and "
            "`rm_dropout=True` sets every dropout probability to 0; config_check compares the dataset statistics "
            "and weights of the two runs for exact equality.",
        example="seed_all(1234)\nloader = DataLoader(ds, shuffle=True)  # NPU704\n\n"
                "seed_all(1234, rm_dropout=True)\nloader = DataLoader(ds, shuffle=False)",
        fix="None automatic.",
        source=SEED_ALL + f"; {MSPROBE} docs/zh/dump/pytorch_data_dump_instruct.md (dataset shuffle), "
                          "config_check dataset and weights checkers.",
    ),
)

rule(
    code="NPU705", name="cublas-workspace-config", severity=Severity.INFO, fix="never", table=ADVICE_TABLE,
    message="`{name}` means nothing on the NPU.",
    doc=dict(
        what="Finds the environment variable name `CUBLAS_WORKSPACE_CONFIG` (not in log messages or docstrings). "
             + ON_BY_DEFAULT + "the name has one meaning.",
        why="It makes cuBLAS deterministic on CUDA >= 10.2 (msprobe's `seed_all` sets it only when "
            "`torch.version.cuda` is set); the NPU has no cuBLAS, so a comparison run that relies on it is not "
            "deterministic there.",
        example='os.environ["CUBLAS_WORKSPACE_CONFIG"] = ":4096:8"  # NPU705\n\n'
                "torch.use_deterministic_algorithms(True)  # and HCCL_DETERMINISTIC",
        fix="None automatic.",
        source=SEED_ALL,
    ),
)

SEEDS = {"random.seed": "random", "numpy.random.seed": "numpy", "torch.manual_seed": "torch",
         "torch.random.manual_seed": "torch"}
COMPLETE = frozenset({
    "transformers.set_seed", "transformers.trainer_utils.set_seed", "transformers.enable_full_determinism",
    "transformers.trainer_utils.enable_full_determinism", "accelerate.utils.set_seed",
    "accelerate.utils.random.set_seed", "msprobe.pytorch.seed_all", "msprobe.pytorch.common.utils.seed_all",
    "lightning.seed_everything", "lightning.pytorch.seed_everything", "pytorch_lightning.seed_everything",
    "lightning.fabric.seed_everything"})
DRAWS = {
    "random": frozenset({"random", "randint", "uniform", "choice", "choices", "shuffle", "sample", "randrange",
                         "gauss"}),
    "numpy.random": frozenset({"rand", "randn", "randint", "choice", "shuffle", "permutation", "uniform", "normal",
                               "random", "random_sample"}),
    "torch": frozenset({"rand", "randn", "randint", "randperm", "rand_like", "randn_like", "randint_like",
                        "normal", "bernoulli", "multinomial"}),
}
GENERATOR = {"random": "random", "numpy.random": "numpy", "torch": "torch"}
DROPOUTS = frozenset({"torch.nn.Dropout", "torch.nn.Dropout1d", "torch.nn.Dropout2d", "torch.nn.Dropout3d",
                      "torch.nn.functional.dropout", "torch.nn.functional.dropout1d", "torch.nn.functional.dropout2d",
                      "torch.nn.functional.dropout3d"})
NAMES = frozenset({"seed", "manual_seed", "use_deterministic_algorithms", "seed_all", "set_seed", "seed_everything",
                   "enable_full_determinism"} | {n for names in DRAWS.values() for n in names})
RANDOMNESS = frozenset({"DataLoader"} | {q.rpartition(".")[2] for q in DROPOUTS})  # NPU704's calls


@handles("reference", "NPU701", "NPU702", names=NAMES)
def check_call(checker: Checker, ref: Reference) -> None:
    """Calls of resolved APIs (a reference event: cheaper than every call)."""
    call = callee_of(ref, NAMES)
    if call is None:
        return
    qualname = ref.qualname
    if qualname in SEEDS:
        _seed(checker, ref, call, SEEDS[qualname])
        return
    if qualname in COMPLETE:
        checker.note("seed all", call)
        if qualname.endswith("seed_all") and literal(argument(call, "rm_dropout", 2)[1]) is True:
            checker.note("rm-dropout", call)
        return
    module, _, function = qualname.rpartition(".")
    if function in DRAWS.get(module, ()):
        checker.note(f"draw {GENERATOR[module]}", call)
    elif qualname == "torch.use_deterministic_algorithms":
        if literal(argument(call, "mode", 0)[1]) is True:
            checker.note(f"deterministic @{call.lineno}:{call.col_offset}", call)


@handles("reference", "NPU704", names=RANDOMNESS)
def check_randomness(checker: Checker, ref: Reference) -> None:
    """Dropout and shuffling, in a file that runs msprobe (every model has dropout)."""
    call = callee_of(ref, RANDOMNESS)
    if call is None or not checker.module.imports_module("msprobe"):
        return
    qualname = ref.qualname
    if qualname in DROPOUTS:
        passed, p = argument(call, "p", 0 if qualname.startswith("torch.nn.D") else 1)
        if not passed or literal(p) != 0:
            checker.note(f"NPU704 dropout `{qualname}` @{call.lineno}:{call.col_offset}", call)
    elif qualname in DATALOADERS and literal(argument(call, "shuffle", 2)[1]) is True:
        checker.note(f"NPU704 shuffle @{call.lineno}:{call.col_offset}", call)


def _seed(checker: Checker, ref: Reference, call: ast.Call, generator: str) -> None:
    """A seed set for the run, not inside a method (a model reseeding its own sampling,
    as BigBird's attention does, is not the run's seeding)."""
    scope = ref.scope
    if scope.kind == FUNCTION and scope.parent is not None and scope.parent.kind == CLASS:
        return
    checker.note(f"seed {generator}", call)
    if "seed-site" not in checker.facts:
        checker.note("seed-site", call)
        seed = call.args[0] if len(call.args) == 1 and not call.keywords else None
        if type(seed) in (ast.Name, ast.Constant, ast.Attribute):
            checker.note("seed-arg", seed)


OTHER_DEVICES = ("xpu", "mlu", "hpu", "mps", "musa", "sdaa", "xla")


@handles("function", "NPU702", words=("use_deterministic_algorithms",))
def check_guarded(checker: Checker, func: ast.FunctionDef | ast.AsyncFunctionDef, scope: Scope) -> None:
    """Note the `use_deterministic_algorithms(True)` calls NPU702 leaves alone: under `if
    is_torch_xpu_available():` (another accelerator), or switched back in the same function."""
    if not checker.named(func, "use_deterministic_algorithms"):
        return
    nodes = own_nodes(func.body)
    toggles = [n for n in nodes if type(n) is ast.Call and call_name(n) == "use_deterministic_algorithms"]
    if any(literal(argument(n, "mode", 0)[1]) is not True for n in toggles):
        # switched on and back (a test harness restoring the previous state): not a run setting
        for inner in toggles:
            checker.note(f"excluded @{inner.lineno}:{inner.col_offset}", inner)
        return
    for node in nodes:
        if type(node) is not ast.If or not any(d in ast.unparse(node.test).lower() for d in OTHER_DEVICES):
            continue
        for guarded in ast.walk(ast.Module(body=node.body, type_ignores=[])):
            if type(guarded) is ast.Call and call_name(guarded) == "use_deterministic_algorithms":
                checker.note(f"excluded @{guarded.lineno}:{guarded.col_offset}", guarded)


@handles("assign", "NPU703", words=("deterministic",))
def check_assign(checker: Checker, node: ast.Assign | ast.AnnAssign, scope: Scope) -> None:
    value = node.value
    if type(node) is not ast.Assign or type(value) is not ast.Constant or value.value is not True:
        return
    for target in node.targets:
        if type(target) is ast.Attribute and target.attr == "deterministic" and \
                checker.qualname(target, scope) == "torch.backends.cudnn.deterministic":
            checker.note("cudnn-deterministic", node)


@handles("module", "NPU701", "NPU702", "NPU703", "NPU704")
def check_module(checker: Checker, facts: dict[str, Range]) -> None:
    _seeds(checker, facts)
    deterministic = [(fact, where) for fact, where in facts.items() if fact.startswith("deterministic @")]
    if deterministic and "HCCL_DETERMINISTIC" not in checker.source.text:
        for fact, where in deterministic:
            if "excluded @" + fact.partition(" @")[2] not in facts:
                checker.report("NPU702", where)
    if "cudnn-deterministic" in facts and not deterministic:
        checker.report("NPU703", facts["cudnn-deterministic"])
    if checker.module.imports_module("msprobe"):
        for fact, where in facts.items():
            if fact.startswith("NPU704 dropout") and "rm-dropout" not in facts:
                what = fact.split("`")[1]
                checker.report("NPU704", where, what=f"`{what}` with a non-zero probability")
            elif fact.startswith("NPU704 shuffle"):
                checker.report("NPU704", where, what="`DataLoader(shuffle=True)`")


GENERATORS = ("random", "numpy", "torch")


# a call of a seeding helper the file cannot see into (`set_seed(...)`, `utils.seed_everything(...)`)
SEED_HELPER = re.compile(r"(?<!def )\b(\w*[sS]eed\w*)\s*\(")


def _seeds(checker: Checker, facts: dict[str, Range]) -> None:
    seeded = [g for g in GENERATORS if f"seed {g}" in facts]
    if not seeded or "seed all" in facts:
        return
    if any(m.group(1) not in ("seed", "manual_seed", "manual_seed_all")
           for m in SEED_HELPER.finditer(checker.source.text)):
        return
    missing = [g for g in GENERATORS if f"draw {g}" in facts and g not in seeded]
    if not missing:
        return
    fix = _seed_fix(checker, facts, [g for g in GENERATORS if g not in seeded])
    checker.report("NPU701", facts["seed-site"], fixes=(fix,) if fix else (), seeded=", ".join(seeded),
                   missing=", ".join(missing))


def _binding(checker: Checker, module: str) -> tuple[str, Edit | None]:
    """The name the file binds `module` to, or the module's name and the import to add."""
    for name, bound in checker.module.scope.imports.items():
        if bound == module:
            return name, None
    return module, checker.require_name(module)


def _seed_fix(checker: Checker, facts: dict[str, Range], generators: list[str]):
    site, arg = facts["seed-site"], facts.get("seed-arg")
    if arg is None or not (site.start_line, site.start_col) <= (arg.start_line, arg.start_col) \
            or (arg.end_line, arg.end_col) > (site.end_line, site.end_col):
        return None  # the plain seed argument belongs to a later seeding call
    source = checker.source
    line = source.lines[site.end_line]
    text = line.rstrip("\r\n")
    head = source.line(site.start_line)[:site.start_col]
    tail = text[site.end_col:].strip()
    if head.strip() or (tail and not tail.startswith("#")):
        return None  # not a statement of its own
    seed = source.segment(arg)
    newline = line[len(text):] or "\n"
    imports: list[Edit | None] = []
    block: list[str] = []
    if "random" in generators:
        random, edit = _binding(checker, "random")
        imports.append(edit)
        block.append(f"{random}.seed({seed})")
    if "PYTHONHASHSEED" not in source.text:
        os_name, edit = _binding(checker, "os")
        imports.append(edit)
        block.append(f'{os_name}.environ["PYTHONHASHSEED"] = str({seed})')
    if "numpy" in generators:
        numpy, edit = _binding(checker, "numpy")
        imports.append(edit)
        block.append(f"{numpy}.random.seed({seed})")
    if "torch" in generators:
        torch, edit = _binding(checker, "torch")
        imports.append(edit)
        block.append(f"{torch}.manual_seed({seed})  # also seeds the NPU once torch_npu is imported")
    text_block = "".join(f"{head}{b}{newline}" for b in block)
    if site.end_line + 1 < len(source.lines):
        insert = Edit(Range(site.end_line + 1, 0, site.end_line + 1, 0), text_block)
    else:  # the seeding call ends the file
        insert = Edit(Range(site.end_line, len(text), site.end_line, len(text)), newline + text_block.rstrip("\r\n"))
    merged: dict[Range, str] = {}
    for edit in imports:
        if edit is not None:
            merged[edit.range] = merged.get(edit.range, "") + edit.new_text
    edits = [Edit(rng, new) for rng, new in merged.items()] + [insert]
    return checker.fix("Seed every generator, as msprobe's seed_all does", Applicability.UNSAFE, *edits)
