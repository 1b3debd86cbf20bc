"""Real editors as clients: Neovim 0.7 (`vim.lsp.start_client`) and Emacs 28 with eglot,
headless, open examples/train_cuda.py and report the diagnostics they received.

Debian: `apt-get install -y neovim emacs-nox elpa-eglot`."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .helpers import EXAMPLE

EXPECTED = {  # (0-based line, code) of findings in examples/train_cuda.py
    (15, "NPU103"),  # from torch.cuda.amp import GradScaler, autocast
    (22, "NPU108"),  # NCCL_SOCKET_IFNAME
    (68, "NPU102"),  # Net().cuda()
}

NEOVIM = """
local out, file = os.getenv("OUT"), os.getenv("FILE")
local client = vim.lsp.start_client({
  name = "ascend-lsp",
  cmd = {os.getenv("PYTHON"), "-m", "ascend_lsp.lsp.server"},
  root_dir = os.getenv("ROOT"),
})
vim.cmd("edit " .. file)
vim.lsp.buf_attach_client(0, client)
local arrived = vim.wait(30000, function() return #vim.diagnostic.get(0) > 0 end, 50)
local found = {}
for _, d in ipairs(vim.diagnostic.get(0)) do
  local lsp = d.user_data and d.user_data.lsp or {}
  table.insert(found, {line = d.lnum, col = d.col, code = lsp.code or d.code, source = d.source, message = d.message})
end
local handle = io.open(out, "w")
handle:write(vim.fn.json_encode({arrived = arrived, diagnostics = found}))
handle:close()
vim.lsp.stop_client(client)
vim.wait(5000, function() return vim.lsp.get_client_by_id(client) == nil end, 50)
vim.cmd("qa!")
"""

EMACS = r"""
(require 'eglot)
(require 'json)
(let* ((file (getenv "FILE")) (out (getenv "OUT")) (root (getenv "ROOT"))
       (buffer (find-file-noselect file)))
  (with-current-buffer buffer
    (python-mode)
    (eglot '(python-mode) (cons 'transient root) 'eglot-lsp-server
           (list (getenv "PYTHON") "-m" "ascend_lsp.lsp.server") "python")
    (with-timeout (30 (message "timed out"))
      (while (null (flymake-diagnostics))
        (flymake-start)
        (accept-process-output nil 0.1)))
    (let ((found (mapcar (lambda (d)
                           (save-excursion
                             (goto-char (flymake-diagnostic-beg d))
                             (list (cons 'line (1- (line-number-at-pos)))
                                   (cons 'col (current-column))
                                   (cons 'message (flymake-diagnostic-text d)))))
                         (flymake-diagnostics))))
      (with-temp-file out (insert (json-encode (list (cons 'diagnostics (vconcat found)))))))
    (eglot-shutdown (eglot-current-server))))
"""


def run_editor(cmd: list[str], tmp_path: Path, script: Path | None) -> list[dict]:
    source = tmp_path / "train_cuda.py"
    source.write_text(EXAMPLE.read_text(encoding="utf-8"), encoding="utf-8")
    out = tmp_path / "diagnostics.json"
    env = {"PYTHON": sys.executable, "FILE": str(source), "OUT": str(out), "ROOT": str(tmp_path),
           "HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    proc = subprocess.run([*cmd, *([str(script)] if script else [])], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=90)
    assert out.exists(), f"the editor wrote no diagnostics (exit {proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
    return json.loads(out.read_text(encoding="utf-8"))["diagnostics"]


@pytest.mark.skipif(shutil.which("nvim") is None, reason="Neovim is not installed (Debian: apt-get install neovim)")
def test_neovim(tmp_path):
    script = tmp_path / "attach.lua"
    script.write_text(NEOVIM, encoding="utf-8")
    found = run_editor(["nvim", "--headless", "--clean", "-n", "-c", f"luafile {script}"], tmp_path, None)
    assert EXPECTED <= {(d["line"], d["code"]) for d in found}
    assert all(d["source"] == "ascend-lsp" for d in found)
    scaler = next(d for d in found if (d["line"], d["code"]) == (15, "NPU103"))
    assert scaler["col"] == 27 and "torch.npu.amp.GradScaler" in scaler["message"]


@pytest.mark.skipif(shutil.which("emacs") is None or not list(Path("/usr/share/emacs/site-lisp/elpa").glob("eglot-*")),
                    reason="Emacs with eglot is not installed (Debian: apt-get install emacs-nox elpa-eglot)")
def test_emacs_eglot(tmp_path):
    script = tmp_path / "attach.el"
    script.write_text(EMACS, encoding="utf-8")
    found = run_editor(["emacs", "--batch", "-l", "package", "--eval", "(package-initialize)", "-l"], tmp_path, script)
    lines = {d["line"] for d in found}
    assert {line for line, _ in EXPECTED} <= lines
    scaler = next(d for d in found if d["line"] == 15 and "GradScaler" in d["message"])
    assert scaler["col"] == 27 and "NPU103" in scaler["message"]
