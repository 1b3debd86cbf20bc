"""Shared by the CLI tests: an empty project folder; for the adoption tests, the console
script in a subprocess and a multi-file git repository built from the bundled examples."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = Path(sys.executable).with_name("lsp-check")
CLEAN_MODULE = "import torch\n\n\ndef mean(x: torch.Tensor) -> torch.Tensor:\n    return torch.mean(x)\n"


def lsp_check(cwd: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """The installed console script, as CI runs it."""
    return subprocess.run([str(SCRIPT), *args], cwd=cwd, capture_output=True, text=True, timeout=300,
                          env={**os.environ, **(env or {})})


def git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com"}
    env.pop("PRE_COMMIT", None)
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True, env=env).stdout


@pytest.fixture
def project(tmp_path: Path, monkeypatch) -> Path:
    """An empty folder, the current one, with its own table cache."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ASCEND_LSP_CACHE_DIR", str(tmp_path / ".table-cache"))
    return tmp_path


@pytest.fixture
def repo(tmp_path: Path, monkeypatch) -> Path:
    """A committed git repository: src/ holds the CUDA examples, a clean module and a
    package; the project has a [tool.ascend-lsp] table."""
    root = tmp_path / "repo"
    src = root / "src"
    (src / "pkg").mkdir(parents=True)
    for name in ("train_cuda.py", "attention_flash.py", "precision.py"):
        shutil.copy(ROOT / "examples" / name, src / name)
    shutil.copy(ROOT / "examples" / "custom_op" / "setup.py", src / "pkg" / "setup.py")
    (src / "clean.py").write_text(CLEAN_MODULE)
    (src / "pkg" / "__init__.py").write_text("")
    (root / "pyproject.toml").write_text('[project]\nname = "demo"\nversion = "0"\n\n[tool.ascend-lsp]\n')
    (root / "README.md").write_text("demo\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "initial")
    monkeypatch.setenv("ASCEND_LSP_CACHE_DIR", str(tmp_path / "table-cache"))
    monkeypatch.delenv("PRE_COMMIT", raising=False)
    return root
