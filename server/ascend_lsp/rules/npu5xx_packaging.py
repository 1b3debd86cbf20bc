"""NPU5xx: packaging and environment files — what a project installs before any code runs.

The items come from engine/packaging.py (requirements files, pyproject.toml, setup.cfg,
environment.yml, Dockerfiles) and from `setup(install_requires=[...])` strings in
setup.py (also in the module's lists the call takes: `extras_require={"gpu": extras_gpu}`), the variables of NPU505 from launch scripts and Dockerfiles (engine/shell_script.py,
engine/dockerfile.py); the facts from mappings/platform/packaging.toml.
"""

from __future__ import annotations

import ast
import re

from ..engine.checker import Checker, shown_only
from ..engine.model import Applicability, Fix, Range, Related, Severity
from ..engine.packaging import Item, extra_why, string_requirement
from ..engine.shell_script import Assignment, Command, ShellScript
from ..engine.versions import admits_from
from ..knowledge.platform import Platform, load_platform
from ..engine.walk import MODULE, Scope, StringContext, last_name
from ..engine.registry import TableRef, handles, rule
from .advice_matching import inside
from .citations import BITSANDBYTES_WHEEL, real_world_citation

TABLE = TableRef("mappings/platform/packaging.toml")
TORCH_FAMILY = frozenset({"torch", "torchvision", "torchaudio", "pytorch"})
CUDA_LOCAL = re.compile(r"\+cu\d+")
SETUP_KEYWORDS = frozenset({"install_requires", "setup_requires", "tests_require", "extras_require", "requires"})
EXACT = re.compile(r"^===?\s*(?P<version>\d+(?:\.\d+)*)(?P<star>\.\*)?(?:\+\w+)?$")

rule(
    code="NPU501", name="cuda-torch-build", severity=Severity.ERROR, fix="sometimes", table=TABLE,
    message="`{name}` installs a CUDA build of PyTorch; torch_npu needs the CPU build.",
    doc=dict(
        what="Finds CUDA builds of PyTorch in packaging files: a `+cu121` local version on `torch`, "
             "`torchvision` or `torchaudio`, and a CUDA wheel index (`--index-url "
             "https://download.pytorch.org/whl/cu121`, `[[tool.uv.index]]`, a Dockerfile's `pip install`). "
             "Packaging files are requirements files, `pyproject.toml`, `setup.cfg`, `setup.py` (the strings "
             "its `setup(...)` is given, also through a list named at the top of the file: `extras_require="
             "{\"gpu\": extras_gpu}`), `environment.yml` and Dockerfiles. In a pyproject.toml an extra named for "
             "the GPU, and a source given for it, is info (NPU502).",
        why="torch_npu pins the CPU build of torch (on x86 every torch-npu release up to 2.11 requires "
            "`torch==X+cpu`), and importing torch_npu next to a torch built with another accelerator fails "
            "(\"Two accelerators cannot be used at the same time\"). pip rejects the combination or installs "
            "the wrong wheel.",
        example="--index-url https://download.pytorch.org/whl/cu121  # NPU501\ntorch==2.1.0+cu121  # NPU501\n\n"
                "# becomes\n\n--index-url https://download.pytorch.org/whl/cpu\ntorch==2.1.0+cpu\ntorch-npu==2.1.0.post17",
        fix="Unsafe, for index URLs: points the URL at the CPU index. The version pin needs a person (the "
            "local part depends on the platform: `+cpu` on x86, none on aarch64).",
        source=real_world_citation(2, "NPU501", "vllm-project/vllm-ascend#7089, kvcache-ai/ktransformers#1544") +
        "; PyPI torch-npu Requires-Dist of every release (mappings/platform/packaging.toml); `FACTS.md` §2 import "
        "constraint (torch_npu/__init__.py).",
    ),
)

rule(
    code="NPU502", name="cuda-only-package", severity=Severity.ERROR, fix="sometimes", table=TABLE,
    message="`{name}` is built for CUDA GPUs.",
    doc=dict(
        what="Finds packages that only work with NVIDIA GPUs in packaging files: flash-attn, xformers, "
             "community triton, apex, cupy-cuda*, `nvidia-*-cu12` runtime wheels, auto-gptq/autoawq; "
             "and, as information, bitsandbytes, which is not CUDA-only but has no NPU kernels (a requirement "
             "admitting only its releases before 0.46.0, which do not know the NPU, is an error), and NVIDIA's "
             "monitoring bindings (pynvml, nvidia-ml-py, GPUtil), which install and import anywhere and fail "
             "where the code calls them (NPU124). What an extra named for the GPU lists (`gpu = [...]`, `cuda`, "
             "`cu128`, `marlin-cuda12`) or one named for a package it installs (`flash = [\"flash-attn\"]`, "
             "`extras_require={\"flash-attn\": [...]}`), in a pyproject.toml or setup.py, and the sources given for "
             "an extra named for the GPU (`{ url = ..., extra = \"gpu\" }`, `marker = \"extra == 'gpu'\"`), is "
             "info, as NPU501's is: its users choose it, and leave it out on an Ascend host (the message names "
             "the NPU's extra where there is one). An extra named for a purpose (`train = [\"flash-attn\", ...]`) "
             "keeps the finding: users install it to train.",
        why="They fail to build or install on an Ascend host, or install and then fail at import. "
            "The install step is the first thing a migration hits. bitsandbytes (0.50.2 checked) lists the NPU "
            "as a device: its int8 and 4-bit ops fall back to its generic PyTorch code there, while its 8-bit optimizers "
            "(blockwise update) and paged optimizers have no NPU path; which of them a project uses shows in its "
            "code (NPU304), not in the requirement.",
        example="flash-attn==2.5.8  # NPU502\ntriton==3.0.0  # NPU502\n\n# becomes\n\ntriton-ascend",
        fix="Unsafe, for triton: renames it to triton-ascend (same API, Atlas A2/A3; pin a triton-ascend "
            "version yourself). The others have no package to swap in: the code that uses them needs porting.",
        source=real_world_citation(2, "NPU501") + "; `third_party_replacements.tsv` (flash_attn, xformers, apex, triton rows); "
        "real_world_failures.md #13, #29; " + BITSANDBYTES_WHEEL + ".",
    ),
)

rule(
    code="NPU503", name="torch-without-torch-npu", severity=Severity.WARNING, fix="sometimes", table=TABLE,
    message="`{name}` has no matching torch-npu release.",
    doc=dict(
        what="Finds exact torch pins (`torch==2.5.0`) that no torch-npu release on PyPI pairs with, and a "
             "torch pin that disagrees with the torch the pinned `torch-npu` requires (error).",
        why="Each torch-npu release requires one exact torch build (its Requires-Dist) and torch-npu trails "
            "torch by 2–3 months, so a torch version without a torch-npu cannot run on the NPU, and a pair "
            "that disagrees is rejected by pip's resolver.",
        example="torch==2.5.0  # NPU503: torch-npu pairs with 2.5.1\n\ntorch==2.1.0\ntorch-npu==2.6.0  # NPU503",
        fix="Unsafe, when torch-npu is pinned in the same file: pins torch to the build that release requires.",
        source=real_world_citation(2, "NPU501", "vllm-project/vllm-ascend#5710, #2838, #7089; hiyouga/LlamaFactory#5763") +
        "; the pairing is read from the Requires-Dist of every torch-npu release on PyPI when the tables are "
        "built (mappings/build/platform_tables.py).",
    ),
)

rule(
    code="NPU504", name="cuda-base-image", severity=Severity.ERROR, fix="never", table=TABLE,
    message="Base image `{name}` is a CUDA image; it has no CANN toolkit or NPU driver libraries.",
    doc=dict(
        what="Finds Dockerfile `FROM` lines with an NVIDIA CUDA base image: `nvidia/cuda`, `nvcr.io/nvidia/*`, "
             "`pytorch/pytorch:*-cuda*`, and any image whose tag names a CUDA build as a word of its own "
             "(`verlai/verl:base-verl0.4-cu124-…`, `…:cuda12.4-py3`; not `cudnn9`), also through an `ARG` (`ARG BASE=nvidia/cuda:12.1.0-devel-ubuntu22.04`, "
             "then `FROM ${BASE}`: the message names the image the ARG's default gives). A `FROM` that starts "
             "from an earlier stage (`FROM build`) is reported at that stage's own `FROM`.",
        why="torch_npu needs the CANN toolkit in the image (and the host's NPU driver mounted); a CUDA image "
            "carries neither, and its torch is a CUDA build.",
        example="FROM nvidia/cuda:12.1.0-devel-ubuntu22.04  # NPU504",
        fix="None automatic: the message names a CANN base image for the configured `chip` "
            "(`quay.io/ascend/cann:9.1.0-910b-ubuntu22.04-py3.12` on A2, `…-a3-…` on A3); it carries the CANN "
            "toolkit, kernels and NNAL but no torch, so install the CPU build of torch and the paired torch-npu.",
        source=real_world_citation(2, "NPU501", "Dockerfiles") + "; `FACTS.md` §2 (torch_npu import constraint); "
        "hiyouga/LLaMA-Factory docker/docker-npu (the CANN images, mappings/platform/packaging.toml `[[cann-image]]`).",
    ),
)

rule(
    code="NPU505", name="cuda-toolkit-path", severity=Severity.WARNING, fix="never",
    table=TableRef(TABLE.path, ("cuda-path",)),
    message="`{name}` points at the CUDA toolkit.",
    doc=dict(
        what="Finds `LD_LIBRARY_PATH` set to a value that names `/usr/local/cuda`, in a Dockerfile's `ENV` and "
             "`RUN` lines and in shell launch scripts (`export`, a command's prefix, `env`). `CUDA_HOME` itself "
             "is NPU124.",
        why="An Ascend host or a CANN image has no CUDA toolkit, so the libraries the image was built to find "
            "there are missing; torch_npu finds CANN through its own variables (`ASCEND_HOME_PATH`, "
            "`ASCEND_TOOLKIT_HOME`, `ASCEND_OPP_PATH`), which the toolkit's `set_env.sh` sets.",
        example="ENV LD_LIBRARY_PATH=/usr/local/cuda/lib64:$LD_LIBRARY_PATH  # NPU505\n\n# on the NPU\n\n"
                "RUN source /usr/local/Ascend/ascend-toolkit/set_env.sh && python3 train.py",
        fix="None automatic: drop the CUDA folder and source `/usr/local/Ascend/ascend-toolkit/set_env.sh` in the "
            "shell that runs torch_npu.",
        source="torch_npu 2.13.0 wheel (the ASCEND_* variables it reads); hiyouga/LLaMA-Factory "
               "docker/docker-npu/Dockerfile (set_env.sh); mappings/platform/packaging.toml `[[cuda-path]]`.",
    ),
)


OLDER_RELEASES = (" It lists the NPU as a device from {since} on, and this requirement admits no release from then: "
                  "those it admits do not know the NPU.")


def _requirement(checker: Checker, item: Item, items: list[Item], extra: str | None = None) -> None:
    """The findings of one requirement; `extra`: the name of setup.py's extra that lists it (a
    pyproject.toml's are read by the engine, engine/packaging.gpu_extras)."""
    platform = load_platform(checker.settings.torch_npu_version)
    name = item.name
    local = CUDA_LOCAL.search(item.spec)
    if name in TORCH_FAMILY and local and item.spec_range is not None:
        r = item.spec_range
        where = Range(r.start_line, r.start_col + local.start(), r.end_line, r.start_col + local.end()) \
            if r.start_line == r.end_line and item.document != "setup.py" else r
        checker.report("NPU501", where, name=item.text, origin=TABLE.path)
    row = platform.package(name)
    if row is not None and not (item.conda and name.startswith("nvidia-")):
        # the row's rule (NPU501 for conda's CUDA build of pytorch), and its own message where it has one: a
        # package that is not CUDA-only but lacks part of its function on the NPU
        code = row["rule"]
        severity = Severity.parse(row["severity"]) if row.get("severity") else None
        since = row.get("severity-from")
        if since is not None and not admits_from(item.spec, since):
            # an older release than the one the row speaks of: what the rule says of CUDA-only packages
            severity = None
            text = checker.rules[code].message.format(name=item.text) + OLDER_RELEASES.format(since=since)
        else:
            text = row.get("message", checker.rules[code].message).format(name=item.text) + " " + row["note"]
        fixes: tuple[Fix, ...] = ()
        if row.get("replacement") and item.name_range is not None and item.document != "setup.py" \
                and not item.wheel:
            named = item.name_range
            end = item.spec_range or named  # the version belongs to the old package
            fixes = (checker.fix(f"Replace `{item.text}` with `{row['replacement']}`", Applicability(row["fix"]),
                                 checker.replace(Range(named.start_line, named.start_col, end.end_line, end.end_col),
                                                 row["replacement"])),)
            text += f" Use `{row['replacement']}`."
        if extra is not None and (why := extra_why(extra, [name])) is not None:
            text, severity, fixes = text + why, Severity.INFO, shown_only(fixes)
        checker.report(code, item.name_range or item.range, text, fixes, origin=TABLE.path, severity=severity)
    if name == "torch" and not item.conda:
        _pairing(checker, item, items, platform)


def _pairing(checker: Checker, item: Item, items: list[Item], platform: Platform) -> None:
    exact = EXACT.match(item.spec.replace(" ", ""))
    if exact is None or item.spec_range is None:
        return
    version = exact["version"]
    known = platform.torch_versions()
    paired = [v for v in known if v == version or (exact["star"] and v.startswith(version + "."))]
    message = checker.rules["NPU503"].message.format(name=item.text)
    pins = [(i, i.spec.replace(" ", "").lstrip("=")) for i in items
            if i.name == "torch-npu" and not i.conda and i.spec.startswith("==")]
    pinned, release = next(((i, platform.torch_for(pin)) for i, pin in pins if platform.torch_for(pin)), (None, None))
    if pinned is not None and release is not None:
        required = release["requirement"]
        if release["torch"] == version or (exact["star"] and release["torch"].startswith(version + ".")):
            return
        fix = checker.fix(f"Pin `{required}`", Applicability.UNSAFE,
                          checker.replace(item.spec_range, required.removeprefix("torch")))
        checker.report("NPU503", item.spec_range,
                       f"`{item.text}` does not match the pinned torch-npu {release['torch-npu']}, which requires "
                       f"`{required}` (its Requires-Dist on PyPI).", (fix,), origin=TABLE.path, severity=Severity.ERROR,
                       related=(Related(pinned.range, f"torch-npu pinned here: `{pinned.text}`"),))
    elif not paired:
        versions = sorted(known, key=lambda v: tuple(int(p) for p in v.split(".")))
        checker.report("NPU503", item.spec_range, f"{message} torch-npu pairs with torch {', '.join(versions)} "
                       "(PyPI, Requires-Dist of each release).", origin=TABLE.path)


def _index(checker: Checker, item: Item) -> None:
    platform = load_platform(checker.settings.torch_npu_version)
    for row in platform.indexes:
        at = item.text.find(row["match"])
        if at < 0:
            continue
        r = item.range
        if any(f.code == "NPU501" and f.range.start_line == r.start_line and r.start_col <= f.range.start_col < r.end_col
               for f in checker.findings):
            return  # a CUDA wheel's URL, reported at its file name's `+cu121` (packaging.wheel_at)
        tail = re.match(r"cu\d+/?$", item.text[at + len(row["match"]) - 2:])
        fixes: tuple[Fix, ...] = ()
        if tail is not None:  # an index URL; a wheel's own URL has no CPU twin at the same path
            start = r.start_col + at + len(row["match"]) - 2
            end = start + len(tail.group().rstrip("/"))
            fixes = (checker.fix("Use the CPU wheel index", Applicability(row["fix"]),
                                 checker.replace(Range(r.start_line, start, r.start_line, end), "cpu")),)
        checker.report("NPU501", r, checker.rules["NPU501"].message.format(name=item.text) + " " + row["note"],
                       fixes, origin=TABLE.path)
        return


def _image(checker: Checker, item: Item) -> None:
    platform = load_platform(checker.settings.torch_npu_version)
    image = item.text.lower()
    for row in platform.images:
        head = image.removeprefix("docker.io/")
        tag = head.rpartition("/")[2].partition(":")[2]
        if head.startswith(row["match"]) and row.get("if-contains", "") in head \
                and ("tag-matches" not in row or re.search(row["tag-matches"], tag)):
            text = checker.rules["NPU504"].message.format(name=item.text)
            if item.written and item.written != item.text:
                text += f" `{item.written}` is `{item.text}` by the ARG defaults."
            cann = platform.cann_image(checker.settings.chip)
            if cann is not None:
                text += (f" Start from a CANN image such as `{cann['image']}` (the CANN toolkit and kernels, "
                         "without torch: install the CPU build of torch and the torch-npu paired with it).")
            checker.report("NPU504", item.range, text, origin=TABLE.path)
            return


@handles("packaging", "NPU501", "NPU502", "NPU503", "NPU504")
def check_item(checker: Checker, item: Item, items: list[Item]) -> None:
    if not isinstance(item, Item):
        return  # a config's settings are NPU8xx's
    if item.kind == "requirement":
        _requirement(checker, item, items)
    elif item.kind == "index":
        _index(checker, item)
    else:
        _image(checker, item)


@handles("launch", "NPU505")
def check_cuda_path(checker: Checker, found: Assignment | Command, script: ShellScript) -> None:
    """A variable of a launch script or of a Dockerfile's ENV and RUN that names CUDA's folder."""
    if not isinstance(found, Assignment):
        return
    for row in load_platform(checker.settings.torch_npu_version).cuda_paths:
        if found.name == row["name"] and row["contains"] in found.value:
            checker.report("NPU505", found.range, checker.rules["NPU505"].message.format(name=found.name) +
                           " " + row["note"], origin=TABLE.path, extra={"note": row["note"], "source": row["source"]})
            return


@handles("string", "NPU501", "NPU502", "NPU503", contexts=("arg",))
def check_setup_requirement(checker: Checker, node: ast.AST, value: str, context: StringContext) -> None:
    """`setup(install_requires=["torch==2.1.0+cu121"])` in setup.py."""
    if context.kind != "arg" or context.keyword not in SETUP_KEYWORDS or type(node) is not ast.Constant:
        return
    if context.call is None or last_name(context.call.func) != "setup" or not checker.path \
            or not checker.path.endswith("setup.py"):
        return
    extra = None
    for kw in context.call.keywords:
        if kw.arg == "extras_require" and type(kw.value) is ast.Dict:
            for key, listed in zip(kw.value.keys, kw.value.values):
                if key is node:
                    return  # an extra's name (`extras_require={"flash-attn": [...]}`), not a requirement
                if type(key) is ast.Constant and type(key.value) is str and inside(node, listed):
                    extra = key.value
    item = string_requirement(checker.source, node, value)
    if item is not None:
        _requirement(checker, item, [], extra)


@handles("assign", "NPU501", "NPU502", "NPU503", values=(ast.List, ast.Tuple))
def check_setup_requirement_list(checker: Checker, node: ast.Assign | ast.AnnAssign, scope: Scope) -> None:
    """`extras_gpu = ["faiss-gpu>=1.6.3"]` at the top of setup.py, a list its `setup(...)` takes
    (`extras_require={"gpu": extras_gpu}`, `install_requires=base + extras_gpu`)."""
    if scope.kind != MODULE or not checker.path or not checker.path.endswith("setup.py"):
        return
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    names = checker.text_fact("setup-requirement-names", _setup_names)
    if len(targets) != 1 or type(targets[0]) is not ast.Name or targets[0].id not in names:
        return
    value = node.value
    if not isinstance(value, (ast.List, ast.Tuple)):  # (values= gives no other)
        return
    extra = names[targets[0].id]
    for element in value.elts:
        if type(element) is ast.Constant and type(element.value) is str:
            item = string_requirement(checker.source, element, element.value)
            if item is not None:
                _requirement(checker, item, [], extra)


def _setup_names(checker: Checker) -> dict[str, str | None]:
    """The names a `setup(...)` call of the text reads its requirements from (SETUP_KEYWORDS'
    values, at any depth: a dict's values, a sum of lists), each with the extra it is handed as
    (`extras_require={"gpu": extras_gpu}`) or None; none where the text does not parse."""
    try:
        tree = ast.parse(checker.source.text)
    except (SyntaxError, ValueError):
        return {}
    names: dict[str, str | None] = {}
    for call in ast.walk(tree):
        if type(call) is ast.Call and last_name(call.func) == "setup":
            for kw in call.keywords:
                if kw.arg in SETUP_KEYWORDS:
                    names.update((name.id, None) for name in ast.walk(kw.value) if type(name) is ast.Name)
                if kw.arg == "extras_require" and type(kw.value) is ast.Dict:
                    names.update((value.id, key.value) for key, value in zip(kw.value.keys, kw.value.values)
                                 if type(key) is ast.Constant and type(key.value) is str and type(value) is ast.Name)
    return names
