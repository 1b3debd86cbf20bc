"""`--add-noqa`: every finding suppressed in place, merged with existing comments, never a
broken file."""

from __future__ import annotations

import json
from pathlib import Path

from ascend_lsp.cli.noqa_writer import comment_safe_lines, with_noqa

from .conftest import lsp_check


def test_adds_and_merges_noqa_comments_then_the_file_is_clean(tmp_path: Path) -> None:
    path = tmp_path / "a.py"
    path.write_text(
        "import torch\n"
        "\n"
        "x = torch.ones(2).cuda(); torch.cuda.synchronize()\n"
        "y = torch.ones(2).cuda()  # noqa: NPU103\n"
        "z = torch.ones(2).cuda()  # move it  # noqa\n"
        "w = torch.ones(2).cuda()  # keep on the GPU\n"
    )
    proc = lsp_check(tmp_path, "a.py", "--add-noqa")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Added 4 noqa codes to 1 file." in proc.stderr
    assert path.read_text() == (
        "import torch\n"
        "\n"
        "x = torch.ones(2).cuda(); torch.cuda.synchronize()  # noqa: NPU102, NPU103\n"
        "y = torch.ones(2).cuda()  # noqa: NPU103, NPU102\n"
        "z = torch.ones(2).cuda()  # move it  # noqa\n"
        "w = torch.ones(2).cuda()  # keep on the GPU  # noqa: NPU102\n"
    )
    assert lsp_check(tmp_path, "a.py").returncode == 0
    again = lsp_check(tmp_path, "a.py", "--add-noqa")
    assert again.returncode == 0 and "Added 0 noqa codes to 0 files." in again.stderr


def test_never_writes_into_a_multiline_string_or_after_a_backslash(tmp_path: Path) -> None:
    source = (
        "import torch\n"
        "dev, note = torch.device('cuda'), '''\n"
        "spans lines'''\n"
        "total = torch.ones(1).cuda() + \\\n"
        "    1\n"
        "f = torch.ones(1).cuda()\n"
    )
    path = tmp_path / "b.py"
    path.write_text(source)
    proc = lsp_check(tmp_path, "b.py", "--add-noqa", "--output-format", "concise")
    assert proc.returncode == 1  # two findings could not be suppressed, and still fire
    assert "warning: b.py:2: NPU101 not suppressed: the line ends inside a multi-line string" in proc.stderr
    assert "warning: b.py:4: NPU102 not suppressed" in proc.stderr
    assert path.read_text() == source.replace("f = torch.ones(1).cuda()\n",
                                              "f = torch.ones(1).cuda()  # noqa: NPU102\n")
    assert [line.split(": ")[1].split()[0] for line in proc.stdout.splitlines() if line.startswith("b.py")] == \
        ["NPU101", "NPU102"]


def test_safe_lines_and_the_parse_guard(monkeypatch) -> None:
    text = "a = '''x\ny'''\nb = (1,\n     2)\nc = 1 + \\\n    2\n"
    assert comment_safe_lines(text) == {1, 2, 3, 5}
    # A string left open: the lines before it are known, the rest left alone.
    new, refused = with_noqa("x = 1\ns = '''open\nmore\n", [(0, "NPU101"), (1, "NPU102"), (0, "E999")])
    assert new == "x = 1  # noqa: NPU101\ns = '''open\nmore\n"
    assert [(line, code) for line, code, _ in refused] == [(1, "NPU102"), (0, "E999")]
    # Should the token check ever be wrong, a file that parsed is never written broken.
    import ascend_lsp.cli.noqa_writer as writer

    monkeypatch.setattr(writer, "comment_safe_lines", lambda _text: {0, 1})
    text = "s = f(1, \\\n      2)\n"
    assert with_noqa(text, [(0, "NPU101")]) == (text, [(0, "NPU101", "adding the comment would break the file")])


def test_keeps_crlf_and_writes_notebook_cells(tmp_path: Path) -> None:
    win = tmp_path / "win.py"
    win.write_bytes(b"import torch\r\nx = torch.ones(2).cuda()\r\n")
    lsp_check(tmp_path, "win.py", "--add-noqa")
    assert win.read_bytes() == b"import torch\r\nx = torch.ones(2).cuda()  # noqa: NPU102\r\n"
    notebook = {"cells": [{"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
                           "source": ["import torch\n", "x = torch.ones(2).cuda()"]}],
                "metadata": {"language_info": {"name": "python"}}, "nbformat": 4, "nbformat_minor": 5}
    nb = tmp_path / "nb.ipynb"
    nb.write_text(json.dumps(notebook, indent=1))
    assert lsp_check(tmp_path, "nb.ipynb", "--add-noqa").returncode == 0
    assert json.loads(nb.read_text())["cells"][0]["source"] == ["import torch\n",
                                                                 "x = torch.ones(2).cuda()  # noqa: NPU102"]


def test_add_noqa_refuses_to_combine_with_fix(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("import torch\nx = torch.ones(2).cuda()\n")
    proc = lsp_check(tmp_path, "a.py", "--add-noqa", "--fix")
    assert proc.returncode == 2 and "--add-noqa cannot be combined with --fix" in proc.stderr
