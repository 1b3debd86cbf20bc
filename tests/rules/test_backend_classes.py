"""A class that is one backend of a per-backend scheme (engine/guards.backend_class): CUDA
calls in the CUDA backend's class are advice, like those on a CUDA-only branch, and the
fixes there are shown, never applied."""

from __future__ import annotations

import ast

from ascend_lsp.analysis import analyze, fix_text
from ascend_lsp.engine.config import Settings
from ascend_lsp.engine.analyzer import TextEdit
from ascend_lsp.engine.checker import OFF_NPU
from ascend_lsp.engine.guards import backend_class
from ascend_lsp.engine.model import Applicability

ACCELERATORS = '''import torch
from abc import ABC


class DeepSpeedAccelerator(ABC):
    pass


class CUDA_Accelerator(DeepSpeedAccelerator):
    def __init__(self):
        self._communication_backend_name = "nccl"

    def synchronize(self, device_index=None):
        return torch.cuda.synchronize(device_index)


class NPU_Accelerator(DeepSpeedAccelerator):
    def synchronize(self, device_index=None):
        return torch.npu.synchronize(device_index)


class CudaHelper:
    def synchronize(self):
        return torch.cuda.synchronize()


def platform():
    class CudaPlatform(Platform):
        def empty_cache(self):
            torch.cuda.empty_cache()

    return CudaPlatform
'''


def severities(text: str, **kwargs) -> dict[tuple[int, str], str]:
    return {(f.range.start_line + 1, f.code): f.severity.name for f in analyze(text, Settings(), "x.py", **kwargs).findings}


def test_recognised_classes() -> None:
    def kind(source: str) -> str | None:
        node = ast.parse(source).body[0]
        assert isinstance(node, ast.ClassDef)
        return backend_class(node)

    assert kind("class CUDA_Accelerator(DeepSpeedAccelerator): pass") == "cuda"
    assert kind("class NvmlCudaPlatform(CudaPlatformBase): pass") == "cuda"
    assert kind("class CudaPlatform(interface.Platform): pass") == "cuda"
    assert kind("class NPUPlatform(Platform): pass") == "npu"
    assert kind("class CudaHelper: pass") is None  # no scheme it is one backend of
    assert kind("class CudaKernel(torch.nn.Module): pass") is None
    assert kind("class Barracuda(Platform): pass") is None  # "cuda" inside a word
    assert kind("class CudaToNpuPlatform(Platform): pass") is None  # names both
    assert kind("class CudaAttentionBackend(AttentionBackend): pass") is None  # kernels, not a device
    # another device's class of such a scheme, the NPU's sibling; not the CPU's, which a scheme
    # that knows no NPU chooses on an NPU host
    assert kind("class HPU_Accelerator(DeepSpeedAccelerator): pass") == "other"
    assert kind("class XLAAccelerator(Accelerator): pass") == "other"
    assert kind("class CPU_Accelerator(DeepSpeedAccelerator): pass") is None
    assert kind("class HpuHelper: pass") is None


def test_cuda_backend_class_is_advice() -> None:
    found = analyze(ACCELERATORS, Settings(), "x.py").findings
    assert {(f.range.start_line + 1, f.code): f.severity.name for f in found} == {
        (11, "NPU107"): "INFO", (14, "NPU103"): "INFO",  # the CUDA backend's class
        (24, "NPU103"): "WARNING",  # not a backend of a scheme
        (30, "NPU103"): "INFO",  # a nested class
    }
    for f in found:
        if f.range.start_line + 1 in (11, 14, 30):
            assert f.message.endswith(OFF_NPU)
        if f.severity.name == "INFO":
            assert f.fixes and all(fix.applicability == Applicability.DISPLAY for fix in f.fixes)


def test_fixes_leave_the_cuda_backend_alone() -> None:
    fixed = fix_text(ACCELERATORS, Settings(), "x.py", unsafe=True).text
    assert fixed.count("torch.cuda.") == 2  # the CUDA backend's and the nested platform's
    assert '"nccl"' in fixed and "return torch.npu.synchronize()\n" in fixed  # CudaHelper is fixed


def test_cuda_branch_fixes_are_not_applied() -> None:
    text = "import torch\n\nif torch.npu.is_available():\n    pass\nelif torch.cuda.is_available():\n    torch.cuda.synchronize()\n"
    assert "torch.cuda.synchronize()" in fix_text(text, Settings(), "x.py", unsafe=True).text


def test_editing_a_member_keeps_the_class_context() -> None:
    base = analyze(ACCELERATORS, Settings(), "x.py")
    lines = ACCELERATORS.split("\n")
    lines[13] = "        return torch.cuda.synchronize(device_index) or torch.cuda.current_device()"
    edited = "\n".join(lines)
    incremental = severities(edited, previous=base, edit=TextEdit(13, 13, 0))
    assert incremental == severities(edited)
    assert incremental[(14, "NPU103")] == "INFO"
