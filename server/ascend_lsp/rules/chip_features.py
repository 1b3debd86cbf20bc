"""Chip profiles, shared by the rules of what the configured Ascend chip (`chip` setting)
lacks (NPU116, NPU204, NPU205, NPU408): the features a chip lacks, read from
mappings/platform/chips.toml, the API names that stand for each feature, and the report
that names the chips a finding applies to (on the others the rules are silent)."""

from __future__ import annotations

import ast
from collections.abc import Callable

from ..engine.checker import Checker
from ..engine.config import Settings
from ..knowledge.chips import Feature, load_chips
from ..engine.registry import TableRef

CHIP_TABLE = TableRef("mappings/platform/chips.toml")

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
COMPILE_MODE = frozenset({"torch_npu.npu.set_compile_mode", "torch.npu.set_compile_mode"})


def chip_doc(feature: str) -> str:
    """The sentence of a chip rule's page that says where its chips are listed."""
    return f"The chips are listed in `{CHIP_TABLE}` (feature `{feature}`); on the others the rule is silent."


def lacked(chip: str) -> frozenset[str]:
    """The features the chip lacks: handlers return at once for the others (every call,
    reference and string of a file passes through them)."""
    return load_chips().chips[chip].lacks


def lacks(checker: Checker) -> frozenset[str]:
    """The features the configured chip lacks."""
    return lacked(checker.settings.chip)


def applies(checker: Checker, feature_name: str) -> Feature | None:
    feature = load_chips().features.get(feature_name)
    if feature is None or checker.settings.chip not in feature.chips:
        return None
    return feature


def report_chip(checker: Checker, code: str, feature_name: str, where: ast.AST, name: str) -> None:
    feature = applies(checker, feature_name)
    if feature is None:
        return
    chips = ", ".join(feature.chips)
    text = checker.rules[code].message.format(name=name, chips=chips) + f" {feature.note}"
    checker.report(code, where, text, origin=CHIP_TABLE.path,
                   extra={"chip": checker.settings.chip, "chips": list(feature.chips), "feature": feature.name,
                          "source": feature.source})


def lacking(*features: str) -> Callable[[Settings], bool]:
    """`handles(when=...)`: the settings name a chip that lacks one of `features`."""
    return lambda settings: bool(lacked(settings.chip).intersection(features))


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
    chips = load_chips()
    features = list(chips.features.values())
    lines = ["| chip | " + " | ".join(f.title for f in features) + " |", "|---" * (len(features) + 1) + "|"]
    for name, chip in chips.chips.items():
        label = f"**{name}** (configured)" if name == settings.chip else name
        marks = ["?" if name in f.unknown else ("✘" if name in f.chips else "✔") for f in features]
        lines.append(f"| {label}: {chip.title} | " + " | ".join(marks) + " |")
    return lines
