"""A CUDA test with a finding of its own takes the CUDA findings lowered for it as related
locations, and they are not reported again; every rule at once, as a project runs them."""

from __future__ import annotations

from ascend_lsp.analysis import analyze, fix_text
from ascend_lsp.engine.analyzer import TextEdit
from ascend_lsp.engine.config import Settings
from ascend_lsp.engine.model import Range, Related

SYNC = "inside the guard: NPU103 `torch.cuda.synchronize` is a CUDA API. Use `torch.npu.synchronize`."
SETTINGS = Settings(select=("NPU1", "NPU4"))


def found(text: str) -> list[tuple]:
    return [(f.code, f.range.start_line + 1, f.range.start_col + 1, f.severity.name, f.related)
            for f in analyze(text, SETTINGS).findings]


def test_the_finding_on_another_rule_s_test_takes_the_calls() -> None:
    text = 'import torch\nimport torch.distributed as dist\n\nif dist.get_backend() == "nccl":\n' \
           '    torch.cuda.synchronize()\n'
    assert found(text) == [("NPU401", 4, 26, "ERROR", (Related(Range(4, 4, 4, 26), SYNC),))]


def test_nested_tests_give_their_calls_to_the_outer_one_in_order() -> None:
    text = ("import torch\n\nif torch.cuda.is_available():\n    if torch.cuda.device_count() > 1:\n"
            "        torch.cuda.set_device(0)\n    torch.cuda.synchronize()\n")
    assert found(text) == [("NPU103", 3, 4, "WARNING", (
        Related(Range(3, 7, 3, 30), "inside the guard: NPU103 `torch.cuda.device_count` is a CUDA API. Use "
                                    "`torch.npu.device_count`."),
        Related(Range(4, 8, 4, 29), "inside the guard: NPU103 `torch.cuda.set_device` is a CUDA API. Use "
                                    "`torch.npu.set_device`."),
        Related(Range(5, 4, 5, 26), SYNC)))]


def test_the_most_severe_finding_on_the_test_takes_them() -> None:
    text = "import torch\n\nif torch.backends.cudnn.enabled and torch.cuda.is_available():\n    torch.cuda.synchronize()\n"
    assert [(code, col, severity, len(related)) for code, _, col, severity, related in found(text)] == [
        ("NPU105", 4, "INFO", 0), ("NPU103", 37, "WARNING", 1)]


def test_a_test_without_a_finding_leaves_the_calls_reported_with_the_reason() -> None:
    text = "import torch\n\nif use_cuda:\n    torch.cuda.synchronize()\n"
    [finding] = analyze(text, SETTINGS).findings
    assert (finding.code, finding.severity.name, finding.related) == ("NPU103", "INFO", ())
    assert finding.message.endswith("(Runs only when `use_cuda` passes: on an NPU host not before that CUDA test "
                                    "is changed, and then this needs the change too.)")


def test_a_test_left_as_it_is_by_noqa_or_a_deselected_rule() -> None:
    text = "import torch\n\nif torch.cuda.is_available():  # noqa: NPU103\n    torch.cuda.synchronize()\n"
    assert found(text) == []  # the user keeps the CUDA test: what it guards runs only with CUDA
    text = 'import torch\nimport torch.distributed as dist\n\nif dist.get_backend() == "nccl":\n' \
           '    torch.cuda.synchronize()\n'
    [finding] = analyze(text, Settings(select=("NPU1",))).findings  # NPU401 off: the call has no test to go with
    assert (finding.code, finding.severity.name, finding.related) == ("NPU103", "INFO", ())


def test_fixing_the_test_then_fixes_the_calls() -> None:
    text = "import torch\n\nif torch.cuda.is_available():\n    torch.cuda.synchronize()\n"
    fixed = fix_text(text, SETTINGS)
    assert fixed.text == ("import torch\nimport torch_npu\n\nif torch.npu.is_available():\n"
                          "    torch.npu.synchronize()\n")
    assert fixed.remaining == []
    by_hand = text.replace("torch.cuda.is_available", "torch.npu.is_available")  # the test alone changed
    assert found(by_hand.replace("import torch\n", "import torch\nimport torch_npu\n", 1)) == [
        ("NPU103", 5, 5, "WARNING", ())]  # the call runs on the NPU now: reported with its own fix


def test_an_edit_above_moves_the_related_locations() -> None:
    text = "import torch\n\nx = 1\n\nif torch.cuda.is_available():\n    torch.cuda.synchronize()\n"
    base = analyze(text, SETTINGS)
    edited = text.replace("x = 1\n", "x = 1\ny = 2\nz = 3\n")
    again = analyze(edited, SETTINGS, previous=base, edit=TextEdit(2, 2, 2))
    assert again.walked == 3  # the three assignments alone: the guard's findings were moved
    assert [f.related for f in again.findings] == [(Related(Range(7, 4, 7, 26), SYNC),)]
    assert [f.related for f in again.findings] == [f.related for f in analyze(edited, SETTINGS).findings]


def test_an_exit_in_a_loop_gives_the_rest_of_its_block_to_the_test() -> None:
    text = ("import torch\n\n\ndef restore(states):\n    ok = torch.cuda.is_available()\n"
            "    for key, state in states.items():\n        if key != 'default':\n            if not ok:\n"
            "                continue\n            torch.cuda.set_rng_state(state)\n        torch.cuda.seed()\n")
    assert found(text) == [
        ("NPU103", 5, 10, "WARNING", (Related(Range(9, 12, 9, 36), "inside the guard: NPU103 `torch.cuda.set_rng_state` "
                                                                  "is a CUDA API. Use `torch.npu.set_rng_state`."),)),
        ("NPU103", 11, 9, "WARNING", ())]  # past the block the exit leaves: the default key gets here without CUDA


def test_an_and_after_a_comparison_for_cuda_gives_it_the_rest() -> None:
    text = ('import torch\n\n\ndef get_device(device):\n    device = torch.device(device)\n'
            '    if device.type == "cuda" and not torch.cuda.is_available():\n        return torch.device("cpu")\n'
            '    return device\n')
    [finding] = found(text)
    assert finding[:4] == ("NPU101", 6, 23, "WARNING")  # the request for CUDA takes the test of its availability
    assert [r.range for r in finding[4]] == [Range(5, 37, 5, 60)]
    # torch.distributed's enum names the backend as its string does (`dist.Backend.NCCL == "nccl"`)
    text = ('import torch\nimport torch.distributed as dist\n\n\ndef setup(backend):\n'
            '    if backend == dist.Backend.NCCL and not torch.cuda.is_available():\n        raise RuntimeError("no GPU")\n')
    assert found(text) == [("NPU103", 6, 45, "INFO", ())]
    # after a flag, the availability test is what finds no CUDA on an NPU host: it keeps its finding
    text = "import torch\n\nuse_gpu = args.cuda and torch.cuda.is_available()\n"
    assert found(text) == [("NPU103", 3, 25, "WARNING", ())]
    # nor after an opt-in read from the environment whose name says CUDA
    text = 'import os\nimport torch\n\nok = os.getenv("USE_CUDA_KERNELS", "0") == "1" and torch.cuda.is_available()\n'
    assert found(text) == [("NPU103", 4, 52, "WARNING", ())]
