"""The portable style on the bundled examples and on real files read from pinned registry
archives (tests/port/sources.py; nothing of them is committed): every finding with a portable
form is fixed, nothing NPU-only is written, the text parses and is stable, and what is left of
the CUDA-only warnings is exactly what has no portable form."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from ascend_lsp.analysis import fix_text
from ascend_lsp.engine.config import Settings
from ascend_lsp.engine.model import Severity
from ascend_lsp.engine.text import line_texts

from ..port.sources import IGNITE, LIGHTNING, Archive, Unreachable

PORTABLE = Settings(fix_style="portable")
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
NPU_NAMES = ("torch_npu", "torch.npu", '"hccl"', "'hccl'")  # "npu" names a backend branch's device type
BOTH_BACKENDS = '("nccl", "hccl")'  # NPU401's portable test: either accelerator's backend, not the NPU's alone

FILES = [
    (IGNITE, "examples/cifar10/main.py", []),  # its tests for CUDA only log or record the GPU's name: info
    (IGNITE, "ignite/distributed/comp_models/native.py", [
        ("NPU107", 'backend: str = "nccl",'),  # a parameter's default, not a backend being chosen
    ]),
    (LIGHTNING, "lightning/fabric/accelerators/cuda.py", []),
]


def left_after_portable_fixes(text: str, name: str) -> list[tuple[str, str]]:
    """(code, the line) of each CUDA-only warning or error the portable fixes leave in `text`."""
    result = fix_text(text, PORTABLE, name, unsafe=True)
    assert result.applied
    ast.parse(result.text)
    written = result.text.replace(BOTH_BACKENDS, "")
    for npu_name in NPU_NAMES:
        assert written.count(npu_name) <= text.count(npu_name), f"the portable fixes wrote {npu_name}"
    again = fix_text(result.text, PORTABLE, name, unsafe=True)
    assert again.applied == 0 and again.text == result.text
    lines = line_texts(result.text)  # the engine's lines: \f or U+2028 break none
    left = [f for f in result.remaining if f.code.startswith(("NPU1", "NPU401")) and f.severity <= Severity.WARNING]
    assert not any(fix.style == "portable" for f in left for fix in f.fixes)  # each portable fix was applied
    return [(f.code, lines[f.range.start_line].strip()) for f in left]


# the examples with CUDA code that has portable forms (mindspore_port.py and custom_op/setup.py have none:
# a MindSpore port, and a CUDA extension's build)
@pytest.mark.parametrize("name", ["train_cuda.py", "precision.py", "attention_flash.py"])
def test_the_bundled_examples(name: str) -> None:
    assert left_after_portable_fixes((EXAMPLES / name).read_text(encoding="utf-8"), name) == []


@pytest.mark.parametrize(("archive", "member", "left"), FILES, ids=[member for _, member, _ in FILES])
def test_real_files(archive: Archive, member: str, left: list[tuple[str, str]]) -> None:
    try:
        text = archive.read(member)
    except Unreachable as exc:
        pytest.skip(str(exc))
    assert left_after_portable_fixes(text, Path(member).name) == left
