"""Chip profiles: what the configured Ascend chip (`chip` setting) lacks — bfloat16, IEEE
inf/nan in float16, FP8 — and the slow first run of chips that compile operators online.
Each finding names the chips it applies to; on the others the rule is silent. The facts
are in mappings/platform/chips.toml."""

from __future__ import annotations

import ast
import functools
import re

from ..engine.checker import Checker, Reference
from ..engine.model import Severity
from ..knowledge.platform import Feature, load_platform
from ..engine.walk import StringContext
from ..engine.registry import TableRef, handles, rule

TABLE = TableRef("mappings/platform/chips.toml")
FAILURES = "`mappings/upstream/torch_npu/real_world_failures.md`"

BF16_NAMES = frozenset({"torch.bfloat16"})
BF16_KEYWORDS = frozenset({"bf16", "bf16_full_eval"})  # TrainingArguments and friends
BF16_STRINGS = frozenset({"bf16", "bfloat16"})
DTYPE_KEYWORDS = frozenset({"dtype", "torch_dtype", "mixed_precision", "precision", "compute_dtype",
                            "bnb_4bit_compute_dtype", "param_dtype", "reduce_dtype", "amp_dtype"})
FP8_NAMES = frozenset({"torch.float8_e4m3fn", "torch.float8_e5m2", "torch.float8_e4m3fnuz", "torch.float8_e5m2fnuz",
                       "torch.float8_e8m0fnu"})
FP8_KEYWORDS = frozenset({"kv_cache_dtype", "mixed_precision", "quantization", "dtype"})
INF_CHECKS = frozenset({"torch.isnan", "torch.isinf", "torch.isfinite", "torch.isposinf", "torch.isneginf",
                        "torch.nan_to_num"})
INF_METHODS = frozenset({"isnan", "isinf", "isfinite", "isposinf", "isneginf", "nan_to_num"})
INF_CONSTANTS = frozenset({"torch.inf", "torch.nan", "math.inf", "math.nan"})
DTYPE_TEST = re.compile(r"(?:==|!=|\bin|\bis(?:\s+not)?)\s*[\[({]?[\w.,\s]*$")
COMPILE_MODE = frozenset({"torch_npu.npu.set_compile_mode", "torch.npu.set_compile_mode"})


def _doc_chips(feature: str) -> str:
    return f"The chips are listed in `{TABLE}` (feature `{feature}`); on the others the rule is silent."


rule(
    code="NPU204", name="bf16-on-chip", severity=Severity.ERROR, fix="never", table=TABLE,
    message="bfloat16 (`{name}`) is not supported on {chips}.",
    doc=dict(
        what="Finds bfloat16 when the configured `chip` has none (Atlas training 910A, Atlas inference 310P): "
             "`torch.bfloat16`, `bf16=True` (Hugging Face `TrainingArguments`), `torch_dtype=\"bfloat16\"`, "
             "`mixed_precision=\"bf16\"`. " + _doc_chips("bf16"),
        why="Those chips have no bfloat16 units: the first cast fails (`aclnnCast ... not implemented for "
            "DT_BFLOAT16`), or the config is rejected. Many LLM recipes default to bf16.",
        example="model = AutoModel.from_pretrained(name, torch_dtype=torch.bfloat16)  # NPU204 on 910A\n\n"
                "# choose the dtype from the chip\n\n"
                "dtype = torch.bfloat16 if torch.npu.is_bf16_supported() else torch.float16",
        fix="None automatic: float16 needs loss scaling, a choice for a person.",
        source=f"{FAILURES} #6 (hiyouga/LlamaFactory#4339, #4165, #7522; vllm-project/vllm-ascend#9294).",
    ),
)

rule(
    code="NPU205", name="fp8-on-chip", severity=Severity.ERROR, fix="never", table=TABLE,
    message="FP8 (`{name}`) is not supported on {chips}.",
    doc=dict(
        what="Finds FP8 dtypes (`torch.float8_e4m3fn`, `torch.float8_e5m2`, …) and FP8 requested by "
             "configuration (`kv_cache_dtype=\"fp8\"`, `mixed_precision=\"fp8\"`, `quantization=\"fp8\"`) when the "
             "configured chip has no FP8 (910A, 310P, A2, A3). " + _doc_chips("fp8")
             + " Ascend 950DT is not reported: the facts do not say.",
        why="FP8 KV caches crash at allocation on Atlas A2 and are not supported on A3 either; torch_npu marks "
            "the float8 storage methods ✘ on every chip.",
        example='llm = LLM(model, kv_cache_dtype="fp8")  # NPU205\n\nllm = LLM(model)',
        fix="None automatic: use bf16/fp16, or INT8 quantization through msModelSlim.",
        source=f"{FAILURES} #17 (vllm-project/vllm-ascend#8102, #11498; flagos-ai/FlagTree#987); "
               "Ascend native API support list 2.13.0, torch-Storage page.",
    ),
)

rule(
    code="NPU408", name="fp16-saturation", severity=Severity.WARNING, fix="never", table=TABLE,
    message="`{name}` relies on IEEE inf/nan, but {chips} run float16 in saturation mode.",
    doc=dict(
        what="Finds inf/nan checks (`torch.isnan`, `isinf`, `isfinite`, `nan_to_num`, `x.isnan()`) and inf "
             "sentinels (`float(\"-inf\")`, `torch.inf`, `math.inf`) when the configured chip runs float16 in "
             "saturation mode only (910A, 310P). " + _doc_chips("saturation"),
        why="In saturation mode an overflow gives ±65504 instead of inf and NaN becomes 0: overflow checks "
            "never fire, and a `-inf` attention mask in float16 is a finite number, so masked positions still "
            "get weight.",
        example='scores = scores.masked_fill(mask, float("-inf"))  # NPU408 on 910A\n\n'
                "scores = scores.masked_fill(mask, torch.finfo(scores.dtype).min)",
        fix="None automatic.",
        source=f"{FAILURES} #9 (hiascend INF_NAN_MODE_ENABLE page; open-mmlab/mmdetection#9267); "
               "`FACTS.md` §6 inf/nan handling.",
    ),
)

rule(
    code="NPU116", name="online-operator-compilation", severity=Severity.INFO, fix="never", table=TABLE,
    message="{chips} compile operators online on first use; call "
            "`torch_npu.npu.set_compile_mode(jit_compile=False)` after importing torch_npu.",
    doc=dict(
        what="Finds entry scripts (with `if __name__ == \"__main__\":`) that import torch_npu but never call "
             "`torch_npu.npu.set_compile_mode` when the configured chip compiles operators online by default "
             "(910A, 310P). " + _doc_chips("jit-compile"),
        why="There `jit_compile` defaults to True: operators are compiled at first use and the first step "
            "can take minutes (600 s instead of 40 s for a Stable Diffusion image on 310P).",
        example="import torch_npu\n\n# add\n\ntorch_npu.npu.set_compile_mode(jit_compile=False)",
        fix="None automatic: it belongs right after the imports of the entry script.",
        source=f"{FAILURES} #16 (Comfy-Org/ComfyUI#10050, open-mmlab/mmengine#847).",
    ),
)


@functools.lru_cache(maxsize=16)
def _limits(chip: str, version: str) -> frozenset[str]:
    """The features the chip lacks: handlers return at once for the others (every call,
    reference and string of a file passes through them)."""
    return frozenset(name for name, f in load_platform(version).features.items() if chip in f.chips)


def _lacks(checker: Checker) -> frozenset[str]:
    return _limits(checker.settings.chip, checker.settings.torch_npu_version)


def _applies(checker: Checker, feature_name: str) -> Feature | None:
    feature = load_platform(checker.settings.torch_npu_version).features.get(feature_name)
    if feature is None or checker.settings.chip not in feature.chips:
        return None
    return feature


def _report(checker: Checker, code: str, feature_name: str, where: ast.AST, name: str) -> None:
    feature = _applies(checker, feature_name)
    if feature is None:
        return
    chips = ", ".join(feature.chips)
    text = checker.rules[code].message.format(name=name, chips=chips) + f" {feature.note}"
    checker.report(code, where, text, origin=TABLE.path,
                   extra={"chip": checker.settings.chip, "chips": list(feature.chips), "feature": feature.name,
                          "source": feature.source})


# qualified name → (code, feature, only when called)
REFERENCES = {
    **{name: ("NPU204", "bf16", False) for name in BF16_NAMES},
    **{name: ("NPU205", "fp8", False) for name in FP8_NAMES},
    **{name: ("NPU408", "saturation", False) for name in INF_CONSTANTS},
    **{name: ("NPU408", "saturation", True) for name in INF_CHECKS},
    **{name: ("NPU116", "jit-compile", False) for name in COMPILE_MODE},
}


@handles("reference", "NPU204", "NPU205", "NPU408", "NPU116",
         names=frozenset(name.rpartition(".")[2] for name in REFERENCES))
def check_chip_reference(checker: Checker, ref: Reference) -> None:
    hit = REFERENCES.get(ref.qualname)
    if hit is None:
        return
    code, feature, called = hit
    if code == "NPU116":
        checker.note("set-compile-mode", ref.node)
    elif code in ("NPU204", "NPU205") and _dtype_test(checker, ref.node):
        return  # `x.dtype == torch.bfloat16`, `dtype in [torch.float8_e4m3fn, ...]`: asks, makes nothing
    elif ref.call is not None or not called:
        _report(checker, code, feature, ref.node, ref.qualname)


def _dtype_test(checker: Checker, node: ast.AST) -> bool:
    """The dtype is an operand of a comparison on its line (`==`, `!=`, `in`, `is`), alone or
    in the display it is compared with."""
    where = checker.range(node)
    return DTYPE_TEST.search(checker.source.line(where.start_line)[:where.start_col]) is not None


@handles("import", "NPU116")
def note_torch_npu_import(checker: Checker, stmt: ast.stmt, alias: ast.alias, qualname: str) -> None:
    if "jit-compile" in _lacks(checker) and (qualname == "torch_npu" or qualname.startswith("torch_npu.")):
        checker.note("imports-torch-npu", alias)


def lacking(*features: str):
    """`handles(when=...)`: the settings name a chip that lacks one of `features`."""
    return lambda settings: bool(_limits(settings.chip, settings.torch_npu_version).intersection(features))


@handles("call", "NPU204", "NPU205", "NPU408", when=lacking("bf16", "saturation"))
def check_chip_call(checker: Checker, call: ast.Call, qualname: str | None) -> None:
    for kw in call.keywords:
        value = kw.value
        if kw.arg in BF16_KEYWORDS and type(value) is ast.Constant and value.value is True:
            _report(checker, "NPU204", "bf16", kw, f"{kw.arg}=True")
    func = call.func
    if type(func) is ast.Attribute and func.attr in INF_METHODS and qualname is None and not call.args:
        _report(checker, "NPU408", "saturation", func, f".{func.attr}()")
    elif type(func) is ast.Name and func.id == "float" and qualname is None and len(call.args) == 1:
        arg = call.args[0]
        if type(arg) is ast.Constant and type(arg.value) is str and arg.value.strip().lower() in ("inf", "-inf",
                                                                                                  "nan", "+inf"):
            _report(checker, "NPU408", "saturation", call, f'float("{arg.value}")')


@handles("string", "NPU204", "NPU205", "NPU116", when=lacking("bf16", "fp8", "jit-compile"))
def check_chip_string(checker: Checker, node: ast.AST, value: str, context: StringContext) -> None:
    if context.kind == "compare":
        if value == "__main__":
            checker.note("entry-script", node)
        return
    if context.kind != "arg" or (context.keyword not in DTYPE_KEYWORDS and context.keyword not in FP8_KEYWORDS):
        return
    lowered = value.lower()
    if context.keyword in DTYPE_KEYWORDS and lowered in BF16_STRINGS:
        _report(checker, "NPU204", "bf16", node, f'{context.keyword}="{value}"')
    elif context.keyword in FP8_KEYWORDS and lowered.startswith("fp8"):
        _report(checker, "NPU205", "fp8", node, f'{context.keyword}="{value}"')


@handles("module", "NPU116")
def check_compile_mode(checker: Checker, facts: dict) -> None:
    if "entry-script" not in facts or "imports-torch-npu" not in facts or "set-compile-mode" in facts:
        return
    feature = _applies(checker, "jit-compile")
    if feature is not None:
        checker.report("NPU116", facts["imports-torch-npu"], chips=", ".join(feature.chips), origin=TABLE.path,
                       extra={"chip": checker.settings.chip, "chips": list(feature.chips), "feature": feature.name})


def feature_of(qualname: str) -> str | None:
    """The chip feature an API name stands for (for hover), or None."""
    if qualname in BF16_NAMES or qualname.endswith("is_bf16_supported"):
        return "bf16"
    if qualname in FP8_NAMES:
        return "fp8"
    if qualname in INF_CHECKS or qualname in INF_CONSTANTS:
        return "saturation"
    if qualname in COMPILE_MODE:
        return "jit-compile"
    return None


def chip_table(settings) -> list[str]:
    """Markdown: every chip against every feature, the configured chip in bold."""
    platform = load_platform(settings.torch_npu_version)
    features = list(platform.features.values())
    lines = ["| chip | " + " | ".join(f.title for f in features) + " |", "|---" * (len(features) + 1) + "|"]
    for name, row in platform.chips.items():
        label = f"**{name}** (configured)" if name == settings.chip else name
        marks = ["?" if name in f.unknown else ("✘" if name in f.chips else "✔") for f in features]
        lines.append(f"| {label}: {row['title']} | " + " | ".join(marks) + " |")
    return lines
