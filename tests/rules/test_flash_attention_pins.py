"""NPU307 reads the project's transformers pin with the releases NPU803 reads: a pin that admits
none that fail makes FlashAttention-2 info, with the pin's place; one that allows them is named in
the warning; without a pin, or for FlashAttention-3 (no release maps it), the warning stays."""

from __future__ import annotations

from pathlib import Path

import pytest

from ascend_lsp.analysis import analyze
from ascend_lsp.engine.config import Settings
from ascend_lsp.engine.model import Severity
from ascend_lsp.project import Projects

CODE = (
    "from transformers import AutoModelForCausalLM\n"
    'a = AutoModelForCausalLM.from_pretrained("m", attn_implementation="flash_attention_2")\n'
    'b = AutoModelForCausalLM.from_pretrained("m", use_flash_attention_2=True)\n'
    'c = AutoModelForCausalLM.from_pretrained("m", attn_implementation="flash_attention_3")\n'
)


def findings(tmp_path: Path, pin: str | None):
    if pin is not None:
        (tmp_path / "requirements.txt").write_text(f"torch\ntransformers{pin}\n", encoding="utf-8")
    path = tmp_path / "model.py"
    path.write_text(CODE, encoding="utf-8")
    settings = Settings(select=("NPU307",), root=str(tmp_path))
    project = Projects().for_path(str(path), settings)
    return [(f.range.start_line + 1, f.severity, f.message, [(r.path, r.range.start_line, r.message) for r in f.related])
            for f in analyze(CODE, settings, str(path), project=project).findings]


@pytest.mark.parametrize("pin", [">=4.56.0", "==4.53.2", ">=4.51.0,<4.54"])
def test_a_pin_of_working_releases_makes_flash_attention_2_info(tmp_path: Path, pin: str) -> None:
    found = findings(tmp_path, pin)
    assert [(line, severity) for line, severity, _, _ in found] == [
        (2, Severity.INFO), (3, Severity.INFO), (4, Severity.WARNING)]
    for _, _, message, related in found[:2]:
        assert message.endswith(f"(The project pins `transformers{pin}`, which admits no release where this fails "
                                "on the NPU (`<4.51.0`, `>=4.54.0,<=4.55.2`): those transformers run it with "
                                "torch_npu's fused attention.)")
        assert related == [(str(tmp_path / "requirements.txt"), 1, f"`transformers` pinned here (`{pin}`)")]
    assert found[2][3] == [] and "pins" not in found[2][2]


@pytest.mark.parametrize(("pin", "window"), [("==4.48.0", "<4.51.0"), ("~=4.55.0", ">=4.54.0,<=4.55.2"),
                                             (">=4.40", "<4.51.0")])
def test_a_pin_that_allows_failing_releases_is_named(tmp_path: Path, pin: str, window: str) -> None:
    found = findings(tmp_path, pin)
    assert [severity for _, severity, _, _ in found] == [Severity.WARNING] * 3
    for _, _, message, related in found[:2]:
        assert message.endswith(f"(The project's pin `transformers{pin}` allows `transformers{window}`, releases "
                                "that fail with it on the NPU: raise the pin or use `sdpa`.)")
        assert related == [(str(tmp_path / "requirements.txt"), 1, f"`transformers` pinned here (`{pin}`)")]


def test_without_a_pin_the_warning_stays(tmp_path: Path) -> None:
    found = findings(tmp_path, None)
    assert [(severity, related) for _, severity, _, related in found] == [(Severity.WARNING, [])] * 3
    assert all(message.endswith("`sdpa` works on every release.") for _, _, message, _ in found)
