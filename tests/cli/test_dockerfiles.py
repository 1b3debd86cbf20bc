"""lsp-check over Dockerfiles of any name: which files of a folder are Dockerfiles (by name, or
in a `docker` folder by their first instruction), findings of FROM, RUN and ENV with exact
1-based columns, and `--add-noqa` only where a comment leaves the Dockerfile as it was."""

from __future__ import annotations

from pathlib import Path

from .test_cli import run, write

CUDA = ("# syntax=docker/dockerfile:1\nARG BASE=nvidia/cuda:12.1.0-devel-ubuntu22.04\nFROM ${BASE} AS build\n"
        "RUN pip install \\\n    flash-attn && nvidia-smi\nFROM build\n")
TRAIN = "FROM quay.io/ascend/cann:9.1.0-910b-ubuntu22.04-py3.12\nENV CUDA_VISIBLE_DEVICES=0,1\n"


def dockerfiles(folder: Path) -> None:
    write(folder / "Dockerfile.cuda", CUDA)
    write(folder / "train.dockerfile", TRAIN)
    write(folder / "docker" / "base", "# base image\n\nFROM nvcr.io/nvidia/pytorch:24.01-py3\n")
    write(folder / "docker" / "notes", "Build with docker build -f docker/base .\n")  # no FROM: not one
    write(folder / "docker" / "compose.yml", "services:\n  app:\n    image: nvidia/cuda:12.1.0-base-ubuntu22.04\n")


def test_a_folder_checks_its_dockerfiles_with_exact_columns(project: Path, capsys) -> None:
    dockerfiles(project / "app")
    code, out, _ = run(capsys, "app", "--output-format", "concise", "--no-cache")
    assert code == 1
    lines = [line.split(" ", 2)[:2] for line in out.splitlines()[:-1]]
    assert lines == [
        ["app/Dockerfile.cuda:3:6:", "NPU504"],
        ["app/Dockerfile.cuda:5:5:", "NPU502"],
        ["app/Dockerfile.cuda:5:19:", "NPU124"],
        ["app/docker/base:3:6:", "NPU504"],
        ["app/docker/compose.yml:3:12:", "NPU504"],  # no Dockerfile, but a compose file: its service's image
        ["app/train.dockerfile:2:5:", "NPU108"],
    ]
    assert "Base image `nvidia/cuda:12.1.0-devel-ubuntu22.04` is a CUDA image" in out.splitlines()[0]
    assert "`${BASE}` is `nvidia/cuda:12.1.0-devel-ubuntu22.04` by the ARG defaults." in out.splitlines()[0]


def test_fix_renames_a_variable_of_env(project: Path, capsys) -> None:
    dockerfiles(project / "app")
    run(capsys, "app", "--fix", "--no-cache")
    assert (project / "app" / "train.dockerfile").read_text() == TRAIN.replace("CUDA_VISIBLE", "ASCEND_RT_VISIBLE")


def test_add_noqa_writes_only_at_the_end_of_a_run_line(project: Path, capsys) -> None:
    path = write(project / "Dockerfile", CUDA)
    code, _, err = run(capsys, "Dockerfile", "--add-noqa", "--no-cache")
    assert path.read_text() == CUDA.replace("nvidia-smi\n", "nvidia-smi  # noqa: NPU124, NPU502\n")
    assert code == 1 and "Dockerfile:3: NPU504 not suppressed" in err and "Docker would read the comment" in err
