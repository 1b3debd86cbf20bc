"""Training configs and compose files in a real server: a YAML or JSON document is analysed only
when its keys make it a framework's config, with findings at exact UTF-16 columns and a fix as a
code action; the yaml, json, jsonc and dockercompose language ids; configs on disk in the
workspace diagnostics."""

from __future__ import annotations

import asyncio

import pytest
from lsprotocol import types

from .helpers import apply, code_actions, diagnostics, edits_by_uri, open_document, resolved

pytestmark = pytest.mark.asyncio(loop_scope="module")

TEXT = ("# 训练 sft\r\n"
        "model_name_or_path: org/模型-8b\n"
        "stage: sft\nfinetuning_type: lora\ntemplate: llama3\n"
        "optim: paged_adamw_8bit  # 优化器\n"
        "tf32: true\n")


async def test_a_config_document_gets_findings_and_fixes(client, workspace):
    uri = open_document(client, workspace / "configs" / "sft.yaml", TEXT, language="yaml")
    found = await diagnostics(client, uri, 1)
    assert [(d.code, d.range.start.line, d.range.start.character, d.range.end.character) for d in found] == [
        ("NPU801", 5, 0, 23), ("NPU801", 6, 0, 10)]
    assert found[1].severity == types.DiagnosticSeverity.Error
    actions = await code_actions(client, uri, [found[1]])
    fix = next(a for a in actions if a.title == "Set `tf32` to `false`")
    edits = edits_by_uri((await resolved(client, fix)).edit)[uri]
    assert apply(client, TEXT, edits) == TEXT.replace("tf32: true", "tf32: false")
    titles = [a.title for a in await code_actions(client, uri, [found[0]])]
    assert "Ignore NPU801 on this line (# noqa)" in titles  # YAML takes a comment


async def test_json_and_compose_by_language_id(client, workspace):
    text = '{\n  "output_dir": "out", "learning_rate": 1e-5,\n  "optim": "adamw_8bit"\n}\n'
    uri = open_document(client, workspace / "args.json", text, language="json")
    found = await diagnostics(client, uri, 1)
    assert [(d.code, d.range.start.line, d.range.start.character, d.range.end.character) for d in found] == [
        ("NPU801", 2, 2, 23)]
    titles = [a.title for a in await code_actions(client, uri, found)]
    assert not any("noqa" in title for title in titles)  # JSON takes no comment
    compose = "services:\n  app:\n    runtime: nvidia\n"
    uri = open_document(client, workspace / "stack" / "gpu.yml", compose, language="dockercompose")
    assert [(d.code, d.range.start.line) for d in await diagnostics(client, uri, 1)] == [("NPU804", 2)]


async def test_a_hydra_config_names_its_device(client, workspace):
    text = "defaults:\n  - _self_\nname: 音频-😀\ndevice: cuda  # 设备\noptim:\n  ema: {use: true}\n  swa:\n    device: 'cuda'\n"
    uri = open_document(client, workspace / "conf" / "config.yaml", text, language="yaml")
    found = await diagnostics(client, uri, 1)
    assert [(d.code, d.range.start.line, d.range.start.character, d.range.end.character) for d in found] == [
        ("NPU801", 3, 0, 12), ("NPU801", 7, 4, 18)]
    assert found[0].severity == types.DiagnosticSeverity.Warning
    fix = next(a for a in await code_actions(client, uri, [found[1]]) if a.title == "Set `device` to `npu`")
    edits = edits_by_uri((await resolved(client, fix)).edit)[uri]
    assert apply(client, text, edits) == text.replace("'cuda'", "'npu'")


async def test_a_yaml_that_is_no_config_stays_quiet(client, workspace):
    uri = open_document(client, workspace / ".github" / "ci.yml", "name: ci\noptim: paged_adamw_8bit\n",
                        language="yaml")
    assert await diagnostics(client, uri, 1) == []
    uri = open_document(client, workspace / "package.json", '{"name": "x", "tf32": true}\n', language="jsonc")
    assert await diagnostics(client, uri, 1) == []


async def test_workspace_diagnostics_list_the_configs_on_disk(client, workspace):
    folder = workspace / "runs"
    folder.mkdir()
    (folder / "ds_config.json").write_text('{"train_batch_size": 8, "bf16": {"enabled": "auto"}}\n',
                                           encoding="utf-8")
    (folder / "accelerate.yaml").write_text("compute_environment: LOCAL_MACHINE\nmixed_precision: fp8\n",
                                            encoding="utf-8")
    (folder / "docker-compose.yml").write_text("services:\n  a:\n    runtime: nvidia\n", encoding="utf-8")
    report = await asyncio.wait_for(client.workspace_diagnostic_async(types.WorkspaceDiagnosticParams([])), 60)
    codes = {item.uri: [d.code for d in item.items] for item in report.items if "/runs/" in item.uri}
    assert codes == {(folder / "accelerate.yaml").as_uri(): ["NPU801"],
                     (folder / "docker-compose.yml").as_uri(): ["NPU804"],
                     (folder / "ds_config.json").as_uri(): []}  # read: bf16 "auto" is fine
