"""`exclude` from the project's pyproject.toml applies to the folders a run walks, whether the
folder is named as `.`, left out (the current folder), or named by its path."""

from __future__ import annotations

from pathlib import Path

import pytest

from .test_cli import run, write

CUDA = "import torch\ntorch.cuda.synchronize()\n"


@pytest.mark.parametrize("args", [(".",), (), ("./",)])
def test_exclude_applies_to_the_current_folder(project: Path, capsys, args) -> None:
    write(project / "pyproject.toml", '[tool.ascend-lsp]\nexclude = ["generated/*"]\n')
    write(project / "generated" / "a.py", CUDA)
    write(project / "src" / "b.py", CUDA)
    _, out, _ = run(capsys, *args, "--output-format", "concise", "-q", "--no-cache")
    assert [line.split(":")[0] for line in out.splitlines()] == ["src/b.py"]


def test_exclude_applies_to_a_named_project_folder(project: Path, capsys) -> None:
    write(project / "app" / "pyproject.toml", '[tool.ascend-lsp]\nexclude = ["generated/*"]\n')
    write(project / "app" / "generated" / "a.py", CUDA)
    write(project / "app" / "src" / "b.py", CUDA)
    _, out, _ = run(capsys, "app", "--output-format", "concise", "-q", "--no-cache")
    assert [line.split(":")[0] for line in out.splitlines()] == ["app/src/b.py"]


def test_a_package_named_dist_or_build_is_checked_but_build_output_is_not(project: Path, capsys) -> None:
    # mmengine/dist/ is mmengine's distributed code; build/lib/ and an unpacked sdist in dist/ are copies
    write(project / "pkg" / "__init__.py", "")
    write(project / "pkg" / "dist" / "__init__.py", "")
    write(project / "pkg" / "dist" / "comm.py", CUDA)
    write(project / "pkg" / "build" / "__init__.py", "")
    write(project / "pkg" / "build" / "builder.py", CUDA)
    write(project / "build" / "lib" / "pkg" / "dist" / "__init__.py", "")
    write(project / "build" / "lib" / "pkg" / "dist" / "comm.py", CUDA)
    write(project / "dist" / "pkg-1.0" / "pkg" / "dist" / "__init__.py", "")
    write(project / "dist" / "pkg-1.0" / "pkg" / "dist" / "comm.py", CUDA)
    write(project / "tools" / "dist" / "release.py", CUDA)
    _, out, _ = run(capsys, ".", "--output-format", "concise", "-q", "--no-cache")
    assert [line.split(":")[0] for line in out.splitlines()] == ["pkg/build/builder.py", "pkg/dist/comm.py"]


def test_a_glob_keeps_a_package_named_dist_and_leaves_build_output(project: Path, capsys) -> None:
    write(project / "pkg" / "dist" / "__init__.py", "")
    write(project / "pkg" / "dist" / "comm.py", CUDA)
    write(project / "build" / "lib" / "comm.py", CUDA)
    _, out, _ = run(capsys, "**/comm.py", "--output-format", "concise", "-q", "--no-cache")
    assert [line.split(":")[0] for line in out.splitlines()] == ["pkg/dist/comm.py"]
