"""target = "mindspore" in the editor: the classic porting mistakes (Dropout keep_prob,
TopK sorted, a buffer as a trainable Parameter, BatchNorm momentum) as diagnostics with
their quick fixes, and the MindSpore counterpart in the hover of a torch API."""

from __future__ import annotations

import asyncio

import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from .helpers import CLIENTS, REPO, TIMEOUT, apply, code_actions, diagnostics, edits_by_uri, open_document, \
    server_config, start

PORT = (REPO / "examples" / "mindspore_port.py").read_text(encoding="utf-8")


@pytest_lsp.fixture(params=CLIENTS, config=server_config())
async def client(lsp_client: LanguageClient, request, tmp_path):
    await start(lsp_client, request.param, tmp_path, options={"target": "mindspore"})
    yield
    await lsp_client.shutdown_session()


def line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines()) if needle in line)


async def fix_for(client, uri: str, diagnostic: types.Diagnostic) -> str:
    actions = await code_actions(client, uri, [diagnostic])
    fix = next(a for a in actions if a.kind == types.CodeActionKind.QuickFix and "noqa" not in a.title)
    return apply(client, PORT, edits_by_uri(fix.edit)[uri])


async def test_classic_mistakes_and_their_fixes(client, tmp_path):
    uri = open_document(client, tmp_path / "port.py", PORT)
    items = await diagnostics(client, uri, 1)
    at = {(d.code, d.range.start.line): d for d in items}
    dropout = at[("MS201", line_of(PORT, "nn.Dropout(0.1)"))]
    topk = at[("MS233", line_of(PORT, "ops.TopK()"))]
    buffer = at[("MS232", line_of(PORT, "self.running_energy"))]
    momentum = at[("MS203", line_of(PORT, "momentum=0.1"))]
    assert ("MS202", line_of(PORT, "value_and_grad")) in at
    assert dropout.severity == types.DiagnosticSeverity.Warning and "keep_prob" in dropout.message
    assert "nn.Dropout(p=0.1)" in await fix_for(client, uri, dropout)
    assert "ops.TopK(sorted=True)(logits, k)" in await fix_for(client, uri, topk)
    assert "Parameter(ops.zeros(channels), requires_grad=False)" in await fix_for(client, uri, buffer)
    assert "nn.BatchNorm2d(channels, momentum=0.9)" in await fix_for(client, uri, momentum)


async def test_hover_shows_the_mindspore_counterpart(client, tmp_path):
    text = "import torch\n\ny = torch.amax(x)\n"
    uri = open_document(client, tmp_path / "hover.py", text)
    await diagnostics(client, uri, 1)
    hover = await asyncio.wait_for(client.text_document_hover_async(types.HoverParams(
        types.TextDocumentIdentifier(uri), types.Position(2, 11))), TIMEOUT)
    value = hover.contents.value
    assert "MindSpore (2.6 table): `mindspore.mint.amax`" in value
    assert "default value of dim is different" in value
