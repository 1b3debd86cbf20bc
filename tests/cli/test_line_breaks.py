"""The CLI counts lines as Python and editors do (\\r\\n, \\r, \\n only): `--fix` after a
syntax error beside a lone CR, `--add-noqa` beside form feeds and U+2028, notebook cells."""

from __future__ import annotations

import json
from pathlib import Path

from .conftest import lsp_check

LONE_CR = b"import torch\rx = = 1\ny = 2\ntorch.cuda.synchronize()\n"


def test_fix_after_a_syntax_error_beside_a_lone_cr_edits_the_reported_line(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_bytes(LONE_CR)
    proc = lsp_check(tmp_path, "a.py", "--output-format", "concise", "--select", "NPU103")
    assert proc.stdout.splitlines()[:2] == ["a.py:2:5: E999 SyntaxError: invalid syntax",
                                            "a.py:4:1: NPU103 [*] `torch.cuda.synchronize` is a CUDA API. "
                                            "Use `torch.npu.synchronize`."]
    lsp_check(tmp_path, "a.py", "--fix", "--select", "NPU103")
    # the import goes below `import torch`, ended as that line is
    assert (tmp_path / "a.py").read_bytes() == b"import torch\rimport torch_npu\rx = = 1\ny = 2\ntorch.npu.synchronize()\n"


def test_add_noqa_beside_form_feeds_line_separators_and_lone_crs(tmp_path: Path) -> None:
    path = tmp_path / "a.py"
    path.write_text('import torch\r\x0c\nx = """a\x0cb"""; torch.cuda.synchronize()\n# \u2028 注释 🚀\r'
                    'y = "\u2028\x85"; torch.cuda.synchronize()', newline="")
    assert lsp_check(tmp_path, "a.py", "--add-noqa").returncode == 0
    assert path.read_bytes().decode() == (
        'import torch\r\x0c\nx = """a\x0cb"""; torch.cuda.synchronize()  # noqa: NPU103\n# \u2028 注释 🚀\r'
        'y = "\u2028\x85"; torch.cuda.synchronize()  # noqa: NPU103')


def test_notebook_cell_positions_beside_a_line_separator(tmp_path: Path) -> None:
    notebook = {"cells": [{"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
                           "source": ["import torch  # \u2028 注释\x0c\n", "s = '\u2028'\n"]},
                          {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
                           "source": ["t = s\n", "x = torch.ones(2).cuda()"]}],
                "metadata": {"language_info": {"name": "python"}}, "nbformat": 4, "nbformat_minor": 5}
    (tmp_path / "nb.ipynb").write_text(json.dumps(notebook, indent=1))
    proc = lsp_check(tmp_path, "nb.ipynb", "--output-format", "concise", "-q")
    assert proc.stdout.strip() == "nb.ipynb:cell 2:2:19: NPU102 [*] `.cuda()` is CUDA-only. Use `.npu()`."
    lsp_check(tmp_path, "nb.ipynb", "--fix")
    cells = json.loads((tmp_path / "nb.ipynb").read_text())["cells"]
    assert ["".join(cell["source"]) for cell in cells] == [
        "import torch  # \u2028 注释\x0c\nimport torch_npu\ns = '\u2028'\n", "t = s\nx = torch.ones(2).npu()"]
