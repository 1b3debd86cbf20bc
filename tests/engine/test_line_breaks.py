"""Lines break at \\r\\n, \\r and \\n only, also where syntax-error recovery blanks a block."""

from __future__ import annotations

from ascend_lsp.analysis import analyze
from ascend_lsp.engine.config import Settings
from ascend_lsp.engine.analyzer import parse
from ascend_lsp.analysis import fix_text
from ascend_lsp.engine.text import split_lines

LONE_CR = "import torch\rx = = 1\ny = 2\ntorch.cuda.synchronize()\n"


def test_recovery_after_a_lone_cr_keeps_every_line_in_place() -> None:
    tree, blocks = parse(LONE_CR)
    assert [(line, msg) for block in blocks for line, _, msg in block.errors] == [(1, "invalid syntax")]
    assert [stmt.lineno for stmt in tree.body] == [1, 3, 4]
    findings = [(f.code, f.range.start_line) for f in analyze(LONE_CR, Settings()).findings]
    assert findings == [("E999", 1), ("NPU103", 3)]


def test_safe_fix_after_recovery_edits_the_reported_line() -> None:
    fixed = fix_text(LONE_CR, Settings(), codes=frozenset({"NPU103"}))
    assert fixed.applied == 1
    assert split_lines(fixed.text)[-3:] == ["x = = 1\n", "y = 2\n", "torch.npu.synchronize()\n"]


def test_recovery_keeps_each_kind_of_line_break() -> None:
    for break_ in ("\r", "\n", "\r\n"):
        text = break_.join(["import torch", "def f(:", "    pass", "", "torch.cuda.synchronize()", ""])
        assert [(f.code, f.range.start_line) for f in analyze(text, Settings()).findings] == \
            [("E999", 1), ("NPU103", 4)], repr(break_)
