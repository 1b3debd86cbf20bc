"""Which findings of NPU405 and NPU201 stay warnings or errors and which the code or the facts
lower to info (the fixtures' .expected files show the messages, not the severities)."""

from __future__ import annotations

from pathlib import Path

from ascend_lsp.analysis import analyze
from ascend_lsp.engine.config import Settings
from ascend_lsp.engine.model import Severity

FIXTURES = Path(__file__).parent / "fixtures"


def severities(code: str) -> dict[int, list[str]]:
    path = FIXTURES / f"{code}.py"
    analysis = analyze(path.read_text(encoding="utf-8"), Settings(target="torch_npu", select=(code,)), str(path))
    lines: dict[int, list[str]] = {}
    for finding in analysis.findings:
        lines.setdefault(finding.range.start_line + 1, []).append(finding.severity.value)
    return lines


def test_float64_on_the_device_stays_a_warning_and_on_the_cpu_is_info() -> None:
    found = severities("NPU405")
    warned = sorted(line for line, found_here in found.items() if Severity.WARNING.value in found_here)
    # device= given, .double() in a function that places tensors, .to(device), all_reduce, a dtype
    # chosen beside `self.device`, a cast in a function that reads `.device`, a CPU tensor moved by .cuda()
    assert warned == [6, 7, 8, 9, 14, 19, 33]
    assert all(found[line] == [Severity.INFO.value] for line in found if line not in warned and line != 41)
    assert found[41] == [Severity.INFO.value, Severity.INFO.value]
