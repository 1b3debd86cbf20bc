"""Which findings of NPU405, NPU202, NPU201, NPU203 and NPU409 stay warnings or errors and which the code or the
facts lower to info (the fixtures' .expected files show the messages, not the severities)."""

from __future__ import annotations

from pathlib import Path

from ascend_lsp.analysis import analyze
from ascend_lsp.engine.config import Settings
from ascend_lsp.engine.model import Severity

FIXTURES = Path(__file__).parent / "fixtures"


def severities(code: str, chip: str = "A2") -> dict[int, list[str]]:
    path = FIXTURES / f"{code}.py"
    settings = Settings(target="torch_npu", select=(code,), tests="check", chip=chip)
    analysis = analyze(path.read_text(encoding="utf-8"), settings, str(path))
    lines: dict[int, list[str]] = {}
    for finding in analysis.findings:
        lines.setdefault(finding.range.start_line + 1, []).append(finding.severity.value)
    return lines


def test_float64_on_the_device_stays_a_warning_and_on_the_cpu_is_info() -> None:
    found = severities("NPU405")
    warned = sorted(line for line, found_here in found.items() if Severity.WARNING.value in found_here)
    # device= given, .double() in a function that places tensors, .to(device), all_reduce, a dtype
    # chosen beside `self.device`, a cast in a function that reads `.device`, a CPU tensor moved by .cuda(),
    # a cast of an argument in model code (rope), a parameter (moved with its module), a tensor of data and one
    # of a shape (not of a dimension count) placed by device=, a cast on the device copied to the CPU after it,
    # a list of dtypes run (not accepted by a check): it may be on the device
    assert warned == [6, 7, 8, 9, 14, 19, 30, 33, 37, 50, 51, 59, 68]
    assert all(found[line] == [Severity.INFO.value] for line in found if line not in warned and line != 45)
    assert found[45] == [Severity.INFO.value, Severity.INFO.value]


def test_an_api_the_list_marks_unsupported_but_the_wheel_runs_is_info() -> None:
    found = severities("NPU201")
    # nn.RNN, torch.std_mean, unique_consecutive, AdaptiveMaxPool2d, TransformerDecoder: every aten operator
    # they run has an NPU kernel; torch.compiler's two only steer compilation; the three DLPack functions
    # torch_npu replaces; nn.RNN re-bound to a wrapper
    assert sorted(line for line, here in found.items() if here == [Severity.INFO.value]) == [
        5, 9, 11, 14, 20, 21, 22, 26, 27, 28, 35]
    assert found[34] == [Severity.INFO.value, Severity.INFO.value]
    # vmap, sdp_kernel, enable_cudnn_sdp, pdist (its backward has no NPU kernel)
    assert sorted(line for line, here in found.items() if here == [Severity.ERROR.value]) == [3, 7, 10, 24]


def test_an_api_that_may_fall_back_but_the_wheel_runs_is_info() -> None:
    found = severities("NPU203")
    # Adam(fused=True), sinc (the kernels' own CPU paths); Binomial, HuberLoss (an operator without an
    # NPU kernel); Tensor.double (the note's float32 result, which the kernels do not settle)
    assert sorted(line for line, here in found.items() if here == [Severity.WARNING.value]) == [6, 7, 9, 11, 12, 14]
    # trunc, ZeroPad2d, std, scatter, Hardsigmoid: every aten operator they run has an NPU kernel; gcd, complex,
    # logit, AdaptiveMaxPool3d, polar: op-plugin runs them through an aclnn kernel on A2 (the default chip) before
    # any CPU path
    assert sorted(line for line, here in found.items() if here == [Severity.INFO.value]) == [8, 16, 17, 18, 19, 20,
                                                                                               22, 23, 24, 25]
    assert len(found) == 16
    # where the CPU path runs by default or the facts do not settle it, they stay warnings: all five on 310P; on
    # A3 gcd, complex and polar (op-plugin's older path there is not settled), not logit (its SoC check admits A3)
    # nor AdaptiveMaxPool3d (no older path)
    on_310p, on_a3 = severities("NPU203", "310P"), severities("NPU203", "A3")
    assert [on_310p[line] for line in (8, 22, 23, 24, 25)] == [[Severity.WARNING.value]] * 5
    assert [on_a3[line] for line in (8, 22, 23, 24, 25)] == [[Severity.WARNING.value]] * 2 + [[Severity.INFO.value]] * 2 \
        + [[Severity.WARNING.value]]


def test_gather_and_avg_run_on_hccl_and_are_info() -> None:
    # dist.gather (torch_npu runs it as an all_gather) and ReduceOp.AVG (a sum, then divided); scatter stays a warning
    assert severities("NPU409") == {4: [Severity.INFO.value], 5: [Severity.WARNING.value],
                                    6: [Severity.INFO.value], 7: [Severity.INFO.value]}


def test_a_complex_dtype_compared_with_is_info() -> None:
    # and a table's entries (10, 11; a table from dtype to dtype: 13, 14, not 16, which makes complex of real), and
    # rotary embeddings that only multiply and turn back (20, 21) on A2; not other complex math (25)
    assert severities("NPU202") == {4: [Severity.WARNING.value], 5: [Severity.WARNING.value],
                                    6: [Severity.WARNING.value], 8: [Severity.INFO.value],
                                    10: [Severity.INFO.value], 11: [Severity.INFO.value],
                                    13: [Severity.INFO.value] * 2, 14: [Severity.INFO.value] * 2,
                                    16: [Severity.WARNING.value],
                                    20: [Severity.INFO.value], 21: [Severity.INFO.value], 25: [Severity.WARNING.value]}
    # where the support list says nothing (310P), the rotary embeddings stay warnings
    assert [severities("NPU202", "310P")[line] for line in (20, 21)] == [[Severity.WARNING.value]] * 2
