"""Bad input gets a clear message and loses nothing: the other files are still checked."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from ascend_lsp.cli.main import main

CUDA = "import torch\n\nx = torch.ones(2).cuda()\n"


@pytest.fixture
def project(tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "good.py").write_text(CUDA)
    return tmp_path


def check(capsys, *paths: str) -> tuple[int, list[str], str]:
    code = main([*paths, "--output-format", "concise", "-q", "--no-cache"])
    out = capsys.readouterr()
    assert "Traceback" not in out.err
    return code, out.out.splitlines(), out.err


def test_a_file_that_does_not_parse_still_gets_the_findings_of_the_rest(project: Path, capsys) -> None:
    (project / "typing.py").write_text(
        "import torch\n\na = torch.ones(2).cuda()\n\n\ndef half_typed(:\n    return 1\n\n\ntorch.cuda.synchronize()\n")
    code, lines, _ = check(capsys, "typing.py")
    assert code == 1
    assert [line.split(": ")[1].split()[0] for line in lines] == ["NPU102", "E999", "NPU103"]
    assert lines[1] == "typing.py:6:16: E999 SyntaxError: invalid syntax"


def test_non_utf8_file_is_reported_and_the_others_still_checked(project: Path, capsys) -> None:
    (project / "latin.py").write_bytes("x = 'caf\xe9'\n".encode("latin-1"))
    code, lines, err = check(capsys, ".")
    assert code == 2
    assert "error: latin.py: not valid utf-8 text" in err.replace("./", "")
    assert any(line.endswith("`.cuda()` is CUDA-only. Use `.npu()`.") for line in lines)


def test_declared_encoding_is_honoured(project: Path, capsys) -> None:
    (project / "latin.py").write_bytes("# -*- coding: latin-1 -*-\nimport torch\nn = 'é'; d = torch.device('cuda')\n"
                                       .encode("latin-1"))
    code, lines, _ = check(capsys, "latin.py")
    assert code == 1 and lines[0].startswith("latin.py:3:27: NPU101")


def test_tabs_count_as_one_column(project: Path, capsys) -> None:
    (project / "tabs.py").write_text("import torch\nif True:\n\tx = torch.ones(1).cuda()\n")
    _, lines, _ = check(capsys, "tabs.py")
    assert lines[0].startswith("tabs.py:3:20: NPU102")


def test_empty_and_binary_and_unreadable_files(project: Path, capsys) -> None:
    (project / "empty.py").write_text("")
    (project / "blob.py").write_bytes(b"\x7fELF\x00\x01\x02")
    (project / "gone.py").symlink_to(project / "nowhere.py")
    code, lines, err = check(capsys, "empty.py", "blob.py", "gone.py", "good.py")
    assert code == 2
    assert "error: blob.py: binary file (a NUL byte at byte 4), not Python source" in err
    assert "error: gone.py: cannot read: No such file or directory" in err
    assert lines[:2] == ["blob.py:1:1: E902 binary file (a NUL byte at byte 4), not Python source",
                         "gone.py:1:1: E902 cannot read: No such file or directory"]
    assert len(lines) == 3 and lines[2].startswith("good.py:3:19: NPU102")
    code, lines, _ = check(capsys, "empty.py")
    assert code == 0 and lines == []


def test_deep_nesting_gives_a_finding_not_a_crash(project: Path, capsys) -> None:
    (project / "parens.py").write_text("x = " + "(" * 1000 + "1" + ")" * 1000 + "\ny = torch.ones(1).cuda()\n")
    (project / "lists.py").write_text("import torch\nx = " + "[" * 150 + "torch.ones(1).cuda()" + "]" * 150 + "\n")
    (project / "chain.py").write_text("import torch\nx = " + " + ".join(["1"] * 100_000) + "\nx.cuda()\n")
    code, lines, _ = check(capsys, "parens.py", "lists.py", "chain.py")
    codes = [line.split(": ")[1].split()[0] for line in lines]
    assert code == 1
    assert lines[0].startswith("chain.py:") and codes.count("E999") >= 1
    assert any(line.startswith("lists.py:2:") and " NPU102 " in line for line in lines)
    assert any(line.startswith("parens.py:1:") and " E999 " in line for line in lines)


def test_five_megabyte_file(project: Path, capsys) -> None:
    block = "def f{n}(x):\n    y = x.cuda()\n    return torch.cuda.synchronize() or y  # 注释 🚀\n\n\n"
    text = "import torch\n\n" + "".join(block.format(n=n) for n in range(60_000))
    assert len(text.encode()) > 5_000_000
    (project / "huge.py").write_text(text)
    start = time.perf_counter()
    code, lines, _ = check(capsys, "huge.py")
    assert code == 1 and len(lines) == 120_000
    assert time.perf_counter() - start < 120
