"""A repository is untrusted data: what lsp-check reads and writes in one (its cache folder,
the files --fix and --add-noqa rewrite) cannot make it write outside the tree, write through
a link, hang, or keep a stale result. The real console script on real links, FIFOs and
hard links."""

from __future__ import annotations

import os
import resource
import signal
import subprocess
from pathlib import Path

import pytest

from .conftest import SCRIPT, lsp_check

CUDA_CALL = "import torch\n\ntorch.cuda.synchronize()\n"
FIXED = "import torch\nimport torch_npu\n\ntorch.npu.synchronize()\n"


@pytest.fixture
def tree(tmp_path: Path, monkeypatch) -> Path:
    """A project folder with one file that has a finding, inside a folder that holds a
    file the project must never touch (`precious`)."""
    root = tmp_path / "project"
    root.mkdir()
    (root / "pyproject.toml").write_text("[tool.ascend-lsp]\n")
    (root / "train.py").write_text(CUDA_CALL)
    (tmp_path / "precious").write_text("precious\n")
    monkeypatch.setenv("ASCEND_LSP_CACHE_DIR", str(tmp_path / "table-cache"))
    monkeypatch.delenv("PRE_COMMIT", raising=False)
    return root.resolve()


def started(root: Path, *args: str) -> subprocess.Popen:
    return subprocess.Popen([str(SCRIPT), *args], cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


# --- --fix and --add-noqa --------------------------------------------------------------------
def test_fix_on_a_link_fixes_the_target_and_keeps_the_link(tree):
    (tree / "real").mkdir()
    (tree / "train.py").rename(tree / "real" / "train.py")
    (tree / "train.py").symlink_to("real/train.py")
    run = lsp_check(tree, "--fix", "train.py")
    assert run.returncode == 0, run.stderr
    assert os.readlink(tree / "train.py") == "real/train.py"
    assert (tree / "real" / "train.py").read_text() == FIXED


def test_add_noqa_on_a_link_writes_the_target_and_keeps_the_link(tree):
    (tree / "real").mkdir()
    (tree / "train.py").rename(tree / "real" / "train.py")
    (tree / "train.py").symlink_to("real/train.py")
    run = lsp_check(tree, "--add-noqa", "train.py")
    assert run.returncode == 0, run.stderr
    assert os.readlink(tree / "train.py") == "real/train.py"
    assert (tree / "real" / "train.py").read_text() == "import torch\n\ntorch.cuda.synchronize()  # noqa: NPU103\n"


def test_fix_refuses_a_read_only_file(tree):
    train = tree / "train.py"
    train.chmod(0o444)
    run = lsp_check(tree, "--fix", "train.py")
    assert run.returncode == 2
    assert run.stderr == "error: train.py: the file is read-only; not written\n"
    assert train.read_text() == CUDA_CALL


def test_fix_refuses_a_file_with_hard_links(tree):
    train, other = tree / "train.py", tree.parent / "other_name.py"
    os.link(train, other)
    run = lsp_check(tree, "--fix", "train.py")
    assert run.returncode == 2
    assert run.stderr == "error: train.py: the file has 2 hard links, which writing it would separate; not written\n"
    assert train.read_text() == other.read_text() == CUDA_CALL
    assert train.stat().st_ino == other.stat().st_ino


def test_fix_keeps_each_untouched_lines_own_line_break(tree):
    train = tree / "train.py"
    train.write_bytes(b"import torch\r\n\r\ntorch.cuda.synchronize()\r\nx = 1\ny = 2\r\n")
    assert lsp_check(tree, "--fix", "train.py").returncode == 0
    assert train.read_bytes() == b"import torch\r\nimport torch_npu\r\n\r\ntorch.npu.synchronize()\r\nx = 1\ny = 2\r\n"


def test_a_link_planted_at_the_fix_temporary_name_is_not_written_through(tree):
    process = started(tree, "--fix", "train.py")
    planted = tree / f".train.py.lsp-check-{process.pid}.tmp"  # the name beside the file, by process id
    planted.symlink_to(tree.parent / "precious")
    process.communicate(timeout=300)
    assert process.returncode == 0
    assert (tree.parent / "precious").read_text() == "precious\n"
    assert (tree / "train.py").read_text() == FIXED


def test_fix_on_a_full_disk_leaves_the_file_and_no_temporary_file(tree):
    train = tree / "train.py"
    train.write_text(CUDA_CALL + "#" * 60_000 + "\n")
    assert lsp_check(tree, "train.py", "--no-cache").returncode == 1  # the tables' cache is written now

    def files_of_at_most_32_kib() -> None:  # a write past it fails with EFBIG, as on a full disk
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (32 << 10, 32 << 10))

    run = subprocess.run([str(SCRIPT), "--fix", "train.py"], cwd=tree, capture_output=True, text=True, timeout=300,
                         preexec_fn=files_of_at_most_32_kib)
    assert run.returncode == 2
    assert run.stderr == "error: train.py: cannot write: File too large\n"
    assert train.read_text() == CUDA_CALL + "#" * 60_000 + "\n"
    assert sorted(os.listdir(tree)) == ["pyproject.toml", "train.py"]

