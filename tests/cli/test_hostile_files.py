"""A repository is untrusted data: what lsp-check reads and writes in one (its cache folder,
the files --fix and --add-noqa rewrite) cannot make it write outside the tree, write through
a link, hang, or keep a stale result. The real console script on real links, FIFOs and
hard links."""

from __future__ import annotations

import marshal
import os
import resource
import signal
import subprocess
from pathlib import Path

import pytest

from .conftest import SCRIPT, lsp_check

CUDA_CALL = "import torch\n\ntorch.cuda.synchronize()\n"
FIXED = "import torch\nimport torch_npu\n\ntorch.npu.synchronize()\n"
EMPTY_BASELINE = '{\n  "lsp-check-baseline": 1,\n  "findings": []\n}\n'


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


def cache_file(root: Path) -> Path:
    [file] = (root / ".lsp-check-cache").glob("*.marshal")
    return file


def started(root: Path, *args: str) -> subprocess.Popen:
    return subprocess.Popen([str(SCRIPT), *args], cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


# --- the cache folder ------------------------------------------------------------------------
def test_a_gitignore_link_in_the_cache_folder_is_not_written_through(tree):
    (tree / ".lsp-check-cache").mkdir()
    (tree / ".lsp-check-cache" / ".gitignore").symlink_to("../../precious")
    run = lsp_check(tree, ".")
    assert run.returncode == 1, run.stderr
    assert (tree.parent / "precious").read_text() == "precious\n"
    assert (tree / ".lsp-check-cache" / ".gitignore").is_symlink()
    assert cache_file(tree).is_file()


def test_a_cache_folder_that_is_a_link_is_not_used(tree):
    outside = tree.parent / "outside"
    outside.mkdir()
    (tree / ".lsp-check-cache").symlink_to(outside)
    run = lsp_check(tree, ".")
    assert run.returncode == 1
    assert run.stderr == (f"warning: {tree}/.lsp-check-cache: a symbolic link, not a folder; results are not "
                          "cached (remove it to cache them)\n")
    assert os.listdir(outside) == []


def test_a_link_planted_at_the_cache_files_temporary_name_is_not_written_through(tree):
    assert lsp_check(tree, ".").returncode == 1
    file = cache_file(tree)
    (tree / "other.py").write_text("x = 1\n")  # something new to cache: the cache is written again
    process = started(tree, ".")
    planted = file.with_suffix(f".{process.pid}.tmp")  # beside the cache file, named by the process id
    planted.symlink_to(tree.parent / "precious")
    process.communicate(timeout=300)
    assert process.returncode == 1
    assert (tree.parent / "precious").read_text() == "precious\n"
    assert planted.is_symlink()
    assert "other.py" in marshal.loads(file.read_bytes())  # the cache was saved, other.py with it


@pytest.mark.parametrize("bad", ["list", "code object", "/dev/zero", "FIFO"])
def test_a_bad_cache_file_is_discarded_and_rebuilt(tree, bad):
    assert lsp_check(tree, ".").returncode == 1
    file = cache_file(tree)
    file.unlink()
    if bad == "list":
        file.write_bytes(marshal.dumps([1]))
    elif bad == "code object":
        file.write_bytes(marshal.dumps(compile("1", "x", "eval")))
    elif bad == "/dev/zero":
        file.symlink_to("/dev/zero")
    else:
        os.mkfifo(file)

    def at_most_2_gib() -> None:  # reading /dev/zero to the end must fail here, not take the machine's memory
        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))

    run = subprocess.run([str(SCRIPT), "."], cwd=tree, capture_output=True, text=True, timeout=120,
                         preexec_fn=at_most_2_gib)
    assert (run.returncode, run.stderr) == (1, "")
    assert "train.py:3:1: NPU103" in run.stdout
    assert file.is_file() and not file.is_symlink()
    assert isinstance(marshal.loads(file.read_bytes()), dict)


# --- what a cached result depends on ---------------------------------------------------------
USES_OP = "import torch\n\n\ndef scale(x):\n    return torch.ops.myops.scale(x)\n"
CUDA_ONLY_OP = """#include <torch/library.h>
TORCH_LIBRARY(myops, m) { m.def("scale(Tensor x) -> Tensor"); }
TORCH_LIBRARY_IMPL(myops, CUDA, m) { m.impl("scale", &scale_cuda); }
"""


def test_two_projects_with_equal_settings_keep_their_own_operators(tmp_path, monkeypatch):
    """Neither project has settings of its own (both use the defaults); each registers its
    own operators (NPU308)."""
    monkeypatch.setenv("ASCEND_LSP_CACHE_DIR", str(tmp_path / "table-cache"))
    top = tmp_path / "top"
    for name in ("first", "second"):
        (top / name).mkdir(parents=True)
        (top / name / "setup.py").write_text("")
        (top / name / "ops.py").write_text(USES_OP)
    assert lsp_check(top, "first", "second").returncode == 0
    (top / "second" / "ops.cu").write_text(CUDA_ONLY_OP)
    cached, uncached = lsp_check(top, "first", "second"), lsp_check(top, "first", "second", "--no-cache")
    assert (cached.returncode, cached.stdout) == (uncached.returncode, uncached.stdout)
    assert cached.returncode == 1
    assert "second/ops.py:5:12: NPU308" in cached.stdout
    assert "first/ops.py" not in cached.stdout


def test_an_edit_that_keeps_the_size_and_restores_the_mtime_is_checked_again(tree):
    train = tree / "train.py"
    train.write_text("import torch\n\n# torch.cuda.synchronize()\n")
    assert lsp_check(tree, ".").returncode == 0
    before = train.stat()
    train.write_text("import torch\n\ntorch.cuda.synchronize()  \n")  # as long as before
    os.utime(train, ns=(before.st_atime_ns, before.st_mtime_ns))  # as `touch -d` or a restoring tool would
    assert (train.stat().st_size, train.stat().st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    run = lsp_check(tree, ".")
    assert run.returncode == 1
    assert "train.py:3:1: NPU103" in run.stdout


# --- --fix and --add-noqa --------------------------------------------------------------------
@pytest.mark.parametrize("writer, written", [
    ("--fix", FIXED), ("--add-noqa", "import torch\n\ntorch.cuda.synchronize()  # noqa: NPU103\n")])
def test_a_writer_on_a_link_writes_the_target_and_keeps_the_link(tree, writer, written):
    (tree / "real").mkdir()
    (tree / "train.py").rename(tree / "real" / "train.py")
    (tree / "train.py").symlink_to("real/train.py")
    run = lsp_check(tree, writer, "train.py")
    assert run.returncode == 0, run.stderr
    assert os.readlink(tree / "train.py") == "real/train.py"
    assert (tree / "real" / "train.py").read_text() == written


@pytest.mark.parametrize("named", ["train.py", "."])
@pytest.mark.parametrize("writer", ["--fix", "--add-noqa"])
def test_fix_on_a_link_out_of_the_checked_tree_writes_nothing(tree, named, writer):
    outside = tree.parent / "outside.py"
    outside.write_text(CUDA_CALL)
    (tree / "train.py").unlink()
    (tree / "train.py").symlink_to(outside)
    run = lsp_check(tree, writer, named)
    assert run.returncode == 2
    assert f"error: train.py: a symbolic link to {outside}, outside the checked tree; not written through it" \
        in run.stderr
    assert outside.read_text() == CUDA_CALL and (tree / "train.py").is_symlink()


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



@pytest.mark.parametrize("option", ["-o", "--write-baseline"])
def test_an_output_file_committed_as_a_link_is_not_written_through(tree, option):
    victim = tree.parent / "victim.json"
    victim.write_text(EMPTY_BASELINE)  # a file --write-baseline would read, then rewrite
    (tree / "out.json").symlink_to(victim)
    run = lsp_check(tree, "--output-format", "json", option, "out.json", ".")
    assert run.returncode == 2
    assert "out.json: a symbolic link; not written through it" in run.stderr
    assert victim.read_text() == EMPTY_BASELINE and (tree / "out.json").is_symlink()


def test_a_baseline_that_is_a_fifo_is_refused_at_once(tree):
    os.mkfifo(tree / "baseline.json")
    run = lsp_check(tree, "--baseline", "baseline.json", ".")
    assert run.returncode == 2
    assert "baseline.json: cannot read the baseline: not a regular file (a FIFO); only files are read" in run.stderr
