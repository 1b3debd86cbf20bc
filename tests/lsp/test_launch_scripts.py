"""Shell launch scripts in a real server: an open shellscript document (by its name, or by its
language id alone), positions in the negotiated encoding, the fix as a code action, and the
scripts on disk in the workspace diagnostics."""

from __future__ import annotations

import asyncio

import pytest
from lsprotocol import types

from .helpers import apply, code_actions, diagnostics, edits_by_uri, open_document, resolved, units

pytestmark = pytest.mark.asyncio(loop_scope="module")

SCRIPT = '#!/bin/bash\necho "日本🙂"; export CUDA_VISIBLE_DEVICES=0,1\r\nnvidia-smi -L\n'


async def test_a_shellscript_document_gets_its_findings_in_the_client_encoding(client, workspace):
    uri = open_document(client, workspace / "train.sh", SCRIPT, language="shellscript")
    found = await diagnostics(client, uri, 1)
    start = units(client, 'echo "日本🙂"; export ')
    assert [(d.code, d.range.start.line, d.range.start.character, d.range.end.character) for d in found] == [
        ("NPU108", 1, start, start + len("CUDA_VISIBLE_DEVICES")), ("NPU124", 2, 0, len("nvidia-smi"))]
    actions = await code_actions(client, uri, [found[0]])
    fix = next(a for a in actions if a.title == "Replace `CUDA_VISIBLE_DEVICES` with `ASCEND_RT_VISIBLE_DEVICES`")
    edits = edits_by_uri((await resolved(client, fix)).edit)[uri]
    assert apply(client, SCRIPT, edits) == SCRIPT.replace("CUDA_VISIBLE_DEVICES", "ASCEND_RT_VISIBLE_DEVICES")


async def test_no_noqa_action_on_a_line_a_comment_would_change(client, workspace):
    text = "export CUDA_VISIBLE_DEVICES=0 \\\n  CUDA_LAUNCH_BLOCKING=1\n"
    uri = open_document(client, workspace / "continued.sh", text, language="shellscript")
    first, second = await diagnostics(client, uri, 1)
    titles = [[a.title for a in await code_actions(client, uri, [d])] for d in (first, second)]
    assert "Ignore NPU108 on this line (# noqa)" not in titles[0]
    assert "Ignore NPU108 on this line (# noqa)" in titles[1]


async def test_the_language_id_makes_a_file_without_a_suffix_or_shebang_a_script(client, workspace):
    text = "export NCCL_DEBUG=INFO\n"
    uri = open_document(client, workspace / "profile", text, language="shellscript")
    assert [(d.code, d.range.start.character) for d in await diagnostics(client, uri, 1)] == [("NPU108", 7)]


async def test_workspace_diagnostics_list_the_scripts_on_disk(client, workspace):
    folder = workspace / "jobs"
    folder.mkdir()
    (folder / "train.sh").write_text("CUDA_VISIBLE_DEVICES=0 python train.py\n", encoding="utf-8")
    (folder / "launch").write_text("#!/usr/bin/env bash\nnvidia-smi\n", encoding="utf-8")
    (folder / "job.sbatch").write_text("#!/bin/bash\n#SBATCH -N 1\nexport DS_ACCELERATOR=cuda\n", encoding="utf-8")
    (folder / "notes").write_text("nvidia-smi\n", encoding="utf-8")  # no #!: not a script
    report = await asyncio.wait_for(client.workspace_diagnostic_async(types.WorkspaceDiagnosticParams([])), 60)
    codes = {item.uri: [d.code for d in item.items] for item in report.items if "/jobs/" in item.uri}
    assert codes == {(folder / "train.sh").as_uri(): ["NPU108"], (folder / "launch").as_uri(): ["NPU124"],
                     (folder / "job.sbatch").as_uri(): ["NPU127"]}


async def test_the_cuda_arm_of_an_npu_aware_script_is_information_with_no_fix_to_apply(client, workspace):
    text = 'if command -v npu-smi; then\n  npu-smi info\nelse\n  nvidia-smi -L\nfi\nnvidia-smi -L\n'
    uri = open_document(client, workspace / "probe.sh", text, language="shellscript")
    found = await diagnostics(client, uri, 1)
    assert [(d.code, d.range.start.line, d.severity) for d in found] == [
        ("NPU124", 3, types.DiagnosticSeverity.Information), ("NPU124", 5, types.DiagnosticSeverity.Warning)]
    assert found[0].message.endswith("(On a branch that does not run on the NPU: the code beside it handles the NPU.)")
    titles = [[a.title for a in await code_actions(client, uri, [d]) if a.title.startswith("Replace")]
              for d in found]
    assert titles == [[], ["Replace with `npu-smi info -l`"]]  # the arm's: advice, no edit offered


async def test_a_cuda_device_on_a_scripts_command_line_gets_its_finding_and_fix(client, workspace):
    text = '#!/bin/bash\necho "🙂"; python train.py --device cuda:0 \\\n  --epochs 3\nlm_eval --device=cpu\n'
    uri = open_document(client, workspace / "run.sh", text, language="shellscript")
    found = await diagnostics(client, uri, 1)
    start = units(client, 'echo "🙂"; python train.py --device ')
    assert [(d.code, d.range.start.line, d.range.start.character, d.range.end.character, d.severity)
            for d in found] == [("NPU101", 1, start, start + len("cuda:0"), types.DiagnosticSeverity.Warning)]
    assert "`train.py` reads it as its `device` option" in found[0].message
    actions = await code_actions(client, uri, found)
    fix = next(a for a in actions if a.title == "Replace `cuda:0` with `npu:0`")
    edits = edits_by_uri((await resolved(client, fix)).edit)[uri]
    assert apply(client, text, edits) == text.replace("cuda:0", "npu:0")
