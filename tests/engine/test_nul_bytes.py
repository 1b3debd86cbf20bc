"""A NUL byte anywhere in an open document: one syntax error where it is, and the findings
of the rest (Python names no place and refuses the whole text, which once gave 25 E999s at
1:1 and nothing else)."""

from __future__ import annotations

from ascend_lsp.analysis import analyze


def test_a_nul_byte_is_one_syntax_error_where_it_is() -> None:
    text = "import torch\n" + "x = 1\n" * 10 + "y = 1\0\0\n" + "torch.cuda.synchronize()\n" + "z = '\0'\n"
    found = [(f.code, f.range.start_line, f.range.start_col, f.message) for f in analyze(text).findings]
    assert found == [
        ("E999", 11, 5, "SyntaxError: source contains a NUL byte (a binary file?)"),
        ("NPU103", 12, 0, "`torch.cuda.synchronize` is a CUDA API. Use `torch.npu.synchronize`."),
    ]
