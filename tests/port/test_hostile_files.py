"""`lsp-check port` and `convert-weights` on what a repository (or a slip of the command line)
can put where they read and write: device nodes, FIFOs, links, missing folders, a .pth that
would run code. The real console script in a subprocess."""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest

from ..cli.conftest import SCRIPT

SOURCE = "import torch\n\n\ndef f(x):\n    return torch.relu(x)\n"
MODEL = "import torch.nn as nn\n\n\nclass Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n" \
        "        self.fc = nn.Linear(2, 3)\n"


def lsp_check(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(SCRIPT), *args], cwd=cwd, capture_output=True, text=True, timeout=300)


@pytest.fixture
def device(tmp_path: Path) -> Path:
    """A character device like /dev/null (1, 3), made here rather than touching the real one."""
    if os.geteuid() != 0:
        pytest.skip("making a device node needs root")
    node = tmp_path / "null"
    os.mknod(node, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    return node


@pytest.fixture
def source(tmp_path: Path) -> Path:
    path = tmp_path / "f.py"
    path.write_text(SOURCE)
    return path


def test_port_refuses_to_replace_a_device_node(tmp_path, source, device):
    run = lsp_check(tmp_path, "port", "f.py", "-o", "null")
    assert run.returncode == 2
    assert run.stderr == "error: null: not a regular file (a device or socket); only regular files are written\n"
    assert stat.S_ISCHR(os.lstat(device).st_mode)


def test_port_report_refuses_to_replace_a_device_node(tmp_path, source, device):
    run = lsp_check(tmp_path, "port", "f.py", "--report", "null")
    assert run.returncode == 2
    assert run.stderr == "error: null: not a regular file (a device or socket); only regular files are written\n"
    assert stat.S_ISCHR(os.lstat(device).st_mode)


def test_port_does_not_write_through_a_link_at_its_output_name(tmp_path, source):
    """A repository can commit `f_mindspore.py` as a link to a file of the user's."""
    (tmp_path / "precious").write_text("precious\n")
    (tmp_path / "f_mindspore.py").symlink_to("precious")
    run = lsp_check(tmp_path, "port", "f.py")
    assert run.returncode == 2
    assert run.stderr == "error: f_mindspore.py: a symbolic link; not written through it\n"
    assert (tmp_path / "precious").read_text() == "precious\n"


def test_a_new_port_has_a_new_files_mode(tmp_path, source):
    """0666 less the umask, as any new file: not the 0600 of a private temporary file."""
    run = subprocess.run([str(SCRIPT), "port", "f.py"], cwd=tmp_path, capture_output=True, text=True, timeout=300,
                         preexec_fn=lambda: os.umask(0o027))
    assert run.returncode == 0, run.stderr
    assert stat.S_IMODE(os.stat(tmp_path / "f_mindspore.py").st_mode) == 0o640


def test_port_into_a_missing_folder_says_so(tmp_path, source):
    run = lsp_check(tmp_path, "port", "f.py", "-o", "nodir/x.py")
    assert (run.returncode, run.stderr) == (2, "error: nodir/x.py: the folder nodir does not exist\n")


def test_port_refuses_a_fifo_without_waiting_on_it(tmp_path):
    os.mkfifo(tmp_path / "f.py")
    run = lsp_check(tmp_path, "port", "f.py")
    assert (run.returncode, run.stderr) == (2, "error: f.py: not a regular file (a FIFO); only files are read\n")
    assert not (tmp_path / "f_mindspore.py").exists()


def test_port_of_a_file_that_is_not_utf8_says_where(tmp_path):
    (tmp_path / "f.py").write_bytes(b"x = '\xff'\n")
    run = lsp_check(tmp_path, "port", "f.py")
    assert (run.returncode, run.stderr) == (2, "error: f.py: not valid utf-8 text (invalid start byte at byte 5)\n")


@pytest.mark.torch
def test_convert_weights_refuses_to_replace_a_device_node(tmp_path, device):
    torch = pytest.importorskip("torch")
    (tmp_path / "model.py").write_text(MODEL)
    torch.save({"fc.weight": torch.zeros(3, 2), "fc.bias": torch.zeros(3)}, tmp_path / "model.pth")
    run = lsp_check(tmp_path, "convert-weights", "model.pth", "-o", "null", "--source", "model.py")
    assert run.returncode == 2
    assert run.stderr == "error: null: not a regular file (a device or socket); only regular files are written\n"
    assert stat.S_ISCHR(os.lstat(device).st_mode)


class RunsCode:
    """Unpickling this calls os.system: what a malicious .pth holds."""

    def __reduce__(self):
        return os.system, ("touch ran",)


@pytest.mark.torch
def test_convert_weights_refuses_a_pth_that_would_run_code_without_advising_to_run_it(tmp_path):
    torch = pytest.importorskip("torch")
    (tmp_path / "model.py").write_text(MODEL)
    torch.save({"fc.weight": RunsCode()}, tmp_path / "model.pth")
    run = lsp_check(tmp_path, "convert-weights", "model.pth", "-o", "model.ckpt", "--source", "model.py")
    assert run.returncode == 2
    assert run.stderr == ("error: model.pth: not loaded: it is not a state dict of tensors and plain containers, "
                          "which alone can be loaded without running code from the file (Trying to load "
                          "unsupported GLOBAL posix.system whose module posix is blocked.)\n")
    assert not (tmp_path / "ran").exists() and not (tmp_path / "model.ckpt").exists()


@pytest.mark.torch
def test_convert_weights_refuses_a_fifo_without_waiting_on_it(tmp_path):
    pytest.importorskip("torch")
    (tmp_path / "model.py").write_text(MODEL)
    os.mkfifo(tmp_path / "model.pth")
    run = lsp_check(tmp_path, "convert-weights", "model.pth", "-o", "model.ckpt", "--source", "model.py")
    assert run.returncode == 2
    assert run.stderr == "error: model.pth: not a regular file (a FIFO); only files are read\n"
