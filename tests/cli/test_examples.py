"""The bundled CUDA training script: every CUDA-only line is found, with the rule that
says what to do, and nothing else (its log messages, docstring and prints mention CUDA
but are prose)."""

from __future__ import annotations

import json
from pathlib import Path

from ascend_lsp.cli.main import main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

EXPECTED = {
    16: ["NPU103", "NPU103"],  # from torch.cuda.amp import GradScaler, autocast
    23: ["NPU108"],  # NCCL_SOCKET_IFNAME
    24: ["NPU108"],  # PYTORCH_CUDA_ALLOC_CONF
    26: ["NPU105"],  # cudnn.benchmark
    27: ["NPU106"],  # cuda.matmul.allow_tf32
    28: ["NPU106"],  # cudnn.allow_tf32
    59: ["NPU107"],  # backend="nccl"
    61: ["NPU103"],  # torch.cuda.set_device
    62: ["NPU101"],  # f"cuda:{local_rank}"
    65: ["NPU103", "NPU113"],  # "cuda" if torch.cuda.is_available(): silently the CPU; "cuda" related to the test
    69: ["NPU102"],  # Net().cuda()
    72: ["NPU103"],  # torch.cuda.device_count
    73: ["NPU403"],  # nn.DataParallel
    81: ["NPU103"],  # torch.cuda.manual_seed_all
    87: ["NPU610"],  # advice: the DataLoader feeding the training loop has no num_workers
    90: ["NPU203"],  # Adam(fused=True)
    92: ["NPU103"],  # torch.cuda.Event
    93: ["NPU103"],
    100: ["NPU405"],  # dtype=torch.float64
    102: ["NPU101", "NPU102"],  # x.cuda(...), y.to("cuda:0")
    109: ["NPU405"],  # .double()
    111: ["NPU103"],  # torch.cuda.synchronize
    113: ["NPU103"],  # torch.cuda.max_memory_allocated
    116: ["NPU401"],  # dist.get_backend() == "nccl"
}


def test_every_cuda_only_line_of_the_training_script(tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(EXAMPLES)
    assert main(["train_cuda.py", "--output-format", "json", "--no-cache"]) == 1
    found: dict[int, list[str]] = {}
    for item in json.loads(capsys.readouterr().out):
        found.setdefault(item["location"]["row"], []).append(item["code"])
    assert {line: sorted(codes) for line, codes in found.items()} == EXPECTED
