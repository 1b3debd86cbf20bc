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


EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "train_cuda.py"
# the example logs each epoch's loss; this runs its main() for one epoch with the log shown
RUN_EXAMPLE = ("import logging, sys; logging.basicConfig(level=logging.INFO, format='%(message)s', stream=sys.stdout); "
               "import train; sys.argv = ['train.py', '--epochs', '1']; train.main()")


@pytest.mark.skipif(torch.accelerator.is_available(), reason="the CPU fallback is what runs on a machine without "
                                                               "an accelerator; this one has one")
def test_fixed_example_runs_on_the_cpu_to_the_hand_written_loss(tmp_path: Path) -> None:
    script = tmp_path / "train.py"
    shutil.copy(EXAMPLE, script)
    shutil.copy(SCRIPTS / "example_cpu.py", tmp_path / "example_cpu.py")
    fixed = lsp_check("--fix", "--unsafe-fixes", "--fix-style", "portable", "--exit-zero", "-q", script.name,
                      cwd=tmp_path)
    assert fixed.returncode == 0, fixed.stderr
    text = script.read_text(encoding="utf-8")
    assert "torch_npu" not in text and "torch.npu" not in text and "torch.cuda" not in text
    done = subprocess.run([sys.executable, "-c", RUN_EXAMPLE], cwd=tmp_path, env=ENV, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    # "epoch 0 loss 18.4321 0.0 ms 0 MiB (cuda)": no timing and no memory without an accelerator
    found = re.search(r"^epoch 0 loss (\S+) (\S+) ms (\S+) MiB", done.stdout, re.M)
    assert found is not None, done.stdout
    assert (found.group(2), found.group(3)) == ("0.0", "0")
    assert float(found.group(1)) == pytest.approx(loss_of(tmp_path / "example_cpu.py"), abs=1e-4)
