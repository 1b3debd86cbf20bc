"""MS301/MS302: what `lsp-check port` (and "Port this file to MindSpore") left to a person.

The port writes `# MS301 port: <reason>` / `# MS302 port: <reason>` above each statement it
could not convert; these rules show them as diagnostics when the port is open.
"""

from __future__ import annotations

import re

from ..engine.checker import Checker
from ..engine.model import Range, Severity
from ..engine.registry import handles, rule

MARKER = re.compile(r"([ \t]*)# (MS30[12]) port: (.+?)[ \t]*$")
SOURCE = "ascend-lsp's port (`lsp-check port`, server/ascend_lsp/port/): the layer specs in `port/specs.py` and " \
         "the mapping tables `mappings/mindspore/api-2.4.toml`, `traps.toml` and `weights.toml` it reads."

rule(
    code="MS301", name="port-needs-person", severity=Severity.WARNING, fix="never",
    targets=("torch_npu", "mindspore"),
    message="{reason}",
    doc=dict(
        what="Shows the statements of a MindSpore port that the port converted only in part, or left as they were "
             "although MindSpore has a counterpart: the arguments need a person (a padding mode MindSpore lacks, "
             "`momentum=None`, a layer picked with `getattr` at run time, `.cuda()`).",
        why="A port that runs is not yet a port that computes the same numbers: these are the places where the "
            "mapping tables say the counterpart differs in a way no rewrite can settle on its own.",
        example="# MS301 port: getattr(nn, …) picks the layer at run time: check that the mindspore.nn class of "
                "that name takes the same arguments\nself.rnn = getattr(nn, rnn_type)(ninp, nhid, nlayers)",
        fix="None automatic: change the statement, then delete the marker comment.",
        source=SOURCE,
    ),
)

rule(
    code="MS302", name="port-unsupported", severity=Severity.ERROR, fix="never",
    targets=("torch_npu", "mindspore"),
    message="{reason}",
    doc=dict(
        what="Shows the statements of a MindSpore port that still use a PyTorch API the port has no counterpart "
             "for (`torch.fft`, `torch.distributed`, `torchvision` models…).",
        why="The statement still calls torch: the port fails on MindSpore (or silently keeps using torch where "
            "both are installed).",
        example="# MS302 port: `torch.fft.rfft` has no MindSpore counterpart in the port tables\n"
                "spectrum = torch.fft.rfft(signal)",
        fix="None automatic: rewrite the statement with MindSpore APIs, then delete the marker comment.",
        source=SOURCE,
    ),
)


@handles("module", "MS301", "MS302")
def report_markers(checker: Checker, facts: dict) -> None:
    source = checker.source
    if " port: " not in source.text:
        return
    for index in range(len(source.lines)):
        match = MARKER.match(source.line(index))
        if match:
            start = len(match.group(1))
            checker.report(match.group(2), Range(index, start, index, len(match.group(0).rstrip())),
                           reason=match.group(3))
