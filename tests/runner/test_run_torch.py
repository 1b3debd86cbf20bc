"""Real torch on the CPU: zero delta, identical inputs, outputs, gradients, selections, errors."""

import hashlib
import threading

import pytest

from ascend_lsp.runner import format_markdown, format_summary

pytestmark = pytest.mark.torch
torch = pytest.importorskip("torch", reason="torch is not installed")

MODEL = """
import torch
from torch import nn

net = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU()).cuda()

def run():
    x = torch.randn(2, 3, 6, 6, device="cuda")
    return net(x)

def nested():
    a = torch.rand(3, dtype=torch.float64)
    return {"pair": (a, a.argmax()), "list": [torch.ones(2, dtype=torch.bool), 7], "scale": 0.5, "none": None}

def with_grad():
    x = torch.randn(4, 3, requires_grad=True)
    layer = nn.Linear(3, 2)
    return layer(x).tanh()

def fails():
    value = 1
    return helper(value)

def helper(value):
    raise ValueError(f"bad value {value}")

if __name__ == "__main__":
    raise SystemExit("the __main__ block must not run")
"""


def test_cpu_against_cpu_is_exactly_zero_and_passes(pool, snippet):
    result = pool.run(snippet(MODEL, "run", target="cpu"))
    assert result.status == "passed", result.message
    assert not result.emulated
    assert {o.path for o in result.outputs} >= {"out", "state:Sequential.1.running_mean"}
    for output in result.outputs:
        assert output.verdict == "PASS"
        assert output.metrics["max_abs"] == 0
        if "cosine" in output.metrics:
            # identical outputs: exactly 1 by comparison, whatever this CPU's reduction order
            assert output.metrics["cosine"] == 1.0
            assert output.metrics["rel_err_share"]["0.0001"] == 1.0
    hover = format_markdown(result)
    assert "| out | 2x4x6x6 | float32 | 0 |" in hover and "**PASS**" in hover
    assert format_summary(result).startswith("Run on cpu run: PASS")
    assert result.line == 7  # the def, 1-based


def test_identical_outputs_grade_exactly_by_comparison_not_by_a_reduction():
    from ascend_lsp.runner.worker.metrics import float_metrics

    # On some CPUs (x @ x) / (|x| |x|) rounds to 0.9999999999999999 for this vector: identical
    # tensors must still get cosine 1 and every share 1, on any machine and thread count.
    x = torch.tensor([1.5409961082440433, -0.2934289057609464, -2.1787893820745574, 0.5684312772806678,
                      -1.084522342424021, -1.3985953953708767, 0.4033468476292993], dtype=torch.float64)
    for ref in (x, torch.cat([x, torch.tensor([float("nan"), float("inf")], dtype=torch.float64)])):
        metrics = float_metrics(torch, ref, ref.clone(), torch.float64, {"rel_err_cutoffs": [0.01, 0.0001]})
        assert (metrics["cosine"], metrics["max_abs"], metrics["nan_inf_mismatch"]) == (1.0, 0.0, 0)
        assert metrics["rel_err_share"] == {"0.01": 1.0, "0.0001": 1.0}
        assert metrics["compared"] == 7


def test_same_values_means_the_same_bits_nan_included():
    from ascend_lsp.runner.worker.metrics import same_values

    half = torch.tensor([1.0, float("nan"), -0.0, float("inf")], dtype=torch.float16)
    assert same_values(torch, half, half.clone()) and same_values(torch, half[::2], half[::2].clone())
    assert not same_values(torch, half, half.float())  # another dtype
    assert not same_values(torch, half, torch.tensor([1.0, float("nan"), 0.0, float("inf")], dtype=torch.float16))
    assert same_values(torch, torch.arange(3), torch.arange(3)) and not same_values(torch, torch.arange(3), 3)


def test_inputs_and_initial_weights_are_bit_identical(pool, snippet):
    result = pool.run(snippet(MODEL, "run", target="cpu", capture_inputs=True))
    reference, target = result.inputs["reference"], result.inputs["target"]
    # Conv2d's kaiming_uniform_ weight and bias, then the input: the same draws, the same bytes.
    assert [d[0] for d in reference] == ["uniform_", "uniform_", "randn"]
    assert reference == target


def test_random_factories_draw_on_the_cpu_generator_then_move():
    from ascend_lsp.runner.worker.patches import Patches
    from ascend_lsp.runner.worker.sides import Recorder
    from ascend_lsp.runner.worker.torch_patches import patch_random

    recorder = Recorder(torch, capture=True)
    with Patches() as patches:
        patch_random(torch, patches, recorder, on_cpu=False)
        torch.manual_seed(3)
        drawn = torch.randn(5, device="meta")  # any non-CPU device: the values come from the CPU
        inplace = torch.empty(4, device="meta").uniform_()
    torch.manual_seed(3)
    expected = torch.randn(5)
    assert drawn.device.type == "meta" and inplace.device.type == "meta"
    assert [d[0] for d in recorder.draws] == ["randn", "uniform_"]
    assert recorder.draws[0][2] == hashlib.sha256(expected.numpy().tobytes()).hexdigest()


def test_nested_outputs_are_paired_by_path(pool, snippet):
    result = pool.run(snippet(MODEL, "nested", target="cpu"))
    assert result.status == "passed", result.message
    paths = {o.path: o for o in result.outputs}
    assert set(paths) == {"out['pair'][0]", "out['pair'][1]", "out['list'][0]", "out['list'][1]", "out['scale']"}
    assert paths["out['pair'][0]"].reference["dtype"] == "float64"
    assert paths["out['list'][0]"].threshold.startswith("exact-integer")


def test_grad_compares_input_and_parameter_gradients(pool, snippet):
    result = pool.run(snippet(MODEL, "with_grad", target="cpu", grad=True))
    assert result.status == "passed", result.message
    grads = sorted(o.path for o in result.outputs if o.group == "grad")
    assert grads == ["grad:Linear.bias", "grad:Linear.weight", "grad:input[0]"]


def test_selection_returns_the_last_expression_or_the_tensors_it_binds(pool, snippet):
    text = """
    import torch

    def body():
        a = torch.ones(3)
        b = a * 2
        b.sum()
    """
    expression = pool.run(snippet(text, target="cpu", lines=(5, 7)))
    assert [o.path for o in expression.outputs] == ["out"], expression.message
    bound = pool.run(snippet(text, target="cpu", lines=(5, 6)))
    assert [o.path for o in bound.outputs] == ["out['a']", "out['b']"], bound.message


def test_snippet_exception_maps_to_the_users_lines(pool, snippet):
    result = pool.run(snippet(MODEL, "fails", target="cpu"))
    assert result.status == "failed" and result.code == "exception"
    assert result.message == "reference run raised ValueError: bad value 1"
    assert result.line == 25  # `raise` inside helper(), in the user's file
    frames = result.error["frames"]
    assert [(f["function"], f["line"]) for f in frames] == [("fails", 22), ("helper", 25)]
    assert all(f["file"].endswith("snippet_under_test.py") for f in frames)
    assert "ValueError: bad value 1" in format_markdown(result)


def test_missing_cuda_device_is_a_clear_result(pool, snippet):
    if torch.cuda.is_available():
        pytest.skip("a CUDA device is present")
    result = pool.run(snippet(MODEL, "run", target="cuda"))
    assert result.status == "failed" and result.code == "no-device"
    assert result.message.startswith("no CUDA device: torch.cuda.is_available() is False")


def test_npu_without_torch_npu_is_a_clear_result(pool, snippet):
    result = pool.run(snippet(MODEL, "run", target="npu"))
    if result.ok:
        pytest.skip("torch_npu and an NPU are present: covered by test_npu_target_runs")
    assert result.code in ("missing-package", "no-device")
    assert result.message.startswith(("torch_npu is not installed", "torch_npu cannot load CANN", "no NPU device"))


def test_npu_target_runs(pool, snippet):
    try:
        import torch_npu  # noqa: F401
    except Exception as exc:  # ImportError, or OSError from a missing CANN library
        pytest.skip(f"torch_npu cannot load CANN: {type(exc).__name__}: {exc}")
    result = pool.run(snippet(MODEL, "run", target="npu"))
    assert result.ok, result.message
    assert result.device.startswith("npu")


def test_cuda_target_runs(pool, snippet):
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    result = pool.run(snippet(MODEL, "run", target="cuda"))
    assert result.ok, result.message


def test_warm_worker_serves_the_second_run_without_importing_torch(pool, snippet):
    job = snippet("import torch\n\ndef tiny():\n    return torch.ones(2)\n", "tiny", target="cpu")
    first = pool.run(job)
    second = pool.run(job)
    assert first.ok and second.ok
    assert second.worker["pid"] == first.worker["pid"]
    assert second.worker["jobs_served"] == first.worker["jobs_served"] + 1
    assert second.worker["torch_import_s"] == 0
    assert second.timing["round_trip_s"] < 1.0


def test_progress_is_reported(pool, snippet):
    messages = []
    result = pool.run(snippet(MODEL, "run", target="cpu"), cancel=threading.Event(), on_progress=messages.append)
    assert result.ok
    assert messages == ["reference run on CPU", "target run on cpu"]
