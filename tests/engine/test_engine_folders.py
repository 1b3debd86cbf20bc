"""A file named for TensorRT or in a folder of the project so named (`tools/trt.py`, `runtime/triton_trtllm/`,
`deploy/tensorrt/`): it serves a model through NVIDIA's engine alone, so its findings are info
that say so, its configs' too; a folder above the project's root says nothing of the project.
And a file or folder named for FP8, on a chip without FP8, or for another device (`mlu_group_gemm.py`),
the GPU's module of a pair written per device or per collective library, a module of one device's kernels
(engine/checker.py off_npu_file); Triton in a file or folder named for the NPU (triton-ascend), whose other
findings stay; CUDA names in an environment report; a pyproject.toml's extra named for the GPU."""

from __future__ import annotations

from pathlib import Path

import pytest

from ascend_lsp.analysis import analyze
from ascend_lsp.engine.config import Settings
from ascend_lsp.engine.model import Finding, Severity
from ascend_lsp.project import ProjectContext

CODE = 'import torch\n\nmodel = torch.load("m.pt").to("cuda")\ntorch.cuda.synchronize()\n'
COMPOSE = ("services:\n  server:\n    image: nvcr.io/nvidia/tritonserver:24.05-py3\n    deploy:\n      resources:\n"
           "        reservations:\n          devices:\n            - driver: nvidia\n              count: all\n"
           "              capabilities: [gpu]\n")


def findings(root: Path, relative: str, text: str, select: tuple[str, ...] = ("NPU1",)) -> list[Finding]:
    """The findings of `text` written at `relative` in the project at `root`."""
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return analyze(text, Settings(select=select), str(path), project=ProjectContext(str(root))).findings


def severities(root: Path, relative: str, text: str, select: tuple[str, ...] = ("NPU1",)) -> list[Severity]:
    return [f.severity for f in findings(root, relative, text, select)]


def assert_info_for(root: Path, relative: str, reason: str) -> None:
    """CODE's two findings at `relative` are info, the message ending with `reason`."""
    found = findings(root, relative, CODE)
    assert [f.severity for f in found] == [Severity.INFO, Severity.INFO]
    assert found[0].message.endswith(reason)


def test_a_file_in_a_tensorrt_folder_is_info(tmp_path: Path) -> None:
    assert_info_for(tmp_path, "runtime/triton_trtllm/serve.py",
                    "(In triton_trtllm/, named for TensorRT, NVIDIA's inference engine: what is there serves a model "
                    "only where that engine was chosen, on NVIDIA GPUs.)")
    assert severities(tmp_path, "deploy/tensorrt/docker-compose.yml", COMPOSE, ("NPU8",)) == [Severity.INFO]


def test_a_file_named_for_tensorrt_is_info(tmp_path: Path) -> None:
    found = findings(tmp_path, "tools/export_trt.py", CODE)
    assert [f.severity for f in found] == [Severity.INFO, Severity.INFO]
    assert "(In export_trt.py, named for TensorRT, NVIDIA's inference engine:" in found[0].message
    assert severities(tmp_path, "tools/strtobool.py", CODE) == [Severity.WARNING, Severity.WARNING]


def test_other_folders_keep_their_findings(tmp_path: Path) -> None:
    assert severities(tmp_path, "serving/serve.py", CODE) == [Severity.WARNING, Severity.WARNING]
    assert severities(tmp_path, "serving/docker-compose.yml", COMPOSE, ("NPU8",)) == [Severity.ERROR]
    # the checkout itself under a folder named so
    inner = tmp_path / "trt" / "project"
    assert severities(inner, "serve.py", CODE) == [Severity.WARNING, Severity.WARNING]


FP8 = ('import torch\n\n\ndef to_fp8(x):\n    torch.cuda.synchronize()\n'
       '    return x.to(torch.float8_e4m3fn)\n')


def test_a_file_named_for_fp8_is_info_on_a_chip_without_fp8(tmp_path: Path) -> None:
    """On A2 (no FP8) the choice of FP8 is what changes, and FP8's own code says so; on a chip
    whose FP8 the facts do not settle (950DT) its findings keep their severity."""
    for relative in ("quantization/fp8.py", "pkg/fp8/utils.py", "models/dit_vdn_fp8.py"):
        assert severities(tmp_path, relative, FP8, ("NPU1", "NPU2")) == [Severity.INFO, Severity.INFO], relative
    path = tmp_path / "quantization" / "fp8.py"
    found = analyze(FP8, Settings(select=("NPU1",), chip="950DT"), str(path), project=ProjectContext(str(tmp_path)))
    assert [f.severity for f in found.findings] == [Severity.WARNING]
    assert severities(tmp_path, "quantization/int8.py", FP8, ("NPU1", "NPU2")) == [Severity.WARNING, Severity.ERROR]


def test_the_choice_of_fp8_keeps_its_findings(tmp_path: Path) -> None:
    """A config, a launch script or a script named for FP8 is the choice of FP8 itself."""
    script = FP8 + '\n\nif __name__ == "__main__":\n    to_fp8(torch.ones(2))\n'
    assert severities(tmp_path, "examples/train_fp8.py", script, ("NPU1", "NPU2")) == [Severity.WARNING,
                                                                                       Severity.ERROR]
    config = "compute_environment: LOCAL_MACHINE\ndistributed_type: MULTI_GPU\nmixed_precision: fp8\n"
    assert Severity.ERROR in severities(tmp_path, "configs/fp8.yaml", config, ("NPU8",))


def test_a_file_or_folder_named_for_another_device_is_info(tmp_path: Path) -> None:
    assert_info_for(tmp_path, "ops/moe/mlu_group_gemm.py",
                    "(In mlu_group_gemm.py, named for another device (Cambricon's MLU): it does not run on the NPU.)")
    assert severities(tmp_path, "platforms/rocm/launch.py", CODE) == [Severity.INFO, Severity.INFO]
    assert_info_for(tmp_path, "internlm/accelerator/dipu_accelerator.py",  # torch_dipu names CUDA for its devices
                    "(In dipu_accelerator.py, named for another device (DeepLink's DIPU): it does not run on the NPU.)")
    assert severities(tmp_path, "ops/moe/group_gemm.py", CODE) == [Severity.WARNING, Severity.WARNING]


def test_triton_in_a_folder_named_for_the_npu_is_triton_ascend(tmp_path: Path) -> None:
    kernel = "import triton\nimport triton.language as tl\n"
    assert severities(tmp_path, "kernels/_ascend/chunk.py", kernel, ("NPU305",)) == [Severity.INFO, Severity.INFO]
    assert severities(tmp_path, "models/chunk.py", kernel, ("NPU305",)) == [Severity.ERROR, Severity.ERROR]


def test_a_module_or_folder_named_for_one_devices_kernels_is_info(tmp_path: Path) -> None:
    """Kernels are replaced as a whole where the project chooses them, not line by line: in a
    folder so named (`csrc/`, `*_extension/` only as folders) or a module so named, not the NPU's."""
    assert_info_for(tmp_path, "fastvideo-kernel/python/attn.py",
                    "(In fastvideo-kernel/, named for one device's kernels or extensions: such code is replaced as a "
                    "whole where the project chooses it (a torch path, torch_npu's fused operators, triton-ascend "
                    "for Triton kernels), not line by line.)")
    for relative in ("pkg/ops/kernels/moe.py", "auto_round_extension/cuda/fp4.py", "pkg/qlinear/gguf_triton.py",
                     "pkg/attention/flash_attn_cute.py", "csrc/build.py"):
        assert severities(tmp_path, relative, CODE) == [Severity.INFO, Severity.INFO], relative
    # a module named `extensions.py` holds model code, `utils/cuda.py` CUDA helpers; the NPU's kernels are the port
    for relative in ("mace/modules/extensions.py", "pkg/utils/cuda.py", "pkg/kernels/npu_rope.py",
                     "pkg/_ascend/triton/utils.py"):
        assert severities(tmp_path, relative, CODE) == [Severity.WARNING, Severity.WARNING], relative
    # without a project, only the file's own name: the folder may be where a user keeps their work
    for folder in ("cuda_port", "trt", "ascend-port"):
        loose = tmp_path / folder / "train.py"
        loose.parent.mkdir()
        assert [f.severity for f in analyze(CODE, Settings(select=("NPU1",)), str(loose)).findings] == [
            Severity.WARNING, Severity.WARNING], folder


def test_cuda_names_in_a_file_or_folder_named_for_the_npu_keep_their_severity(tmp_path: Path) -> None:
    """A file or folder named for the NPU may be where a user ports code (`train_npu.py`, `npu_port/`): its
    CUDA names are the port's work."""
    for relative in ("models/modeling_x_npu.py", "npu_port/train.py", "ops/_ascend/rope.py"):
        assert severities(tmp_path, relative, CODE) == [Severity.WARNING, Severity.WARNING], relative


def test_cuda_names_in_an_environment_report_are_info(tmp_path: Path) -> None:
    """`collect_env.py`, `sys_info.py`: it describes the host; `env.py` may hold a project's settings, where
    only the `torch.cuda` names it reads are a report's."""
    assert_info_for(tmp_path, "tools/collect_env.py",
                    "(In an environment report: it describes the host, and on an NPU host reports no GPU; add the "
                    "NPU's facts beside it if the report should show them.)")
    assert severities(tmp_path, "pkg/sys_info.py", CODE) == [Severity.INFO, Severity.INFO]
    assert severities(tmp_path, "pkg/utils/env.py", CODE) == [Severity.WARNING, Severity.INFO]


@pytest.mark.parametrize(("npu", "gpu", "alone"), [
    ("models/modeling_x_npu.py", "models/modeling_x_gpu.py", "models/modeling_y_gpu.py"),  # per device
    # per collective library
    ("engines/hccl_checkpoint_engine.py", "engines/nccl_checkpoint_engine.py", "engines/nccl_allocator.py"),
])
def test_the_gpu_module_of_a_pair_written_per_device_is_info(tmp_path: Path, npu: str, gpu: str, alone: str) -> None:
    """`modeling_x_gpu.py` beside `modeling_x_npu.py`, `nccl_checkpoint_engine.py` beside
    `hccl_checkpoint_engine.py`: the NPU's is the port; alone, the GPU's keeps its findings."""
    (tmp_path / npu).parent.mkdir(parents=True)
    (tmp_path / npu).write_text("import torch\n", encoding="utf-8")
    path = tmp_path / gpu
    path.write_text(CODE, encoding="utf-8")
    found = analyze(CODE, Settings(select=("NPU1",)), str(path), project=ProjectContext(str(tmp_path))).findings
    assert [f.severity for f in found] == [Severity.INFO, Severity.INFO]
    assert f"{npu} is the NPU's" in found[0].message
    assert severities(tmp_path, alone, CODE) == [Severity.WARNING, Severity.WARNING]


PYPROJECT = '''[project]
name = "p"
version = "0"
dependencies = ["torch==2.4.0+cu121"]

[project.optional-dependencies]
gpu = ["torchvision==0.19.0+cu121"]
npu = ["torch-npu==2.13.0"]

[tool.uv.sources]
torch = [
  { url = "https://download.pytorch.org/whl/cu121/torch-2.4.0%2Bcu121-cp311-linux_x86_64.whl", extra = "gpu" },
  { url = "https://download.pytorch.org/whl/cu121/torch-2.4.0%2Bcu121-cp311-linux_x86_64.whl", extra = "cpu" },
]
'''


def test_an_extra_named_for_the_gpu_and_its_sources_are_info(tmp_path: Path) -> None:
    found = analyze(PYPROJECT, Settings(select=("NPU501",)), str(tmp_path / "pyproject.toml")).findings
    assert [(f.range.start_line + 1, f.severity) for f in found] == [
        (4, Severity.ERROR), (7, Severity.INFO), (12, Severity.INFO), (13, Severity.ERROR)]
    assert found[1].message.endswith("(In the extra `gpu`, named for the GPU: installed only where its users choose it; "
                                     "on an Ascend host leave it out, and install the extra `npu`.)")
