"""The progress bar: on stderr when it is a terminal (a real pty here), never otherwise."""

from __future__ import annotations

import io
import os
import pty
import subprocess
import tempfile
from pathlib import Path

import pytest

from ascend_lsp.cli.progress import Progress

from .conftest import SCRIPT

NOW = {"LSP_CHECK_PROGRESS_DELAY": "0"}  # show it at once, not after the usual two seconds


@pytest.fixture
def files(tmp_path: Path) -> Path:
    for index in range(12):
        (tmp_path / f"m{index}.py").write_text("import torch\n\nx = torch.ones(2).cuda()\n")
    return tmp_path


def run(cwd: Path, *args: str, tty: bool, env: dict | None = None) -> tuple[int, str, str]:
    """lsp-check with stderr on a pseudo-terminal (tty=True) or a pipe; stdout is a pipe."""
    environ = {**os.environ, **(env or {})}
    environ.pop("PRE_COMMIT", None)
    if not tty:
        proc = subprocess.run([str(SCRIPT), *args], cwd=cwd, capture_output=True, text=True, env=environ,
                              timeout=120)
        return proc.returncode, proc.stdout, proc.stderr
    master, slave = pty.openpty()
    stdout = tempfile.TemporaryFile()  # not a pipe: a large SARIF would fill it while the pty is read
    proc = subprocess.Popen([str(SCRIPT), *args], cwd=cwd, stdout=stdout, stderr=slave, env=environ)
    os.close(slave)
    chunks = []
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(master)
    code = proc.wait(timeout=120)
    stdout.seek(0)
    with stdout:
        return code, stdout.read().decode(), b"".join(chunks).decode(errors="replace")


def test_bar_on_a_terminal(files: Path) -> None:
    code, out, err = run(files, ".", "--no-cache", "-j", "2", tty=True, env=NOW)
    assert code == 1 and "Found 12 findings in 12 files." in out
    assert "\r" in err and "12/12 files" in err and "█" in err
    assert err.endswith("\r\x1b[K")  # erased before the results
    code, _, err = run(files, "report", ".", "-o", "r.html", "--no-cache", tty=True, env=NOW)
    assert "12/12 files" in err and "Wrote the html report" in err


@pytest.mark.parametrize("args, tty", [
    ((".",), False),  # CI logs and pipes
    ((".", "-q"), True),
    ((".", "--output-format", "json"), True),  # a machine format on stdout
    ((".", "--output-format", "sarif"), True),
    (("report", "."), True),  # the report itself on stdout
])
def test_quiet_otherwise(files: Path, args: tuple[str, ...], tty: bool) -> None:
    code, _, err = run(files, *args, "--no-cache", tty=tty, env=NOW)
    assert code == 1
    assert "files" not in err and "\r" not in err and "█" not in err


def test_short_runs_never_show_it() -> None:
    stream = io.StringIO()
    stream.isatty = lambda: True  # type: ignore[method-assign]
    progress = Progress(3, stream, delay=60)
    progress(1)
    progress(2)
    progress.close()
    assert stream.getvalue() == ""
    shown = Progress(4, stream, delay=0)
    shown(4)
    shown.close()
    assert stream.getvalue().startswith("\r" + "█" * 30 + " 4/4 files") and stream.getvalue().endswith("\r\x1b[K")
