"""`lsp-check run` exit codes, through a real subprocess: 0 pass, 1 warning/error, 2 failed."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.torch
pytest.importorskip("torch", reason="torch is not installed")

SERVER = Path(__file__).resolve().parents[2] / "server"
SOURCE = """
import torch
from torch import nn

def passes():
    return torch.ones(3) * 2

def drifts():
    layer = nn.Conv2d(8, 16, 3)
    return layer(torch.randn(2, 8, 10, 10) * 10)

def raises():
    raise RuntimeError("boom")
"""


def cli(*args):
    env = {**os.environ, "PYTHONPATH": str(SERVER)}
    return subprocess.run([sys.executable, "-m", "ascend_lsp.runner.run_commands", *args], capture_output=True, text=True,
                          env=env, timeout=300)


@pytest.fixture(scope="module")
def script(tmp_path_factory):
    path = tmp_path_factory.mktemp("cli") / "model.py"
    path.write_text(SOURCE)
    return path


def test_pass_exits_0(script):
    done = cli(f"{script}::passes", "--target", "cpu")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("Run on cpu passes: PASS")


def test_precision_error_exits_1_and_json_has_the_outputs(script):
    done = cli(f"{script}::drifts", "--target", "emulate", "--json")
    assert done.returncode == 1, done.stdout + done.stderr
    result = json.loads(done.stdout)
    assert result["emulated"] is True and result["status"] in ("warning", "error")
    assert result["outputs"][0]["metrics"]["max_abs"] > 0.001


def test_failed_run_exits_2(script):
    done = cli(f"{script}::raises", "--target", "cpu")
    assert done.returncode == 2
    assert "reference run raised RuntimeError: boom" in done.stdout


def test_bad_arguments_exit_2(script):
    assert cli(str(script), "--target", "cpu").returncode == 2


def test_client_never_imports_torch():
    code = ("import sys, ascend_lsp.runner, ascend_lsp.runner.run_commands; "
            "print(sorted(m for m in ('torch', 'numpy', 'mindspore') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(SERVER)})
    assert done.stdout.strip() == "[]", done.stderr
