"""Related locations as `Diagnostic.relatedInformation`: the CUDA calls inside a reported
guard, and where another file registers an operator's CUDA kernel, in the client's units;
a client that does not declare the capability reads them in the message."""

from __future__ import annotations

import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from .helpers import CLIENTS, diagnostics, open_document, server_config, start, units

PREFIX = '    note = "注释 🚀 GPU"; '  # Chinese and an emoji (two UTF-16 units) before the call
GUARDED = f"import torch\n\nif torch.cuda.is_available():\n{PREFIX}torch.cuda.synchronize()\n"
CALL = "torch.cuda.synchronize"
CUDA_OP = 'TORCH_LIBRARY_IMPL(proj, CUDA, m) {\n  m.impl("gelu", &gelu_cuda);\n}\n'


@pytest_lsp.fixture(params=CLIENTS, config=server_config())
async def client(lsp_client: LanguageClient, request):
    lsp_client.name = request.param
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=server_config())
async def plain_client(lsp_client: LanguageClient):
    """A client that declares no relatedInformation."""
    yield
    await lsp_client.shutdown_session()


async def test_a_guard_relates_the_calls_it_holds(client, tmp_path):
    await start(client, client.name, tmp_path)
    uri = open_document(client, tmp_path / "guarded.py", GUARDED)
    found = [(d.code, d.range.start.line) for d in await diagnostics(client, uri, 1)]
    assert found == [("NPU103", 2)]  # the guard, once: the call is not a diagnostic of its own
    guard = (await diagnostics(client, uri, 1))[0]
    assert guard.message == "`torch.cuda.is_available` is a CUDA API. Use `torch.npu.is_available`."
    start_col = units(client, PREFIX)
    assert list(guard.related_information) == [types.DiagnosticRelatedInformation(
        types.Location(uri, types.Range(types.Position(3, start_col), types.Position(3, start_col + len(CALL)))),
        "inside the guard: NPU103 `torch.cuda.synchronize` is a CUDA API. Use `torch.npu.synchronize`.")]
    if client.encoding == types.PositionEncodingKind.Utf16:
        assert start_col == 24  # 23 code points: 注 and 释 one unit each, 🚀 two


async def test_an_operator_relates_its_registration_in_another_file(client, tmp_path):
    (tmp_path / "csrc").mkdir()
    (tmp_path / "csrc" / "ops.cu").write_text(CUDA_OP, encoding="utf-8")
    await start(client, client.name, tmp_path)
    uri = open_document(client, tmp_path / "model.py", "import torch\n\ny = torch.ops.proj.gelu(x)\n")
    found = [d for d in await diagnostics(client, uri, 1) if d.code == "NPU308"]
    start_of_line = types.Position(1, 0)
    assert [list(d.related_information) for d in found] == [[types.DiagnosticRelatedInformation(
        types.Location((tmp_path / "csrc" / "ops.cu").as_uri(), types.Range(start_of_line, start_of_line)),
        "`proj::gelu` registered with a CUDA kernel")]]


async def test_without_the_capability_the_message_says_it(plain_client, tmp_path):
    plain_client.root = tmp_path
    caps = types.ClientCapabilities(text_document=types.TextDocumentClientCapabilities(
        publish_diagnostics=types.PublishDiagnosticsClientCapabilities(related_information=False)))
    await plain_client.initialize_session(types.InitializeParams(
        capabilities=caps, root_uri=tmp_path.as_uri(), workspace_folders=[types.WorkspaceFolder(tmp_path.as_uri(), "w")]))
    plain_client.encoding = types.PositionEncodingKind.Utf16
    uri = open_document(plain_client, tmp_path / "guarded.py", GUARDED)
    [guard] = await diagnostics(plain_client, uri, 1)
    assert guard.related_information is None
    assert guard.message == ("`torch.cuda.is_available` is a CUDA API. Use `torch.npu.is_available`.\n"
                             "inside the guard: NPU103 `torch.cuda.synchronize` is a CUDA API. Use "
                             "`torch.npu.synchronize`. (line 4)")


@pytest_lsp.fixture(config=server_config())
async def notebook_client(lsp_client: LanguageClient, tmp_path):
    await start(lsp_client, "visual-studio-code", tmp_path, notebooks=True)
    yield
    await lsp_client.shutdown_session()


async def test_in_a_notebook_the_location_is_in_its_cell(notebook_client, tmp_path):
    path = tmp_path / "train.ipynb"
    cells = [(f"vscode-notebook-cell:{path}#cell{i}", text)
             for i, text in enumerate(["import torch", "x = 1\nif torch.cuda.is_available():\n    torch.cuda.synchronize()"])]
    notebook_client.notebook_document_did_open(types.DidOpenNotebookDocumentParams(
        types.NotebookDocument(path.as_uri(), "jupyter-notebook", 1,
                               [types.NotebookCell(types.NotebookCellKind.Code, uri) for uri, _ in cells]),
        [types.TextDocumentItem(uri, "python", 1, text) for uri, text in cells]))
    [guard] = await diagnostics(notebook_client, cells[1][0], 1)
    assert (guard.range.start.line, guard.range.start.character) == (1, 3)
    assert [(r.location.uri, r.location.range) for r in guard.related_information] == [
        (cells[1][0], types.Range(types.Position(2, 4), types.Position(2, 26)))]
