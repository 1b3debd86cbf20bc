"""mappings/torch_npu/kernels-2.13.0.toml and the `npu-kernels` of support-2.13.0.toml: the wheel's
registration table read, the operators an API runs recorded on torch, and the two in step."""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "mappings" / "build"))

import npu_kernel_tables  # noqa: E402  (mappings/build is on sys.path from here on)

TABLE = """autograd:
- func: _thnn_fused_gru_cell(Tensor input_gates, Tensor hidden_gates, Tensor hx) -> (Tensor, Tensor)
  impl_ns: op_api
backend: NPU
custom:
- func: npu_format_cast(Tensor self, int acl_format) -> Tensor
supported:
- _local_scalar_dense
- device_check: NoCheck
  func: _pad_packed_sequence(Tensor data, Tensor batch_sizes, bool batch_first) -> (Tensor, Tensor)
  impl_ns: op_api
- func: var_mean.correction(Tensor self, int[1]? dim=None) -> (Tensor, Tensor)
symint:
- as_strided_
"""


def load(name: str) -> dict:
    with (ROOT / "mappings" / "torch_npu" / name).open("rb") as f:
        return tomllib.load(f)


def test_the_registration_table_is_read_by_section() -> None:
    assert npu_kernel_tables.registered(TABLE) == {
        "supported": ["_local_scalar_dense", "_pad_packed_sequence", "var_mean.correction"],
        "symint": ["as_strided_"],
        "autograd": ["_thnn_fused_gru_cell"],
    }


def test_a_table_without_a_section_fails() -> None:
    with pytest.raises(ValueError, match="no operator in its section symint"):
        npu_kernel_tables.registered(TABLE.partition("symint:")[0])


def test_without_the_wheel_the_committed_kernels_are_kept(monkeypatch, tmp_path: Path, capsys) -> None:
    monkeypatch.delenv(npu_kernel_tables.WHEEL_VARIABLE, raising=False)
    kernels, written = npu_kernel_tables.kernel_facts(tmp_path)
    assert written is None and not list(tmp_path.iterdir())
    assert "unique_consecutive" in kernels["supported"]
    assert "kept mappings/torch_npu/kernels-2.13.0.toml" in capsys.readouterr().err


def test_a_wheel_of_another_release_is_refused(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setenv(npu_kernel_tables.WHEEL_VARIABLE, str(tmp_path / "torch_npu-2.7.1-cp311-linux.whl"))
    with pytest.raises(ValueError, match="not a torch_npu 2.13.0 wheel"):
        npu_kernel_tables.kernel_facts(tmp_path)


def test_the_operators_a_call_runs_are_followed_through_torchs_composites() -> None:
    setup = "x = torch.randn(1, 2, 9, requires_grad=True)"
    # adaptive_max_pool1d is a composite over unsqueeze, adaptive_max_pool2d and squeeze; the backward too
    kernels = {"adaptive_max_pool2d", "adaptive_max_pool2d_backward", "unsqueeze", "squeeze.dim", "as_strided"}
    named, left = npu_kernel_tables.recorded_ops(torch, setup, "F.adaptive_max_pool1d(x, 3)", kernels)
    assert named == {"aten::adaptive_max_pool2d", "aten::adaptive_max_pool2d_backward", "aten::squeeze.dim",
                     "aten::unsqueeze"}
    assert left == set()
    # without its kernel the backward's functional form is followed into torch's composite: an empty
    # tensor and the out= form, which have none here either
    named, left = npu_kernel_tables.recorded_ops(torch, setup, "F.adaptive_max_pool1d(x, 3)",
                                                 kernels - {"adaptive_max_pool2d_backward"})
    assert left == {"aten::adaptive_max_pool2d_backward.grad_input", "aten::empty.memory_format"}


def test_every_kernel_a_support_row_names_is_registered() -> None:
    registered = {op for row in load("kernels-2.13.0.toml")["kernels"] for op in row["ops"]}
    rows = [row for row in load("support-2.13.0.toml")["support"] if "npu-kernels" in row]
    assert {row["name"] for row in rows} >= {
        "torch.unique_consecutive", "torch.nn.utils.rnn.pad_packed_sequence", "torch.nn.RNN", "torch.nn.MaxPool1d",
        "torch.nn.functional.adaptive_max_pool2d", "torch.nn.AdaptiveMaxPool2d", "torch.nn.AvgPool3d",
        "torch.var_mean", "torch.nn.TransformerDecoder"}
    for row in rows:
        assert not all(row["chips"].values()), row["name"]
        assert {op.removeprefix("aten::") for op in row["npu-kernels"]} <= registered, row["name"]
