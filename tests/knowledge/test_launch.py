"""The launch-script table as the rules read it: which row a variable or a command gets."""

from __future__ import annotations

from ascend_lsp.knowledge.launch import load_launch


def test_a_variable_gets_its_exact_row_before_a_prefix_row() -> None:
    launch = load_launch()
    assert launch.variable("NCCL_BLOCKING_WAIT", "1")["replacement"] == "TORCH_HCCL_BLOCKING_WAIT"
    assert "HCCL_CONNECT_TIMEOUT" in launch.variable("NCCL_IB_TIMEOUT", "22")["note"]
    assert launch.variable("NCCL_DEBUG", "INFO")["note"].startswith("No effect on Ascend")
    assert launch.variable("DS_ACCELERATOR", "cuda")["rule"] == "NPU127"
    assert launch.variable("DS_ACCELERATOR", "npu") is None
    assert launch.variable("FORCE_CUDA", "0") is None
    assert launch.variable("HCCL_DEBUG", "1") is None


def test_a_command_gets_the_first_row_its_arguments_match() -> None:
    launch = load_launch()
    assert launch.command("nvidia-smi", [])["replacement"] == "npu-smi info"
    assert launch.command("nvidia-smi", ["-L"])["replacement"] == "npu-smi info -l"
    assert "not CSV" in launch.command("nvidia-smi", ["--query-gpu=name", "--format=csv"])["note"]
    assert "not CSV" in launch.command("nvidia-smi", ["--query-gpu", "name"])["note"]
    assert "npu-smi info watch" in launch.command("nvidia-smi", ["-l", "5"])["note"]
    assert "replacement" not in launch.command("nvidia-smi", ["topo", "-m"])
    assert launch.command("npu-smi", ["info"]) is None
