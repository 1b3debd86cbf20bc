"""The pre-commit hook, run by a real `pre-commit` from a hook repository holding this
working tree (so the manifest and the package installed are the ones under test)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import ROOT, git, lsp_check

pytest.importorskip("pre_commit", reason="pre-commit is not installed (it is in the test extra)")
PRE_COMMIT = Path(sys.executable).with_name("pre-commit")
SHIPPED = ("pyproject.toml", "README.md", ".pre-commit-hooks.yaml", "mappings", "server", "docs/rules")
CUDA = "import torch\n\nx = torch.ones(2).cuda()\n"


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory) -> tuple[Path, str, Path]:
    """(hook repository, its commit, a PRE_COMMIT_HOME shared by the tests: the hook's
    environment is built once)."""
    root = tmp_path_factory.mktemp("hook")
    for name in SHIPPED:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, root / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "build", "upstream"))
        else:
            shutil.copy(source, root / name)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "hook")
    return root, git(root, "rev-parse", "HEAD").strip(), tmp_path_factory.mktemp("pre-commit-home")


def configure(repo: Path, hook_repo, **hook) -> None:
    root, rev, _ = hook_repo
    lines = ["repos:", f"  - repo: {root}", f"    rev: {rev}", "    hooks:", "      - id: lsp-check"]
    lines += [f"        {key}: {value}" for key, value in hook.items()]
    (repo / ".pre-commit-config.yaml").write_text("\n".join(lines) + "\n")
    git(repo, "add", ".pre-commit-config.yaml")


def pre_commit(repo: Path, hook_repo) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PRE_COMMIT", "VIRTUAL_ENV")}
    env["PRE_COMMIT_HOME"] = str(hook_repo[2])
    return subprocess.run([str(PRE_COMMIT), "run"], cwd=repo, capture_output=True, text=True, timeout=900, env=env)


def test_checks_only_staged_python_files_and_skips_when_there_are_none(repo: Path, hook_repo) -> None:
    configure(repo, hook_repo)
    (repo / "NOTES.md").write_text("no Python staged\n")
    git(repo, "add", "NOTES.md")
    skipped = pre_commit(repo, hook_repo)
    assert skipped.returncode == 0, skipped.stdout + skipped.stderr
    assert "(no files to check)Skipped" in skipped.stdout  # src/ is full of CUDA code, none of it staged

    (repo / "src" / "new.py").write_text(CUDA)
    git(repo, "add", "src/new.py")
    failed = pre_commit(repo, hook_repo)
    assert failed.returncode == 1
    assert "src/new.py:3:19: NPU102" in failed.stdout and "train_cuda.py" not in failed.stdout
    assert "Found 1 finding in 1 file." in failed.stdout


def test_with_a_baseline_only_new_findings_block_the_commit(repo: Path, hook_repo) -> None:
    assert lsp_check(repo, "src", "--write-baseline", ".lsp-check-baseline.json").returncode == 0
    git(repo, "add", ".lsp-check-baseline.json")
    configure(repo, hook_repo, args="[--baseline, .lsp-check-baseline.json]")
    train = repo / "src" / "train_cuda.py"
    train.write_text("# a comment above every line\n" + train.read_text())
    git(repo, "add", "src/train_cuda.py")
    passed = pre_commit(repo, hook_repo)
    assert passed.returncode == 0, passed.stdout + passed.stderr
    train.write_text(train.read_text() + "\nextra = torch.zeros(1).cuda()\n")
    git(repo, "add", "src/train_cuda.py")
    blocked = pre_commit(repo, hook_repo)
    assert blocked.returncode == 1 and blocked.stdout.count(": NPU") == 1


def test_an_always_run_hook_with_no_file_checks_nothing(repo: Path, hook_repo) -> None:
    """`always_run` makes pre-commit call the hook with no file at all: lsp-check must not
    fall back to checking the whole (CUDA-laden) repository."""
    configure(repo, hook_repo, always_run="true", verbose="true")
    (repo / "NOTES.md").write_text("no Python staged\n")
    git(repo, "add", "NOTES.md")
    proc = pre_commit(repo, hook_repo)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "All checks passed." in proc.stdout
    assert lsp_check(repo).returncode == 1  # outside pre-commit, no path still means "."


def test_excluded_files_stay_excluded_when_staged(repo: Path, hook_repo) -> None:
    configure(repo, hook_repo)
    (repo / "pyproject.toml").write_text((repo / "pyproject.toml").read_text() + 'exclude = ["vendored/*"]\n')
    (repo / "vendored").mkdir()
    (repo / "vendored" / "kernel.py").write_text(CUDA)
    git(repo, "add", "-A")
    proc = pre_commit(repo, hook_repo)
    assert proc.returncode == 0, proc.stdout + proc.stderr
