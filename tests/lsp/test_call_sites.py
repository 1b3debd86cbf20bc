"""NPU101 on a parameter's CUDA default in the language server: a warning while a call in the
project omits it, info (the calls related) once a saved edit in the caller's file passes it
(call_sites.py, read again when a Python file is saved)."""

from __future__ import annotations

import asyncio

import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from .helpers import CLIENTS, TIMEOUT, diagnostics, open_document, server_config, start

LOADER = 'import torch\n\n\ndef create_loader(dataset, device=torch.device("cuda")):\n    return dataset\n'


@pytest_lsp.fixture(params=CLIENTS, config=server_config())
async def client(lsp_client: LanguageClient, request, tmp_path):
    lsp_client.name = request.param
    yield
    await lsp_client.shutdown_session()


async def test_a_saved_caller_changes_the_default(client, tmp_path):
    train = tmp_path / "train.py"
    train.write_text("from loader import create_loader\n\nloader = create_loader(data)\n", encoding="utf-8")
    (tmp_path / "loader.py").write_text(LOADER, encoding="utf-8")
    await start(client, client.name, tmp_path)
    uri = open_document(client, tmp_path / "loader.py", LOADER)

    async def default() -> types.Diagnostic:
        found = [d for d in await diagnostics(client, uri, 1) if d.code == "NPU101"]
        assert [d.range.start for d in found] == [types.Position(3, 47)]
        return found[0]

    assert (await default()).severity == types.DiagnosticSeverity.Warning
    train.write_text("from loader import create_loader\n\nloader = create_loader(data, device)\n", encoding="utf-8")
    client.text_document_did_save(types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(train.as_uri())))
    loop = asyncio.get_running_loop()
    deadline = loop.time() + TIMEOUT
    while (found := await default()).severity != types.DiagnosticSeverity.Information:
        assert loop.time() < deadline, f"NPU101 stayed {found.severity} after the caller passed its device"
        await asyncio.sleep(0.05)
    assert found.message.endswith("every call of `create_loader` passes `device`: 1 call, train.py:3.)")
    assert [(r.location.uri, r.location.range.start.line, r.message) for r in found.related_information or ()] == \
        [(train.as_uri(), 2, "passes `device`")]
