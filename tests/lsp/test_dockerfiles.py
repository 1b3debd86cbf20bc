"""Dockerfiles in a real server: an open document by its name or by the dockerfile language id
alone, findings of FROM (through an ARG), RUN and ENV, a fix as a code action, no noqa action
where Docker would read the comment as an argument, and Dockerfiles on disk in the workspace
diagnostics."""

from __future__ import annotations

import asyncio

import pytest
from lsprotocol import types

from .helpers import apply, code_actions, diagnostics, edits_by_uri, open_document, resolved

pytestmark = pytest.mark.asyncio(loop_scope="module")

TEXT = ("ARG BASE=nvidia/cuda:12.1.0-devel-ubuntu22.04\nFROM ${BASE}\r\n"
        "ENV CUDA_VISIBLE_DEVICES=0,1\nRUN pip install \\\n    flash-attn && nvidia-smi\n")


async def test_a_dockerfile_document_gets_findings_and_fixes(client, workspace):
    uri = open_document(client, workspace / "Dockerfile.cuda", TEXT, language="dockerfile")
    found = await diagnostics(client, uri, 1)
    assert [(d.code, d.range.start.line, d.range.start.character, d.range.end.character) for d in found] == [
        ("NPU504", 1, 5, 12), ("NPU108", 2, 4, 24), ("NPU502", 4, 4, 14), ("NPU124", 4, 18, 28)]
    assert "Base image `nvidia/cuda:12.1.0-devel-ubuntu22.04`" in found[0].message
    actions = await code_actions(client, uri, [found[1]])
    titles = [a.title for a in actions]
    assert "Ignore NPU108 on this line (# noqa)" not in titles  # ENV would take `#` as an argument
    fix = next(a for a in actions if a.title == "Replace `CUDA_VISIBLE_DEVICES` with `ASCEND_RT_VISIBLE_DEVICES`")
    edits = edits_by_uri((await resolved(client, fix)).edit)[uri]
    assert apply(client, TEXT, edits) == TEXT.replace("CUDA_VISIBLE_DEVICES", "ASCEND_RT_VISIBLE_DEVICES")
    titles = [a.title for a in await code_actions(client, uri, [found[3]])]
    assert "Ignore NPU124 on this line (# noqa)" in titles  # a RUN's last line: the shell's comment


async def test_the_language_id_makes_any_file_a_dockerfile(client, workspace):
    uri = open_document(client, workspace / "images" / "gpu", "FROM nvcr.io/nvidia/pytorch:24.01-py3\n",
                        language="dockerfile")
    assert [(d.code, d.range.start.character) for d in await diagnostics(client, uri, 1)] == [("NPU504", 5)]


async def test_workspace_diagnostics_list_the_dockerfiles_on_disk(client, workspace):
    folder = workspace / "containers"
    (folder / "docker").mkdir(parents=True)
    (folder / "train.dockerfile").write_text("FROM ubuntu:22.04\nRUN nvidia-smi\n", encoding="utf-8")
    (folder / "docker" / "cuda").write_text("# CUDA image\nFROM nvidia/cuda:12.1.0-base-ubuntu22.04\n",
                                            encoding="utf-8")
    (folder / "docker" / "notes").write_text("nvidia-smi\n", encoding="utf-8")  # no FROM: not one
    report = await asyncio.wait_for(client.workspace_diagnostic_async(types.WorkspaceDiagnosticParams([])), 60)
    codes = {item.uri: [d.code for d in item.items] for item in report.items if "/containers/" in item.uri}
    assert codes == {(folder / "train.dockerfile").as_uri(): ["NPU124"],
                     (folder / "docker" / "cuda").as_uri(): ["NPU504"]}
