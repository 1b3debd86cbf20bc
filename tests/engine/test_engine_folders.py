"""A file in a folder of the project named for TensorRT (`runtime/triton_trtllm/`,
`deploy/tensorrt/`): it serves a model through NVIDIA's engine alone, so its findings are info
that say so, its configs' too; a folder above the project's root says nothing of the project."""

from __future__ import annotations

from pathlib import Path

from ascend_lsp.analysis import analyze
from ascend_lsp.engine.config import Settings
from ascend_lsp.engine.model import Severity
from ascend_lsp.project import ProjectContext

CODE = 'import torch\n\nmodel = torch.load("m.pt").to("cuda")\ntorch.cuda.synchronize()\n'
COMPOSE = ("services:\n  server:\n    image: nvcr.io/nvidia/tritonserver:24.05-py3\n    deploy:\n      resources:\n"
           "        reservations:\n          devices:\n            - driver: nvidia\n              count: all\n"
           "              capabilities: [gpu]\n")


def severities(root: Path, relative: str, text: str, select: tuple[str, ...] = ("NPU1",)) -> list[Severity]:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    found = analyze(text, Settings(select=select), str(path), project=ProjectContext(str(root))).findings
    return [f.severity for f in found]


def test_a_file_in_a_tensorrt_folder_is_info(tmp_path: Path) -> None:
    found = analyze(CODE, Settings(select=("NPU1",)), str(tmp_path / "runtime/triton_trtllm/serve.py"),
                    project=ProjectContext(str(tmp_path))).findings
    assert [f.severity for f in found] == [Severity.INFO, Severity.INFO]
    assert found[0].message.endswith("(In triton_trtllm/, named for TensorRT, NVIDIA's inference engine: what is "
                                     "there serves a model only where that engine was chosen, on NVIDIA GPUs.)")
    assert severities(tmp_path, "deploy/tensorrt/docker-compose.yml", COMPOSE, ("NPU8",)) == [Severity.INFO]


def test_other_folders_keep_their_findings(tmp_path: Path) -> None:
    assert severities(tmp_path, "serving/serve.py", CODE) == [Severity.WARNING, Severity.WARNING]
    assert severities(tmp_path, "serving/docker-compose.yml", COMPOSE, ("NPU8",)) == [Severity.ERROR]
    # the checkout itself under a folder named so
    inner = tmp_path / "trt" / "project"
    assert severities(inner, "serve.py", CODE) == [Severity.WARNING, Severity.WARNING]
