"""Where the second run happens, and how: a device, an emulation, or MindSpore."""

from __future__ import annotations

import os
import sys

from .emulation import FP16_MAX, HF32_NOTE
from .failures import SetupError, import_required

class Target:
    """Where the second run happens, and how (device, emulation, mindspore)."""

    def __init__(self, name: str, device: str, emulate: dict | None = None):
        self.name, self.device, self.emulate = name, device, emulate
        self.notes: list[str] = []
        self.extra: dict = {}

    @property
    def label(self) -> str:
        return "MindSpore" if self.name == "mindspore" else self.device

    @property
    def on_cpu(self) -> bool:
        return self.device == "cpu"

    def describe(self) -> dict:
        return {"name": self.name, "device": self.device, "emulated": self.emulate is not None,
                "emulation": self.emulation_notes(), **self.extra}

    def emulation_notes(self) -> list[str]:
        if self.emulate is None:
            return []
        notes = []
        hf32 = self.emulate.get("hf32", True)
        if hf32 and self.emulate.get("conv_hf32", True):
            notes.append("fp32 convolutions in HF32 (Ascend A2/A3 default)")
        if hf32 and self.emulate.get("matmul_hf32"):
            notes.append("fp32 matmul in HF32 (torch.npu.matmul.allow_hf32 = True)")
        if self.emulate.get("autocast"):
            notes.append(f"autocast to {self.emulate['autocast']}")
        if self.emulate.get("fp16_saturation"):
            notes.append(f"fp16 saturation mode: overflow gives ±{FP16_MAX:g}, NaN gives 0")
        return notes + list(self.emulate.get("assumptions", []))

    @classmethod
    def prepare(cls, torch, job: dict) -> "Target":
        name = job.get("target")
        options = job.get("options", {})
        if name == "cpu":
            return cls("cpu", "cpu")
        if name == "emulate":
            target = cls("emulate", "cpu", dict(options.get("emulate") or {}))
            if target.emulate.get("hf32", True) and (target.emulate.get("conv_hf32", True)
                                                     or target.emulate.get("matmul_hf32")):
                target.notes.append(HF32_NOTE)
            return target
        if name == "cuda":
            if not torch.cuda.is_available():
                why = "torch was built without CUDA" if torch.version.cuda is None else "no GPU is visible"
                raise SetupError("no-device", f"no CUDA device: torch.cuda.is_available() is False ({why}; "
                                              f"torch {torch.__version__})")
            return cls("cuda", "cuda:0")
        if name == "npu":
            return cls._prepare_npu(torch, options)
        if name == "mindspore":
            ms = import_required("mindspore", "mindspore")
            device = (options.get("mindspore") or {}).get("device")
            if device:
                ms.set_device(device)
            target = cls("mindspore", "cpu")
            target.extra = {"mindspore": ms.__version__, "mindspore_device": ms.get_context("device_target")}
            return target
        raise SetupError("bad-job", f"unknown target {name!r}")

    @classmethod
    def _prepare_npu(cls, torch, options: dict) -> "Target":
        if options.get("fallback_cpu_disable"):
            # Read by torch_npu at import time: unsupported ops raise instead of silently
            # running on the CPU.
            os.environ["TORCH_NPU_FALLBACK_CPU_DISABLE"] = "1"
        try:
            import torch_npu  # noqa: F401
            from torch_npu.contrib import transfer_to_npu  # noqa: F401  (CUDA calls → NPU)
        except ModuleNotFoundError as exc:
            if exc.name and exc.name.startswith("torch_npu"):
                raise SetupError("missing-package", f"torch_npu is not installed in {sys.executable}") from None
            raise SetupError("missing-package", f"torch_npu cannot load CANN: {exc}") from None
        except (ImportError, OSError, RuntimeError) as exc:
            raise SetupError("missing-package", f"torch_npu cannot load CANN: {type(exc).__name__}: {exc}") from None
        if not torch.npu.is_available():
            raise SetupError("no-device", "no NPU device: torch.npu.is_available() is False")
        target = cls("npu", "npu:0")
        target.extra = {"torch_npu": getattr(torch_npu, "__version__", "?")}
        if options.get("fallback_cpu_disable"):
            target.notes.append("TORCH_NPU_FALLBACK_CPU_DISABLE=1: ops without an NPU kernel raise")
        return target
