"""Findings on code that is already right for an NPU, or harmless there, are info or hints
with the reason in the message; the finding to act on keeps its severity (issue 26 §3)."""

from __future__ import annotations

import pytest

from ascend_lsp.analysis import analyze, fix_text
from ascend_lsp.engine.config import Settings
from ascend_lsp.engine.model import Severity

ERROR, WARNING, INFO, HINT = Severity.ERROR, Severity.WARNING, Severity.INFO, Severity.HINT


def found(text: str, path: str | None = None) -> list[tuple[str, int, Severity]]:
    """(code, 1-based line, severity) of each finding."""
    return [(f.code, f.range.start_line + 1, f.severity) for f in analyze(text, Settings(), path=path).findings]


def messages(text: str) -> dict[int, str]:
    return {f.range.start_line + 1: f.message for f in analyze(text, Settings()).findings}


GUARDED = '''import torch


def setup(model, args):
    if torch.cuda.is_available():
        model.cuda()
        torch.cuda.synchronize()
    if args.device == "cuda" and not args.cpu:
        torch.cuda.synchronize()
    if use_cuda or force:
        torch.cuda.synchronize()
    else:
        torch.cuda.synchronize()
    x = model.cuda() if torch.cuda.is_available() else model
'''


def test_code_under_a_cuda_test_is_listed_with_the_test_s_warning() -> None:
    assert found(GUARDED) == [
        ("NPU103", 5, WARNING),  # the test, with what it guards (lines 6 and 7) as related locations
        ("NPU101", 8, WARNING),  # `and not ...` still requires CUDA: line 9 is related
        ("NPU103", 11, WARNING), ("NPU103", 13, WARNING),  # `or` may pass without CUDA; the else runs on the NPU
        ("NPU103", 14, WARNING),  # the conditional expression's test, with its `model.cuda()`
    ]
    related = [[(r.range.start_line + 1, r.message[:25]) for r in f.related] for f in analyze(GUARDED, Settings()).findings]
    assert related == [[(6, "inside the guard: NPU102 "), (7, "inside the guard: NPU103 ")],
                       [(9, "inside the guard: NPU103 ")], [], [], [(14, "inside the guard: NPU102 ")]]


def test_a_guarded_call_is_ported_with_its_test_and_the_rocm_branch_shows_its_fix_only() -> None:
    text = "import torch\nif torch.cuda.is_available():\n    torch.cuda.synchronize()\n" \
           "if torch.version.hip:\n    torch.cuda.synchronize()\n"
    guard, rocm = analyze(text, Settings()).findings
    assert [r.range.start_line for r in guard.related] == [2]
    assert (rocm.range.start_line, rocm.severity, rocm.fix.applicability.value) == (4, INFO, "display")
    assert rocm.message.endswith("(For another backend (ROCm, XPU, MPS, HPU, ...): it does not run on the NPU.)")
    assert fix_text(text, Settings()).text.splitlines()[2:4] == ["if torch.npu.is_available():",
                                                                "    torch.npu.synchronize()"]


DEVICE_STRINGS = '''import torch

device = torch.device("cuda")
dev = "cuda" if ok else "cpu"
name = torch.device("cuda:{}".format(rank))
timer = Timer("cuda")
if mode == "cuda":
    pass
parser.add_argument("--device", default="cuda")
fallback = getattr(args, "device", "cuda")


def get_device():
    return "cuda"


def run(batch, device="cuda"):
    return batch
'''


def test_only_strings_in_a_device_position_are_warnings() -> None:
    assert found(DEVICE_STRINGS) == [
        ("NPU101", 3, WARNING), ("NPU101", 4, WARNING), ("NPU101", 5, WARNING),
        ("NPU101", 6, INFO), ("NPU101", 7, INFO),  # a timer type, a setting compared
        ("NPU101", 9, WARNING),  # the command line's device option: what a run that names none gets
        ("NPU101", 10, INFO),  # a fallback in a file that never names the NPU
        ("NPU101", 14, WARNING), ("NPU101", 17, INFO),
    ]


def test_defaults_in_a_file_that_imports_for_the_npu_are_hints() -> None:
    text = "from transformers.utils import is_torch_npu_available\n" + DEVICE_STRINGS
    assert [(line, severity) for code, line, severity in found(text) if line in (10, 11, 18)] == [
        (10, HINT), (11, HINT), (18, HINT)]


HARMLESS = '''import os
import torch

os.environ["CUDA_VISIBLE_DEVICES"] = "-1"
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")
os.environ["CUDA_VISIBLE_DEVICES"] = "0"


def set_seed(seed):
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


def seed_cuda(seed):
    torch.cuda.manual_seed(seed)


def free(stream: torch.cuda.Stream):
    torch.cuda.empty_cache()
    print(torch.backends.cuda.matmul.allow_tf32)
    torch.backends.cuda.matmul.allow_tf32 = True


def print_env():
    return torch.cuda.get_device_name(), torch.version.cuda
'''


def test_calls_harmless_on_an_npu_are_info_and_a_lone_cuda_seed_stays_a_warning() -> None:
    assert found(HARMLESS) == [
        ("NPU108", 6, WARNING),  # "-1" and "" force the CPU
        ("NPU103", 11, INFO), ("NPU103", 15, WARNING),
        ("NPU103", 18, INFO), ("NPU103", 19, INFO), ("NPU106", 20, INFO), ("NPU106", 21, WARNING),
        ("NPU103", 25, INFO), ("NPU126", 25, INFO),
    ]
    assert "the NPU's generator stays unseeded" in messages(HARMLESS)[15]


@pytest.mark.parametrize("path", ["collect_env.py", "tools/env.py"])
def test_an_environment_report_file_is_info(path: str) -> None:
    text = "import torch\nGPU = torch.cuda.get_device_name()\n"
    assert found(text, path) == [("NPU103", 2, INFO)]
    assert found(text, "train.py") == [("NPU103", 2, WARNING)]


def test_what_fails_on_the_npu_under_a_cuda_test_keeps_its_severity() -> None:
    text = "import torch\nif torch.cuda.device_count() > 1:\n    batched = torch.func.vmap(step)\n"
    assert found(text) == [("NPU103", 2, WARNING), ("NPU201", 3, ERROR)]


def test_a_gpu_class_of_an_accelerator_scheme_does_not_run_on_the_npu() -> None:
    text = ("import torch\n\n\nclass GPUAccelerator(Accelerator):\n    def sync(self):\n"
            "        torch.cuda.synchronize()\n\n\nclass GPUCache:\n    def sync(self):\n"
            "        torch.cuda.synchronize()\n")
    assert found(text) == [("NPU103", 6, INFO), ("NPU103", 11, WARNING)]


FALLBACKS = '''import torch

try:
    import apex
except ImportError:  # the plain optimiser below
    apex = None
try:
    import flash_attn
except ImportError:
    raise SystemExit("needs flash_attn")


def bench(model, device_type):
    module = getattr(torch, device_type, torch.cuda)
    compiled = torch.compile(model)
    used = torch.compile(model)
    return used(module)
'''


def test_imports_with_a_fallback_getattr_fallbacks_and_unused_compiles_are_info() -> None:
    assert found(FALLBACKS) == [
        ("NPU301", 4, INFO), ("NPU302", 8, ERROR),
        ("NPU103", 14, INFO), ("NPU111", 15, INFO), ("NPU111", 16, WARNING),
    ]


PER_DEVICE = '''import torch

SYNC = {
    "cuda": torch.cuda.synchronize,
    "cpu": lambda: None,
}
steps = ["cuda", torch.cuda.synchronize]
ok = torch.cuda.is_available()
if x.device.type == "cuda":
    pass
'''


def test_a_per_device_dicts_cuda_value_is_info_and_cuda_tests_beside_the_npu_are_info() -> None:
    assert found(PER_DEVICE) == [
        ("NPU101", 4, INFO), ("NPU103", 4, INFO),  # looked up only for CUDA
        ("NPU101", 7, INFO), ("NPU103", 7, WARNING),  # a list's element is no dict value
        ("NPU103", 8, WARNING), ("NPU101", 9, WARNING),
    ]
    beside_npu = found("import torch_npu\n" + PER_DEVICE)
    assert [(code, line, severity) for code, line, severity in beside_npu if line in (9, 10)] == [
        ("NPU103", 9, INFO), ("NPU101", 10, INFO)]


def test_the_npu_named_in_the_same_statement_counts_and_elsewhere_in_the_text_does_not() -> None:
    text = ("import torch\n\n\ndef count(kind):\n    npus = torch.npu.device_count()\n"
            "    return torch.cuda.device_count() if kind == \"cuda\" else npus\n\n\n"
            "def gpus():\n    return torch.cuda.device_count()\n")
    assert [(code, line, severity) for code, line, severity in found(text) if code == "NPU103"] == [
        ("NPU103", 6, INFO), ("NPU103", 10, WARNING)]


BUILDERS = '''import torch


class OpBuilder:
    pass


class CUDAOpBuilder(OpBuilder):
    def usable(self):
        return torch.cuda.is_available()


class FusedAdamBuilder(CUDAOpBuilder):
    def arch(self):
        return torch.cuda.get_device_capability()


class CPUAdamBuilder(OpBuilder):
    def sync(self):
        torch.cuda.synchronize()
'''


def test_the_cuda_variant_of_a_class_and_its_own_kind_built_on_it_do_not_run_on_the_npu() -> None:
    """A builder on CUDA's builder is CUDA's too; a model that captures CUDA graphs runs anywhere."""
    assert found(BUILDERS) == [("NPU103", 10, INFO), ("NPU402", 15, INFO), ("NPU103", 20, WARNING)]
    model = "import torch\n\n\nclass Encoder(CUDAGraph, torch.nn.Module):\n    def f(self):\n" \
            "        torch.cuda.synchronize()\n"
    assert found(model) == [("NPU103", 6, WARNING)]


@pytest.mark.parametrize(("path", "severity"), [
    ("pkg/accelerators/cuda.py", INFO), ("vllm/platforms/cuda.py", INFO), ("pkg/accelerators/npu.py", WARNING),
    ("pkg/cuda.py", WARNING)])
def test_the_cuda_module_of_a_per_backend_scheme_does_not_run_on_the_npu(path: str, severity: Severity) -> None:
    assert found("import torch\ntorch.cuda.synchronize()\n", path) == [("NPU103", 2, severity)]


SKIPS = '''import unittest

import pytest
import torch


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU")
def test_kernel():
    pass


requires_cuda = unittest.skipUnless(torch_device == "cuda", "test requires CUDA")
try_apex = is_apex_available()
if is_apex_available():
    from apex import amp
'''


def test_skip_conditions_and_imports_under_an_availability_test_are_info() -> None:
    assert found(SKIPS) == [("NPU103", 7, INFO), ("NPU101", 12, INFO), ("NPU301", 15, INFO)]


def test_a_statement_asked_about_the_npu_keeps_the_advice_facts_of_its_functions() -> None:
    """handles_npu and the advice rules' own_code each derive a fact of the same statement."""
    text = ("import torch\n\n\ndef attend(q, k, v):\n    if torch.cuda.is_available():\n        pass\n"
            "    weights = torch.nn.functional.softmax(q @ k.transpose(-2, -1), dim=-1)\n"
            "    return torch.matmul(weights, v)\n")
    analysis = analyze(text, Settings())
    assert analysis.errors == []
    assert [(f.code, f.range.start_line + 1) for f in analysis.findings] == [("NPU103", 5), ("NPU605", 7)]
