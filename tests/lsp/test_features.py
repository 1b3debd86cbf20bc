"""End to end against the real server process, once per recorded client (VS Code: push
diagnostics, utf-16; Neovim: pull diagnostics, utf-8)."""

from __future__ import annotations

import asyncio

import pytest
from lsprotocol import types

from ascend_lsp.engine.config import Settings
from ascend_lsp.analysis import fix_text

from .helpers import (EXAMPLE, TIMEOUT, apply, code_actions, diagnostics, edits_by_uri, open_document, pulls,
                      replace_all, resolved, units)

pytestmark = pytest.mark.asyncio(loop_scope="module")

CUDA = "import torch\n\nmodel = torch.nn.Linear(2, 2).cuda()\ntorch.cuda.synchronize()\n"


def by_code(items: list[types.Diagnostic], code: str) -> list[types.Diagnostic]:
    return [d for d in items if d.code == code]


async def test_diagnostics_appear(client, workspace):
    uri = open_document(client, workspace / "train_cuda.py", EXAMPLE.read_text(encoding="utf-8"))
    items = await diagnostics(client, uri, 1)
    codes = {d.code for d in items}
    assert {"NPU102", "NPU103", "NPU105", "NPU108"} <= codes
    amp = by_code(items, "NPU103")[0]
    assert amp.range.start == types.Position(15, 27)  # `GradScaler` in `from torch.cuda.amp import GradScaler`
    assert amp.source == "ascend-lsp"
    assert amp.code_description.href.endswith("/docs/rules/NPU103.md")
    assert amp.severity == types.DiagnosticSeverity.Warning
    assert "torch.npu.amp.GradScaler" in amp.message
    assert list(amp.tags) == [types.DiagnosticTag.Deprecated]  # torch 2.13 marks torch.cuda.amp.GradScaler @deprecated
    assert not by_code(items, "NPU102")[0].tags


async def test_quick_fix_edit(client, workspace):
    uri = open_document(client, workspace / "quick.py", CUDA)
    found = by_code(await diagnostics(client, uri, 1), "NPU102")
    assert len(found) == 1
    actions = await code_actions(client, uri, found)
    fix = next(a for a in actions if a.title == "Fix for NPU: Replace `.cuda()` with `.npu()`")
    assert fix.kind == types.CodeActionKind.QuickFix and fix.is_preferred
    assert list(fix.diagnostics) == found
    text = apply(client, CUDA, edits_by_uri(fix.edit)[uri])
    assert text == "import torch\nimport torch_npu\n\nmodel = torch.nn.Linear(2, 2).npu()\ntorch.cuda.synchronize()\n"


async def test_fix_all(client, workspace):
    source = EXAMPLE.read_text(encoding="utf-8")
    uri = open_document(client, workspace / "fix_all.py", source)
    await diagnostics(client, uri, 1)
    actions = await code_actions(client, uri, [], only=[types.CodeActionKind.SourceFixAll])
    assert [a.kind for a in actions] == ["source.fixAll.ascend-lsp"]
    action = await resolved(client, actions[0])
    fixed = apply(client, source, edits_by_uri(action.edit)[uri])
    assert fixed == fix_text(source, Settings()).text != source


async def test_noqa(client, workspace):
    uri = open_document(client, workspace / "noqa.py", CUDA)
    found = by_code(await diagnostics(client, uri, 1), "NPU103")
    noqa = next(a for a in await code_actions(client, uri, found) if "noqa" in a.title)
    assert noqa.title == "Ignore NPU103 on this line (# noqa)" and not noqa.is_preferred
    text = apply(client, CUDA, edits_by_uri(noqa.edit)[uri])
    assert text.splitlines()[3] == "torch.cuda.synchronize()  # noqa: NPU103"
    replace_all(client, uri, text, 2)
    assert not by_code(await diagnostics(client, uri, 2), "NPU103")


async def test_hover(client, workspace):
    text = "import torch as t\n\nt.cuda.synchronize()\n"
    uri = open_document(client, workspace / "hover.py", text)
    await diagnostics(client, uri, 1)
    hover = await asyncio.wait_for(client.text_document_hover_async(types.HoverParams(
        types.TextDocumentIdentifier(uri), types.Position(2, 10))), TIMEOUT)
    assert hover.contents.kind == types.MarkupKind.Markdown
    assert "`torch.cuda.synchronize`" in hover.contents.value
    assert "replacement: `torch.npu.synchronize`" in hover.contents.value
    assert "[NPU103](https:" in hover.contents.value
    assert hover.range == types.Range(types.Position(2, 7), types.Position(2, 18))


async def test_hover_support_list(client, workspace):
    text = "import torch.distributed.rpc as rpc\n\nrpc.init_rpc('worker')\n"
    uri = open_document(client, workspace / "hover_support.py", text)
    await diagnostics(client, uri, 1)
    hover = await asyncio.wait_for(client.text_document_hover_async(types.HoverParams(
        types.TextDocumentIdentifier(uri), types.Position(2, 6))), TIMEOUT)
    assert "`torch.distributed.rpc.init_rpc`" in hover.contents.value
    assert "Ascend support list (torch_npu 2.13.0)" in hover.contents.value


async def test_hover_chip_table(client, workspace):
    text = "import torch\n\nx = torch.zeros(2, dtype=torch.bfloat16)\n"
    uri = open_document(client, workspace / "hover_chip.py", text)
    await diagnostics(client, uri, 1)
    hover = await asyncio.wait_for(client.text_document_hover_async(types.HoverParams(
        types.TextDocumentIdentifier(uri), types.Position(2, 34))), TIMEOUT)
    assert "| chip | bfloat16 |" in hover.contents.value
    assert "| **A2** (configured): Atlas A2 (Ascend 910B) | ✔ |" in hover.contents.value
    assert "| 910A: Atlas training series (Ascend 910A / 910ProB) | ✘ |" in hover.contents.value


async def test_packaging_file_diagnostics(client, workspace):
    uri = open_document(client, workspace / "requirements.txt", "flash-attn==2.5.8\ntorch==2.1.0+cu121\n")
    found = await diagnostics(client, uri, 1)
    assert [(d.code, d.range.start.line, d.range.start.character, d.range.end.character) for d in found] == [
        ("NPU502", 0, 0, 10), ("NPU501", 1, 12, 18)]


@pytest.mark.parametrize(("line", "expected"), [
    ("torch.npu.", {"synchronize", "amp", "Stream"}),
    ("torch_npu.", {"npu", "npu_fusion_attention"}),
    ("torch_npu.npu.syn", {"synchronize"}),
    ("tnpu.npu.", {"synchronize"}),
])
async def test_completion(client, workspace, line, expected):
    text = f"import torch\nimport torch_npu as tnpu\n\n{line}\n"
    uri = open_document(client, workspace / f"complete_{len(line)}.py", text)
    await diagnostics(client, uri, 1)
    found = await asyncio.wait_for(client.text_document_completion_async(types.CompletionParams(
        types.TextDocumentIdentifier(uri), types.Position(3, len(line)))), TIMEOUT)
    labels = {item.label for item in found.items}
    assert expected <= labels
    assert not any(label.startswith("_") for label in labels)


async def test_syntax_error_mid_typing(client, workspace):
    uri = open_document(client, workspace / "typing.py", CUDA)
    await diagnostics(client, uri, 1)
    # The user types an unfinished `def` between the two CUDA lines.
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        types.VersionedTextDocumentIdentifier(version=2, uri=uri),
        [types.TextDocumentContentChangePartial(types.Range(types.Position(3, 0), types.Position(3, 0)), "def f(:\n")]))
    items = await diagnostics(client, uri, 2)
    assert by_code(items, "E999")[0].range.start.line == 3
    assert by_code(items, "NPU102") and by_code(items, "NPU103")[0].range.start.line == 4


async def test_incremental_edits_keep_positions(client, workspace):
    uri = open_document(client, workspace / "incremental.py", CUDA)
    await diagnostics(client, uri, 1)
    for version in range(2, 5):  # three blank lines typed above the CUDA calls
        client.text_document_did_change(types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(version=version, uri=uri),
            [types.TextDocumentContentChangePartial(types.Range(types.Position(2, 0), types.Position(2, 0)), "\n")]))
    items = await diagnostics(client, uri, 4)
    assert by_code(items, "NPU102")[0].range.start.line == 5
    assert by_code(items, "NPU103")[0].range.start.line == 6


async def test_utf16_positions(client, workspace):
    prefix = 's = "注释🙂 emoji"; m = torch.nn.Linear(2, 2).'
    text = f"import torch\n# 中文注释 🚀\n{prefix}cuda()\n"
    uri = open_document(client, workspace / "unicode.py", text)
    found = by_code(await diagnostics(client, uri, 1), "NPU102")
    assert found[0].range == types.Range(types.Position(2, units(client, prefix)),
                                         types.Position(2, units(client, prefix + "cuda")))
    fix = next(a for a in await code_actions(client, uri, found) if a.is_preferred)
    fixed = apply(client, text, edits_by_uri(fix.edit)[uri])
    assert fixed.splitlines()[3] == f"{prefix}npu()"


async def test_pull_unchanged(client, workspace):
    uri = open_document(client, workspace / "pull.py", CUDA)
    await diagnostics(client, uri, 1)
    ask = types.DocumentDiagnosticParams(types.TextDocumentIdentifier(uri))
    first = await client.text_document_diagnostic_async(ask)
    assert first.kind == "full" and first.result_id
    ask.previous_result_id = first.result_id
    again = await client.text_document_diagnostic_async(ask)
    assert again.kind == "unchanged" and again.result_id == first.result_id
    # An edit that changes no finding (inside the first line) keeps the result.
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        types.VersionedTextDocumentIdentifier(version=2, uri=uri),
        [types.TextDocumentContentChangePartial(types.Range(types.Position(0, 12), types.Position(0, 12)), "  # ok")]))
    after = await client.text_document_diagnostic_async(ask)
    assert after.kind == "unchanged"
    replace_all(client, uri, "import torch\n", 3)
    cleared = await client.text_document_diagnostic_async(ask)
    assert cleared.kind == "full" and not cleared.items


async def test_cancelled_request_answers(client, workspace):
    uri = open_document(client, workspace / "cancel.py", EXAMPLE.read_text(encoding="utf-8"))
    future = client.protocol.send_request(types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionParams(
        types.TextDocumentIdentifier(uri), types.Range(types.Position(0, 0), types.Position(0, 0)),
        types.CodeActionContext([], only=[types.CodeActionKind.SourceFixAll])), msg_id="cancel-me")
    client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id="cancel-me"))
    try:
        await asyncio.wait_for(asyncio.wrap_future(future) if not asyncio.isfuture(future) else future, TIMEOUT)
    except Exception as exc:  # cancelled: the server answers with RequestCancelled
        assert "cancel" in str(exc).lower()
    assert await diagnostics(client, uri)  # and goes on serving


async def test_workspace_diagnostic(client, workspace):
    (workspace / "on_disk.py").write_text(CUDA, encoding="utf-8")
    report = await asyncio.wait_for(client.workspace_diagnostic_async(types.WorkspaceDiagnosticParams([])), 60)
    items = {item.uri: item for item in report.items}
    on_disk = items[(workspace / "on_disk.py").as_uri()]
    assert on_disk.kind == "full" and {d.code for d in on_disk.items} == {"NPU102", "NPU103"}
    again = await client.workspace_diagnostic_async(types.WorkspaceDiagnosticParams(
        [types.PreviousResultId(uri, item.result_id) for uri, item in items.items()]))
    assert {item.kind for item in again.items} == {"unchanged"}


async def test_never_imports_torch(client, workspace):
    # Exercise every feature first, so that anything imported lazily is imported.
    uri = open_document(client, workspace / "modules.py", EXAMPLE.read_text(encoding="utf-8"))
    found = await diagnostics(client, uri, 1)
    await code_actions(client, uri, found)
    for action in await code_actions(client, uri, [], only=[types.CodeActionKind.SourceFixAll]):
        await resolved(client, action)
    await client.text_document_hover_async(types.HoverParams(types.TextDocumentIdentifier(uri), types.Position(15, 30)))
    await client.text_document_completion_async(types.CompletionParams(
        types.TextDocumentIdentifier(uri), types.Position(0, 0)))
    answer = await client.workspace_execute_command_async(types.ExecuteCommandParams("ascend-lsp.debugModules"))
    assert answer["pid"] == client._server.pid  # the real server process, not this one
    assert "ascend_lsp" in answer["modules"] and "pygls" in answer["modules"]
    assert not {"torch", "torch_npu", "mindspore"} & set(answer["modules"])
    assert not pulls(client) or client.published == {}  # a pulling client is never pushed to
