"""A repository is untrusted: `lsp-check DIR` runs nothing its `.git/config` names (git is
not run in the tree at all), and still respects its ignore files as git does."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from ascend_lsp.discovery import discover
from ascend_lsp.engine.config import Settings
from ascend_lsp.gitignore import user_excludes

from .conftest import git, lsp_check
from .hostile_git import hostile_repository, logging_git


def test_repository_configuration_runs_nothing(tmp_path: Path) -> None:
    root, markers, log = tmp_path / "repo", tmp_path / "markers", tmp_path / "git.log"
    hostile_repository(root, markers)
    env = logging_git(tmp_path / "bin", log)
    out = lsp_check(root, ".", "--output-format", "concise", "-q", "--no-cache", env=env)
    assert sorted(os.listdir(markers)) == []
    assert out.stdout.splitlines() == ["kept.py:2:19: NPU102 [*] `.cuda()` is CUDA-only. Use `.npu()`."]
    assert out.returncode == 1
    runs = log.read_text().splitlines() if log.exists() else []
    assert [line for line in runs if str(root) in line] == []  # git never ran in (or on) the tree


@pytest.fixture
def home(tmp_path: Path, monkeypatch) -> Path:
    """A user of their own: no global git configuration but the ignore file at git's default place."""
    home = tmp_path / "home"
    (home / ".config" / "git").mkdir(parents=True)
    (home / ".config" / "git" / "ignore").write_text("global_ignored.py\n")
    for key in ("HOME", "XDG_CONFIG_HOME"):
        monkeypatch.setenv(key, str(home) if key == "HOME" else str(home / ".config"))
    monkeypatch.delenv("GIT_CONFIG_GLOBAL", raising=False)
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    user_excludes.cache_clear()
    yield home
    user_excludes.cache_clear()


ROOT_IGNORE = r"""# a comment
*.log.py
/anchored.py
build_out/
docs/**/gen_*.py
**/deep/x.py
a/**
!a/keep.py
[abc]_class.py
[!x]_neg.py
[[:digit:]]num.py
q?.py
trailing.py   
\#hash.py
\!bang.py
sub/*.py
!sub/keep.py
**/cache
z/*/star.py
back\slash.py
[z-a]range.py
[a-c]range2.py
ab**cd.py
[]]bracket.py
[!]]nobracket.py
***/star3.py
z/**
!z/q/
!z/q/**
"""
SUB_IGNORE = "!*.log.py\ninner/\n!inner/keep.py\n"
FOLDERS = ("", "sub", "sub/inner", "sub/other", "docs", "docs/x", "docs/x/y", "a", "a/b", "deep", "z/deep",
           "build_out", "z/build_out", "cache", "z/cache", "z/q", "z/q/r", "linked", "nested")
NAMES = ("plain.py", "anchored.py", "x.log.py", "a_class.py", "d_class.py", "y_neg.py", "x_neg.py", "1num.py",
         "anum.py", "q1.py", "q12.py", "trailing.py", "#hash.py", "!bang.py", "keep.py", "gen_1.py", "x.py",
         "info_excluded.py", "global_ignored.py", "star.py", "backslash.py", "range.py", "linked_rule.py", "brange2.py", "drange2.py",
         "abXYcd.py", "]bracket.py", "xnobracket.py", "star3.py")


def test_ignore_rules_are_gits(tmp_path: Path, home: Path) -> None:
    """Every kind of pattern, nested ignore files, info/exclude and the user's ignore file:
    the files found are the untracked files `git ls-files --others --exclude-standard` lists."""
    root = tmp_path / "repo"
    for folder in FOLDERS:
        for name in NAMES:
            (root / folder).mkdir(parents=True, exist_ok=True)
            (root / folder / name).write_text("x = 1\n")
    (root / ".gitignore").write_text(ROOT_IGNORE)
    (root / "sub" / ".gitignore").write_text(SUB_IGNORE)
    (tmp_path / "elsewhere").write_text("linked_rule.py\n")
    (root / "linked" / ".gitignore").symlink_to(tmp_path / "elsewhere")  # git does not follow it
    git(root / "nested", "init", "-q")  # another repository: git lists none of its files
    git(root, "init", "-q")
    (root / ".git" / "info").mkdir(exist_ok=True)
    (root / ".git" / "info" / "exclude").write_text("info_excluded.py\n")
    listed = subprocess.run(["git", "ls-files", "-z", "--others", "--exclude-standard"], cwd=root, check=True,
                            capture_output=True, text=True).stdout.split("\0")
    expected = sorted(p for p in listed if p.endswith(".py"))
    assert "a/keep.py" in expected and "sub/x.log.py" in expected and "plain.py" in expected
    assert "global_ignored.py" not in expected and "info_excluded.py" not in expected
    found = discover([str(root)], lambda _path: Settings())
    assert sorted(os.path.relpath(p, root) for p in found) == expected
    for folder in ("sub", "z", "docs/x"):  # walking a folder below the top reads the ignore files above it
        below = sorted(os.path.relpath(p, root) for p in discover([str(root / folder)], lambda _path: Settings()))
        assert below == [p for p in expected if p.startswith(folder + "/")]


def test_an_ignored_folder_named_on_the_command_line_is_checked(tmp_path: Path, home: Path) -> None:
    root = tmp_path / "repo"
    (root / "generated" / "deeper").mkdir(parents=True)
    (root / "generated" / "deeper" / "g.py").write_text("x = 1\n")
    (root / ".gitignore").write_text("generated/\n")
    git(root, "init", "-q")
    assert discover([str(root)], lambda _path: Settings()) == []
    assert discover([str(root / "generated" / "deeper")], lambda _path: Settings()) == [str(root / "generated" / "deeper" / "g.py")]


def test_a_linked_work_tree_reads_the_common_info_exclude(tmp_path: Path, home: Path) -> None:
    root, linked = tmp_path / "repo", tmp_path / "linked"
    root.mkdir()
    (root / "README").write_text("r\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "initial")
    git(root, "worktree", "add", "-q", str(linked))
    (root / ".git" / "info").mkdir(exist_ok=True)
    (root / ".git" / "info" / "exclude").write_text("scratch.py\n")
    (linked / "scratch.py").write_text("x = 1\n")
    (linked / "kept.py").write_text("x = 1\n")
    assert discover([str(linked)], lambda _path: Settings()) == [str(linked / "kept.py")]


def test_an_ignore_file_that_cannot_be_read_is_an_error(tmp_path: Path, home: Path) -> None:
    root = tmp_path / "repo"
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "s.py").write_text("import torch\nx = torch.ones(2).cuda()\n")
    os.mkfifo(root / "sub" / ".gitignore")  # git would block reading it
    git(root, "init", "-q")
    out = lsp_check(root, ".", "--output-format", "concise", "-q", "--no-cache")
    assert out.stderr.splitlines() == [
        "error: sub/.gitignore: ignore file not read (not a regular file (a FIFO); only files are read); files it "
        "ignores may be checked"]
    assert out.stdout.splitlines() == [
        "sub/s.py:2:19: NPU102 [*] `.cuda()` is CUDA-only. Use `.npu()`.",
        "sub/.gitignore:1:1: E902 ignore file not read (not a regular file (a FIFO); only files are read); files "
        "it ignores may be checked"]
    assert out.returncode == 2
