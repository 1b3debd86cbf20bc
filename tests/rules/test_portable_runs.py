"""The portable style's promise, run for real: a CUDA training script (`.cuda()`,
`device("cuda")`, `device_count`, `torch.cuda.amp.GradScaler`, `autocast`, `synchronize`,
memory statistics, `empty_cache`, timing `Event`s, `map_location="cuda:0"`, TF32 and cuDNN switches, NCCL and
allocator variables, seeds) fixed with
`lsp-check --fix --unsafe-fixes --fix-style portable` writes no torch_npu, leaves no CUDA-only
warning or error, and still runs on the CPU-only torch 2.13 here, to the loss of the same
script written for the CPU by hand (compared with a tolerance, never bit for bit)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch

SCRIPTS = Path(__file__).with_name("portable_scripts")
LOSS = re.compile(r"^loss (\S+)$", re.M)
# The child Pythons import this checkout's package, not an installed copy.
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).resolve().parents[2] / "server"),
                                                    os.environ.get("PYTHONPATH", "")])}


def lsp_check(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ascend_lsp.cli.main", "--no-cache", *args], cwd=cwd, env=ENV,
                          capture_output=True, text=True, timeout=120)


def loss_of(script: Path) -> float:
    done = subprocess.run([sys.executable, script.name], cwd=script.parent, env=ENV, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return float(LOSS.search(done.stdout).group(1))


@pytest.mark.skipif(torch.accelerator.is_available(), reason="the CPU fallback is what runs on a machine without "
                                                               "an accelerator; this one has one")
def test_fixed_cuda_script_runs_on_the_cpu_to_the_hand_written_loss(tmp_path: Path) -> None:
    script = tmp_path / "train.py"
    shutil.copy(SCRIPTS / "train_cuda.py", script)
    shutil.copy(SCRIPTS / "train_cpu.py", tmp_path / "train_cpu.py")
    fixed = lsp_check("--fix", "--unsafe-fixes", "--fix-style", "portable", "--exit-zero", "-q", script.name,
                      cwd=tmp_path)
    assert fixed.returncode == 0, fixed.stderr
    text = script.read_text(encoding="utf-8")
    assert "torch_npu" not in text and "torch.npu" not in text
    assert "torch.accelerator" in text
    found = json.loads(lsp_check("--output-format", "json", "--exit-zero", script.name, cwd=tmp_path).stdout)
    # cudnn.benchmark, harmless everywhere; the NCCL variable and the TF32 switch on their CUDA branch
    assert sorted((f["code"], f["severity"]) for f in found if f["code"].startswith("NPU1")) == \
        [("NPU101", "info"), ("NPU101", "info"), ("NPU105", "info"), ("NPU106", "info"), ("NPU108", "info")]
    assert loss_of(script) == pytest.approx(loss_of(tmp_path / "train_cpu.py"), rel=1e-5)
