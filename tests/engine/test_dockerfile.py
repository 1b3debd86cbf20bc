"""engine/dockerfile.py: which files are Dockerfiles, and what a Dockerfile's instructions
give: base images with their ARG defaults, stages, the shell of RUN and the variables of ENV
at their own lines and columns."""

from __future__ import annotations

import pytest

from ascend_lsp.analysis import analyze
from ascend_lsp.engine.config import Settings
from ascend_lsp.engine.dockerfile import Dockerfile
from ascend_lsp.engine.model import Range
from ascend_lsp.engine.packaging import document_kind
from ascend_lsp.engine.text import SourceText


@pytest.mark.parametrize("path, text, kind", [
    ("Dockerfile", "", "dockerfile"),
    ("Dockerfile.cuda", "", "dockerfile"),
    ("x.dockerfile", "", "dockerfile"),
    ("Containerfile", "", "dockerfile"),
    ("app/docker/base", "# Copyright\n# more\n\nFROM ubuntu:22.04\n", "dockerfile"),
    ("app/docker/cuda", "ARG BASE=nvidia/cuda:12.1.0-base-ubuntu22.04\nFROM ${BASE}\n", "dockerfile"),
    ("app/docker/entry", "#!/bin/bash\nexec python train.py\n", "shell"),
    ("app/docker/README", "Build the images with docker build.\n", None),
    ("app/docker/compose.yml", "services:\n  app:\n    image: ubuntu\n", "compose"),  # not a Dockerfile
    ("app/images/base", "FROM ubuntu:22.04\n", None),  # outside a docker folder, a name decides
])
def test_which_files_are_dockerfiles(path: str, text: str, kind: str | None) -> None:
    assert document_kind(path, text) == kind


def images(text: str) -> list[tuple[str, str, Range]]:
    return [(i.written, i.resolved, i.range) for i in Dockerfile(SourceText(text)).images]


def test_from_takes_the_defaults_of_the_args_before_the_first_from() -> None:
    text = ("ARG BASE=nvidia/cuda:12.1.0-devel-ubuntu22.04\nARG TAG=\"24.01\"\nFROM ${BASE} AS build\n"
            "FROM nvcr.io/nvidia/pytorch:${TAG}-py${PY:-3}\nFROM $UNSET\n"
            "ARG LATE=nvidia/cuda:12.1.0-base-ubuntu22.04\nFROM ${LATE}\n")
    assert images(text) == [
        ("${BASE}", "nvidia/cuda:12.1.0-devel-ubuntu22.04", Range(2, 5, 2, 12)),
        ("nvcr.io/nvidia/pytorch:${TAG}-py${PY:-3}", "nvcr.io/nvidia/pytorch:24.01-py3", Range(3, 5, 3, 45)),
        ("$UNSET", "$UNSET", Range(4, 5, 4, 11)),
        ("${LATE}", "${LATE}", Range(6, 5, 6, 12)),  # an ARG after a FROM belongs to its stage
    ]


def test_a_from_of_an_earlier_stage_is_no_base_image() -> None:
    text = "FROM ubuntu:22.04 AS Base\nFROM base\nFROM --platform=$BUILDPLATFORM base AS final\nFROM final\n"
    assert images(text) == [("ubuntu:22.04", "ubuntu:22.04", Range(0, 5, 0, 17))]


def test_continuations_drop_comment_and_empty_lines_and_keep_columns() -> None:
    text = ("FROM ubuntu:22.04\nRUN --mount=type=cache,target=/root/.cache pip install \\  \n"
            "    # kernels\n\n    flash-attn && nvidia-smi\nENV A=1 \\\n    B=\"x y\"\nENV C two words\n"
            "RUN [\"nvidia-smi\"]\n")
    dockerfile = Dockerfile(SourceText(text))
    assert [([w.text for w in c.words], c.range) for c in dockerfile.script.commands] == [
        (["pip", "install", "flash-attn"], Range(1, 43, 4, 14)), (["nvidia-smi"], Range(4, 18, 4, 28))]
    assert [(a.name, a.value, a.name_range) for a in dockerfile.script.assignments] == [
        ("A", "1", Range(5, 4, 5, 5)), ("B", "x y", Range(6, 4, 6, 5)), ("C", "two words", Range(7, 4, 7, 5))]
    assert dockerfile.no_comment == frozenset(range(10)) - {4}  # only a RUN's last line takes a comment


def test_a_heredoc_body_is_no_instruction() -> None:
    text = "FROM ubuntu:22.04\nRUN python3 <<EOF\nFROM nvidia/cuda:12.1.0-base-ubuntu22.04\nEOF\nRUN nvidia-smi\n"
    dockerfile = Dockerfile(SourceText(text))
    assert [i.keyword for i in dockerfile.instructions] == ["FROM", "RUN", "RUN"]
    assert [c.program for c in dockerfile.script.commands] == ["python3", "nvidia-smi"]


def test_a_backtick_escape_joins_lines_but_its_run_is_not_shell() -> None:
    text = "# escape=`\nFROM mcr.microsoft.com/windows/servercore:ltsc2022 `\n    AS base\nRUN nvidia-smi.exe\n"
    dockerfile = Dockerfile(SourceText(text))
    assert [i.keyword for i in dockerfile.instructions] == ["FROM", "RUN"]
    assert dockerfile.script.commands == []


def test_a_run_heredoc_is_read_as_its_shell_script() -> None:
    text = ("FROM ubuntu:22.04\n"
            "RUN <<EOF\n"
            "pip install flash-attn\n"
            "nvidia-smi\n"
            "EOF\n"
            "RUN bash -ex <<'SCRIPT'\n"
            "export NCCL_DEBUG=INFO\n"
            "SCRIPT\n"
            "RUN <<EOF\n"
            "#!/usr/bin/env python3\n"
            "print('nvidia-smi')\n"
            "EOF\n"
            "RUN python3 <<EOF\n"
            "import os\n"
            "EOF\n")
    dockerfile = Dockerfile(SourceText(text))
    assert [([w.text for w in c.words], c.range) for c in dockerfile.script.commands] == [
        (["pip", "install", "flash-attn"], Range(2, 0, 2, 22)), (["nvidia-smi"], Range(3, 0, 3, 10)),
        (["python3"], Range(12, 4, 12, 11))]
    assert [(a.name, a.range) for a in dockerfile.script.assignments] == [("NCCL_DEBUG", Range(6, 7, 6, 22))]
    assert {2, 3, 6} <= set(range(15)) - dockerfile.no_comment  # a shell body's lines take a comment
    assert {4, 7, 10, 13} <= dockerfile.no_comment


def test_a_run_heredoc_gets_the_launch_findings() -> None:
    text = "FROM ubuntu:22.04\nRUN <<EOF\nset -e\nnvidia-smi -L\nEOF\n"
    found = analyze(text, Settings(select=("NPU124",)), "Dockerfile").findings
    assert [(f.code, f.range) for f in found] == [("NPU124", Range(3, 0, 3, 10))]
    assert found[0].fix is not None and found[0].fix.edits[0].new_text == "npu-smi info -l"
