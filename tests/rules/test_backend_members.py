"""A class's CUDA method beside one for another device, and a class beside its NPU variant
(engine/backend_members.py), are advice with the reason, their fixes shown, never applied;
an edit that changes which methods or classes stand beside them is read with the whole
class or module."""

from __future__ import annotations

from ascend_lsp.analysis import analyze, fix_text
from ascend_lsp.engine.analyzer import TextEdit
from ascend_lsp.engine.backend_members import cuda_classes
from ascend_lsp.engine.config import Settings
from ascend_lsp.engine.model import Applicability

MEMBERS = '''import torch


class Preprocessor:
    def cuda(self):
        return self.data.cuda()

    def npu(self):
        return self.data.npu()


class ProfilerHook:
    def before_run(self):
        torch.cuda.synchronize()


class NPUProfilerHook:
    def before_run(self):
        torch.npu.synchronize()
'''


def severities(text: str, **kwargs) -> dict[tuple[int, str], str]:
    return {(f.range.start_line + 1, f.code): f.severity.name
            for f in analyze(text, Settings(), "x.py", **kwargs).findings if f.code in ("NPU101", "NPU102", "NPU103")}


def test_members_beside_the_npu_are_advice() -> None:
    found = [f for f in analyze(MEMBERS, Settings(), "x.py").findings if f.code in ("NPU102", "NPU103")]
    assert [(f.range.start_line + 1, f.code, f.severity.name) for f in found] == [
        (6, "NPU102", "INFO"), (14, "NPU103", "INFO")]
    assert found[0].message.endswith(
        " (In `Preprocessor.cuda()`, beside `Preprocessor.npu()`: it runs only when a caller asks for CUDA.)")
    assert found[1].message.endswith(" (In `ProfilerHook`, beside `NPUProfilerHook` in the same module: an NPU "
                                     "run uses that class, and this one only where CUDA was chosen.)")
    assert all(fix.applicability == Applicability.DISPLAY for f in found for fix in f.fixes)
    fixed = fix_text(MEMBERS, Settings(), "x.py", unsafe=True).text
    assert "return self.data.cuda()" in fixed and "torch.cuda.synchronize()" in fixed


def test_the_npu_variant_is_the_other_class_with_npu_in_its_name() -> None:
    assert set(cuda_classes("class CudaGraphRunner(Base):\n    pass\nclass NpuGraphRunner(Base):\n    pass\n")) \
        == {"CudaGraphRunner"}
    assert cuda_classes("class Runner:\n    pass\nclass NPURunner(Runner):\n    pass\n") == {}  # built on it
    assert cuda_classes("class Runner:\n    pass\nclass NPUProfiler:\n    pass\n") == {}


def edited(text: str, line: int, new: str) -> tuple[str, TextEdit]:
    lines = text.split("\n")
    lines[line - 1] = new
    return "\n".join(lines), TextEdit(line - 1, line - 1, 0)


def test_renaming_the_sibling_method_or_class_reads_the_others_again() -> None:
    base = analyze(MEMBERS, Settings(), "x.py")
    for line, new in ((8, "    def npx(self):"), (17, "class NPXProfilerHook:"),
                      (5, "    def cuda(self, blocking=True):")):
        text, edit = edited(MEMBERS, line, new)
        assert severities(text, previous=base, edit=edit) == severities(text)
    text, edit = edited(MEMBERS, 8, "    def npx(self):")
    assert severities(text, previous=base, edit=edit)[(6, "NPU102")] == "WARNING"
    text, edit = edited(MEMBERS, 17, "class NPXProfilerHook:")
    assert severities(text, previous=base, edit=edit)[(14, "NPU103")] == "WARNING"


def test_tensorrt_and_apex_are_chosen_by_their_users() -> None:
    text = ("import torch\n\n\nclass TensorRTBackend:\n    def load(self):\n        torch.cuda.synchronize()\n\n\n"
            "class Trainer:\n    def step(self):\n        torch.cuda.synchronize()\n")
    assert severities(text) == {(6, "NPU103"): "INFO", (11, "NPU103"): "WARNING"}
    module = {(f.range.start_line + 1, f.code): f.severity.name for f in
              analyze(text, Settings(), "ultralytics/nn/backends/tensorrt.py").findings if f.code == "NPU103"}
    assert module == {(6, "NPU103"): "INFO", (11, "NPU103"): "INFO"}  # the TensorRT module of a backends folder
    lines = text.split("\n")
    lines[5] = "        torch.cuda.synchronize(0)"
    edited = "\n".join(lines)
    base = analyze(text, Settings(), "x.py")
    assert severities(edited, previous=base, edit=TextEdit(5, 5, 0)) == severities(edited)
