"""engine/dockerfile.py: which files are Dockerfiles, and what a Dockerfile's instructions
give: base images with their ARG defaults, stages, the shell of RUN and the variables of ENV
at their own lines and columns."""

from __future__ import annotations

import pytest

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
    ("app/docker/compose.yml", "services:\n  app:\n    image: ubuntu\n", None),
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
