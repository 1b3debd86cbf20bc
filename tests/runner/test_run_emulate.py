"""The emulate target: HF32 convolutions (and matmul, autocast) on the CPU, always labelled."""

import pytest

pytestmark = pytest.mark.torch
torch = pytest.importorskip("torch", reason="torch is not installed")

CONV = """
import torch
from torch import nn

def conv():
    layer = nn.Conv2d(8, 16, 3)
    return layer(torch.randn(2, 8, 10, 10) * 10)

def linear():
    layer = nn.Linear(64, 32)
    return layer(torch.randn(8, 64) * 10)
"""


def test_hf32_rounding_keeps_11_mantissa_bits_round_to_nearest_even():
    from ascend_lsp.runner.worker.emulation import round_to_hf32

    one_ulp = 2.0**-11  # HF32 spacing above 1.0
    values = torch.tensor([1.0, 1 + one_ulp / 2, 1 + one_ulp * 1.5, 1 + one_ulp * 0.75, float("inf"), float("nan")])
    rounded = round_to_hf32(torch, values)
    assert rounded[:4].tolist() == [1.0, 1.0, 1 + 2 * one_ulp, 1 + one_ulp]  # ties to even, else nearest
    assert rounded[4] == float("inf") and rounded[5].isnan()
    assert round_to_hf32(torch, values.double()) is not None  # other dtypes pass through


def test_emulated_conv_has_a_nonzero_delta_and_a_verdict(pool, snippet):
    result = pool.run(snippet(CONV, "conv", target="emulate"))
    assert result.ok, result.message
    assert result.emulated and result.message.startswith("[emulated]")
    output = result.outputs[0]
    assert output.metrics["max_abs"] > 0
    assert output.verdict in ("PASS", "WARNING", "ERROR") and output.threshold
    assert any("HF32" in note for note in result.notes)


def test_matmul_stays_fp32_unless_hf32_is_enabled(pool, snippet):
    from ascend_lsp.runner import Emulation

    default = pool.run(snippet(CONV, "linear", target="emulate"))
    assert default.outputs[0].metrics["max_abs"] == 0  # A2/A3 default: matmul HF32 off
    enabled = pool.run(snippet(CONV, "linear", target="emulate", emulation=Emulation(matmul_hf32=True)))
    assert enabled.outputs[0].metrics["max_abs"] > 0


def test_autocast_grades_the_reduced_dtype(pool, snippet):
    from ascend_lsp.runner import Emulation

    result = pool.run(snippet(CONV, "linear", target="emulate", emulation=Emulation(autocast="bfloat16")))
    assert result.ok, result.message
    output = result.outputs[0]
    assert (output.reference["dtype"], output.target["dtype"]) == ("float32", "bfloat16")
    assert "dtype mismatch" not in output.reason
    # graded against the third side, the same function in bfloat16 on the CPU: what the dtype itself loses
    assert result.benchmark == {"dtype": "bfloat16", "device": "cpu"}
    assert (output.verdict, output.decided_by) == ("PASS", "benchmark ratio"), output.reason
    assert output.benchmark["compared"] == output.metrics["compared"] > 0


def test_under_autocast_a_convolution_takes_float16_operands_not_hf32_ones(pool, snippet):
    from ascend_lsp.runner import Emulation

    result = pool.run(snippet(CONV, "conv", target="emulate", emulation=Emulation(autocast="float16")))
    output = result.outputs[0]
    assert output.target["dtype"] == "float16" and output.metrics["max_abs"] > 0
    # the target is the float16 benchmark, bit for bit: HF32 did not round the operands first
    assert output.metrics == output.benchmark


SWITCHES = CONV + """
def linear_tf32():
    torch.backends.cuda.matmul.allow_tf32 = True  # torch.npu.matmul.allow_hf32 under transfer_to_npu
    return linear()

def conv_no_tf32():
    torch.backends.cudnn.allow_tf32 = False  # torch.npu.conv.allow_hf32
    return conv()
"""


def test_the_hf32_switches_the_code_sets_decide_and_do_not_outlive_the_run(pool, snippet):
    on = pool.run(snippet(SWITCHES, "linear_tf32", target="emulate"))
    assert on.outputs[0].metrics["max_abs"] > 0
    assert "fp32 matmul in HF32: the code set torch.backends.cuda.matmul.allow_tf32 = True" in on.notes
    off = pool.run(snippet(SWITCHES, "conv_no_tf32", target="emulate"))
    assert off.outputs[0].metrics["max_abs"] == 0
    assert "fp32 convolutions kept in fp32: the code set torch.backends.cudnn.allow_tf32 = False" in off.notes
    # the same warm worker: matmul HF32 is off again, convolution HF32 on again
    assert pool.run(snippet(SWITCHES, "linear", target="emulate")).outputs[0].metrics["max_abs"] == 0
    assert pool.run(snippet(SWITCHES, "conv", target="emulate")).outputs[0].metrics["max_abs"] > 0


def test_chips_without_hf32_do_not_round(pool, snippet):
    from ascend_lsp.runner import Emulation

    result = pool.run(snippet(CONV, "conv", target="emulate", emulation=Emulation(chip="310P")))
    assert result.outputs[0].metrics["max_abs"] == 0
    assert not any("HF32" in note and "emulated as" in note for note in result.notes)
    assert "emulated: chip 310P: no HF32 emulated" in " ".join(result.notes)


def test_the_third_side_runs_at_the_dtype_a_device_target_computes_in():
    from ascend_lsp.runner.worker.benchmark_side import benchmark_dtype
    from ascend_lsp.runner.worker.run_target import Target
    from ascend_lsp.runner.worker.sides import Side

    def side(*dtypes):
        made = Side()
        made.outputs = [(f"out[{i}]", torch.zeros(2, dtype=dtype)) for i, dtype in enumerate(dtypes)]
        return made

    reference = side(torch.float32, torch.int64)
    npu = Target("npu", "npu:0")
    # autocast in the code (or an fp16 chip): float16 results where the reference's are float32
    assert benchmark_dtype(torch, npu, reference, side(torch.float16, torch.int64)) == "float16"
    assert benchmark_dtype(torch, npu, reference, side(torch.bfloat16, torch.int64)) == "bfloat16"
    assert benchmark_dtype(torch, npu, reference, side(torch.float32, torch.int64)) is None
    # a model in float16 on both sides computes as the reference does
    assert benchmark_dtype(torch, npu, side(torch.float16), side(torch.float16)) is None
    assert benchmark_dtype(torch, Target("emulate", "cpu", {"autocast": "bfloat16"}), reference, reference) == \
        "bfloat16"
    assert benchmark_dtype(torch, Target("emulate", "cpu", {}), reference, reference) is None
    assert benchmark_dtype(torch, Target("mindspore", "cpu"), reference, side(torch.float16)) is None


GUARDED = """
import torch
from torch import nn

def guarded():
    layer = nn.Linear(4, 4, bias=False)
    with torch.no_grad():
        layer.weight.fill_(1.0)
    y = layer(torch.full((2, 4), 30000.0))  # 120000: past float16's 65504
    if torch.isinf(y).any():
        raise FloatingPointError("the sum overflowed")
    return y
"""


def test_a_third_side_that_raises_leaves_the_run_graded_against_float32_with_a_note(pool, snippet):
    from ascend_lsp.runner import Emulation

    # 910A saturates (65504, no inf, no raise); the third side, float16 without the chip, overflows and raises
    result = pool.run(snippet(GUARDED, "guarded", target="emulate", emulation=Emulation(autocast="float16",
                                                                                         chip="910A")))
    assert result.ok and result.benchmark is None, result.message
    assert "no benchmark: the reference model in float16 on the CPU raised FloatingPointError: the sum overflowed; " \
           "graded against float32 alone" in result.notes
    output = result.outputs[0]
    # 65504 for 120000 everywhere: cosine 1, but no element within 1 % of the reference
    assert (output.verdict, output.benchmark, output.decided_by) == ("ERROR", None, "rel err share"), output.reason
