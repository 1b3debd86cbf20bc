"""mappings/torch_npu/kernels-2.13.0.toml and the evidence it gives support-2.13.0.toml's rows: the
wheel's registration table and DLPack patch read, the operators an API runs
recorded on torch, and the two in step."""

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


PATCH = """import torch
from torch_npu._C import _npu_from_dlpack
from torch_npu._C import _npu_to_dlpack


def _apply_dlpack_patch():
    import torch.utils.dlpack as torch_dlpack
    torch_dlpack.to_dlpack = create_patched_to_dlpack('torch.utils.dlpack')
    if hasattr(torch, 'from_dlpack'):
        torch.from_dlpack = create_patched_from_dlpack('torch')
"""


def test_the_apis_the_dlpack_patch_replaces_are_read() -> None:
    assert npu_kernel_tables.patched_apis(PATCH) == {
        "apis": ["torch.from_dlpack", "torch.utils.dlpack.to_dlpack"], "by": "torch_npu/utils/dlpack.py",
        "implementation": "torch_npu._C._npu_from_dlpack, torch_npu._C._npu_to_dlpack"}
    with pytest.raises(ValueError, match="no torch API replaced by a torch_npu implementation"):
        npu_kernel_tables.patched_apis(PATCH.replace("from torch_npu._C import", "from elsewhere import"))


def test_a_table_without_a_section_fails() -> None:
    with pytest.raises(ValueError, match="no operator in its section symint"):
        npu_kernel_tables.registered(TABLE.partition("symint:")[0])


def test_without_the_wheel_the_committed_kernels_are_kept(monkeypatch, tmp_path: Path, capsys) -> None:
    monkeypatch.delenv(npu_kernel_tables.WHEEL_VARIABLE, raising=False)
    facts, written = npu_kernel_tables.kernel_facts(tmp_path)
    assert written is None and not list(tmp_path.iterdir())
    assert "unique_consecutive" in facts.kernels["supported"]
    assert facts.patched == [{
        "apis": ["torch.from_dlpack", "torch.to_dlpack", "torch.utils.dlpack.from_dlpack",
                 "torch.utils.dlpack.to_dlpack", "torch.utils.from_dlpack", "torch.utils.to_dlpack"],
        "by": "torch_npu/utils/dlpack.py", "implementation": "torch_npu._C._npu_from_dlpack, torch_npu._C._npu_to_dlpack"}]
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


def test_every_kernel_a_marked_row_names_is_registered() -> None:
    registered = {op for row in load("kernels-2.13.0.toml")["kernels"] for op in row["ops"]}
    rows = [row for row in load("support-2.13.0.toml")["support"] if "npu-kernels" in row]
    assert {row["name"] for row in rows} >= {
        "torch.unique_consecutive", "torch.nn.utils.rnn.pad_packed_sequence", "torch.nn.RNN", "torch.nn.MaxPool1d",
        "torch.nn.functional.adaptive_max_pool2d", "torch.nn.AdaptiveMaxPool2d", "torch.nn.AvgPool3d",
        "torch.var_mean", "torch.nn.TransformerDecoder"}
    for row in rows:
        assert {op.removeprefix("aten::") for op in row["npu-kernels"]} <= registered, row["name"]


def test_the_rows_that_may_fall_back_get_the_same_evidence() -> None:
    registered = {op for row in load("kernels-2.13.0.toml")["kernels"] for op in row["ops"]}
    rows = {row["name"]: row for row in load("support-2.13.0.toml")["support"]}
    # every operator has an NPU kernel: NPU203 is info
    assert rows["torch.trunc"]["npu-kernels"] == ["aten::trunc", "aten::empty_like", "aten::zero_"]
    assert rows["torch.nn.ZeroPad2d"]["npu-kernels"] == ["aten::constant_pad_nd"]
    assert rows["torch.nn.Hardsigmoid"]["npu-kernels"] == ["aten::hardsigmoid", "aten::hardsigmoid_backward"]
    assert "aten::std.correction" in rows["torch.std"]["npu-kernels"]
    assert "aten::scatter.src_out" in rows["torch.scatter"]["npu-kernels"]
    # one without: the finding stays and names it
    assert rows["torch.distributions.binomial.Binomial"]["no-npu-kernels"] == ["aten::binomial"]
    assert rows["torch.nn.HuberLoss"]["no-npu-kernels"] == ["aten::huber_loss", "aten::huber_loss_backward.out"]
    assert rows["torch.nn.functional.pdist"]["no-npu-kernels"] == ["aten::_pdist_backward"]
    # every operator has one, but the note names a case they do not settle
    assert rows["torch.Tensor.double"]["npu-kernels"] == ["aten::_to_copy"]
    assert "float32" in rows["torch.Tensor.double"]["unsettled"]
    # torch_npu replaces the DLPack functions at import
    for name in ("torch.utils.dlpack.to_dlpack", "torch.utils.dlpack.from_dlpack", "torch.from_dlpack"):
        assert rows[name]["npu-patched"].startswith("torch_npu/utils/dlpack.py ("), name
    for row in rows.values():
        if "npu-kernels" in row or "no-npu-kernels" in row:
            assert row.get("cpu-fallback") or not all(row["chips"].values()), row["name"]
        assert {op.removeprefix("aten::") for op in row.get("npu-kernels", ())} <= registered, row["name"]
        assert not {op.removeprefix("aten::") for op in row.get("no-npu-kernels", ())} & registered, row["name"]


def test_an_example_that_runs_no_operator_fails(monkeypatch, tmp_path: Path) -> None:
    examples = tmp_path / "examples.toml"
    examples.write_text('[[example]]\napi = "torch.std"\nsetup = "x = torch.randn(3)"\ncall = "x.shape"\n',
                        encoding="utf-8")
    monkeypatch.setattr(npu_kernel_tables, "EXAMPLES", examples)
    facts = npu_kernel_tables.WheelFacts({"supported": ["std.correction"]}, [], [])
    entries = [{"name": "torch.std", "chips": {"A2": True}, "cpu-fallback": True, "source": "list"}]
    with pytest.raises(ValueError, match="torch.std's call runs no aten operator"):
        npu_kernel_tables.annotate(entries, facts, torch)


def test_a_case_the_note_does_not_say_fails(monkeypatch, tmp_path: Path) -> None:
    examples = tmp_path / "examples.toml"
    examples.write_text('[[example]]\napi = "torch.std"\nsetup = "x = torch.randn(3)"\ncall = "torch.std(x)"\n'
                        'case = "it returns float32"\nsays = "默认返回fp32"\n', encoding="utf-8")
    monkeypatch.setattr(npu_kernel_tables, "EXAMPLES", examples)
    facts = npu_kernel_tables.WheelFacts({"supported": ["std.correction"]}, [], [])
    entries = [{"name": "torch.std", "chips": {"A2": True}, "cpu-fallback": True, "limitations": "可能回退至CPU执行",
                "source": "list"}]
    with pytest.raises(ValueError, match="torch.std's note does not say '默认返回fp32'"):
        npu_kernel_tables.annotate(entries, facts, torch)


def test_data_parallel_is_advice_where_the_library_binds_its_communication() -> None:
    library = b"\0".join([b"x", b"_broadcast_coalesced", b"_scatter", b"_gather", b"../torch_npu/csrc/npu/DataParallelComm.cpp", b""])
    bound = npu_kernel_tables.bound_comm(library)
    assert bound == {"functions": ["torch._C._broadcast_coalesced", "torch._C._scatter", "torch._C._gather"],
                     "by": "torch_npu/csrc/npu/DataParallelComm.cpp"}
    entries = [{"name": "torch.nn.DataParallel", "rule": "NPU403", "note": "✘", "source": "list"},
               {"name": "torch.cuda.synchronize", "rule": "NPU102", "source": "wheel"}]
    npu_kernel_tables.data_parallel(entries, npu_kernel_tables.WheelFacts({}, [], [bound]))
    assert entries[0]["severity"] == "info" and "torch._C._scatter" in entries[0]["note"]
    assert entries[0]["source"].startswith("list; mappings/torch_npu/kernels-2.13.0.toml")
    assert "severity" not in entries[1]


def test_a_library_without_the_binding_fails() -> None:
    with pytest.raises(ValueError, match="no torch_npu/csrc/npu/DataParallelComm.cpp binding _gather"):
        npu_kernel_tables.bound_comm(b"\0_broadcast_coalesced\0_scatter\0torch_npu/csrc/npu/DataParallelComm.cpp\0")
    with pytest.raises(ValueError, match="no NPU403 row"):
        npu_kernel_tables.data_parallel([], npu_kernel_tables.WheelFacts({}, [], []))


def test_the_committed_facts_make_data_parallel_advice() -> None:
    cuda = {e["name"]: e for e in tomllib.loads((ROOT / "mappings" / "torch_npu" / "cuda.toml").read_text("utf-8"))["api"]}
    assert {cuda[name].get("severity") for name in ("torch.nn.DataParallel", "torch.nn.parallel.DataParallel",
                                                    "torch.nn.parallel.data_parallel")} == {"info"}
