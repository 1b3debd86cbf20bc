"""Limits below the level of a whole API: an argument Ascend's support list marks
unsupported (NPU209, reported on the argument), and ops real projects found to fall back
to the CPU or run pathologically slowly (NPU208). Facts: mappings/platform/arguments-*.toml
and fallback.toml."""

from __future__ import annotations

import ast

from ..engine.checker import Checker, Reference
from ..engine.model import Severity
from ..knowledge.platform import load_platform
from ..knowledge.api_tables import Tables
from ..engine.registry import TableRef, handles, rule

FAILURES = "`mappings/upstream/torch_npu/real_world_failures.md`"

rule(
    code="NPU208", name="known-slow-op", severity=Severity.INFO, fix="never",
    table=TableRef("mappings/platform/fallback.toml"),
    message="`{name}` falls back to the CPU or is pathologically slow on the NPU.",
    doc=dict(
        what="Finds ops that real projects found to fall back to the CPU or to be much slower (or to error) on "
             "the NPU: `torchvision.ops.nms` / `batched_nms`, `nn.TransformerEncoderLayer` (its "
             "inference fast path), `F.interpolate(mode=\"linear\")`, `torch.linalg.eig` / `eigvals`.",
        why="A CPU fallback copies the tensors to the host and back on every call and prints a CAUTION warning; "
            "in a loop (NMS per image) it dominates the step time. Ascend's support list does not mark these. "
            "`torch.isin` is not reported: its fallback is evidenced for torch_npu 2.2 only.",
        example="keep = torchvision.ops.nms(boxes, scores, 0.5)  # NPU208\n\n"
                "layer = nn.TransformerEncoderLayer(512, 8)  # NPU208\n"
                "torch.backends.mha.set_fastpath_enabled(False)",
        fix="None automatic: the message names the workaround the evidence gives.",
        source=f"{FAILURES} #8 (Ascend/pytorch#40, #51, #69; opendatalab/MinerU#1695, #1941; "
               "pytorch/pytorch#116504, #136302); torch_npu 2.14.0 wheel CPU-fallback strings.",
    ),
)

rule(
    code="NPU209", name="unsupported-argument", severity=Severity.INFO, fix="never",
    table=TableRef("mappings/platform/arguments-<version>.toml"),
    message="`{argument}` of `{api}` is not supported on the NPU ({chip}).",
    doc=dict(
        what="Finds arguments that Ascend's native API support list marks unsupported for an API that is "
             "otherwise supported: `nn.LSTM(dropout=…, proj_size=…)`, `nn.GRU(dropout=…)`, "
             "`F.interpolate(scale_factor=…)`, `torch.sum(dtype=…)`. The finding is on the argument; passing the "
             "default (`dropout=0.0`) is fine. Arguments that only relax a guarantee (`topk(sorted=False)`) are "
             "left out: sorted output keeps that contract.",
        why="Ascend marks the argument unsupported; the list does not say whether the call then fails or "
            "ignores the argument, so this is advice (info) to test that call on the NPU.",
        example="rnn = nn.LSTM(256, 256, num_layers=2, dropout=0.1)  # NPU209 on `dropout=0.1`\n\n"
                "# apply dropout between the layers yourself\n\n"
                "layers = [nn.LSTM(256, 256) for _ in range(2)]\ndrop = nn.Dropout(0.1)",
        fix="None automatic.",
        source="Ascend native API support list (PyTorch原生接口清单) 2.13.0, 限制与说明 column "
               "(`不支持`dropout`参数` …).",
    ),
)


def _literal(node: ast.expr) -> object:
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return ...  # not a literal: its value is unknown here


def _unsupported(row: dict, value: ast.expr) -> bool:
    literal = _literal(value)
    if "value" in row:
        return literal is not ... and repr(literal) == row["value"]
    if literal is None:
        return False
    if literal is not ... and "default" in row:
        return literal != ast.literal_eval(row["default"])
    return True


def _called(tables: Tables) -> frozenset[str]:
    """The last parts of the APIs the two tables name (the names this handler reads)."""
    platform = load_platform(tables.support_version)
    return frozenset(api.rpartition(".")[2] for api in (*platform.arguments, *platform.fallbacks))


@handles("reference", "NPU208", "NPU209", names=_called)
def check_limits(checker: Checker, ref: Reference) -> None:
    call = ref.call
    if type(call) is not ast.Call or call.func is not ref.node:
        return  # named, not called
    qualname = ref.qualname
    platform = load_platform(checker.settings.torch_npu_version)
    rows = platform.arguments.get(qualname)
    if rows and "NPU209" in checker.active:
        chip = checker.settings.support_chip
        keywords = {kw.arg: kw for kw in call.keywords if kw.arg}
        for row in rows:
            kw = keywords.get(row["argument"])
            if kw is None or not row["chips"].get(chip, True) or not _unsupported(row, kw.value):
                continue
            message = checker.rules["NPU209"].message.format(argument=row["argument"], api=qualname,
                                                             chip=checker.settings.chip)
            checker.report("NPU209", kw, f"{message} Ascend notes: {row['limitation']}",
                           origin=f"mappings/platform/arguments-{checker.settings.torch_npu_version}.toml",
                           extra={"api": qualname, "argument": row["argument"], "source": row["source"]})
    for row in platform.fallbacks.get(qualname, ()):
        if "keyword" in row:
            kw = next((k for k in call.keywords if k.arg == row["keyword"]), None)
            if kw is None or _literal(kw.value) != row["value"]:
                continue
        text = checker.rules["NPU208"].message.format(name=qualname) + " " + row["note"]
        checker.report("NPU208", call.func, text, origin="mappings/platform/fallback.toml",
                       extra={"api": qualname, "source": row["source"]})
