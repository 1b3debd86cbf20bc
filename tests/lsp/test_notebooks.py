"""Notebooks: the code cells are analysed together, diagnostics and fixes land in the right cell."""

from __future__ import annotations

import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from .helpers import CLIENTS, apply, code_actions, diagnostics, edits_by_uri, resolved, server_config, start

CELLS = [
    (types.NotebookCellKind.Code, "import torch"),  # Jupyter keeps no final line break
    (types.NotebookCellKind.Markup, "# Training on `cuda`\n"),
    (types.NotebookCellKind.Code, "%matplotlib inline\nx = torch.zeros(2).cuda()"),
]


@pytest_lsp.fixture(params=CLIENTS, config=server_config())
async def client(lsp_client: LanguageClient, request, tmp_path):
    await start(lsp_client, request.param, tmp_path, notebooks=True)
    yield
    await lsp_client.shutdown_session()


def open_notebook(client: LanguageClient, path) -> tuple[str, list[str]]:
    uri = path.as_uri()
    cell_uris = [f"vscode-notebook-cell:{path}#cell{i}" for i in range(len(CELLS))]
    client.notebook_document_did_open(types.DidOpenNotebookDocumentParams(
        types.NotebookDocument(uri, "jupyter-notebook", 1,
                               [types.NotebookCell(kind, cell_uri) for (kind, _), cell_uri in zip(CELLS, cell_uris)]),
        [types.TextDocumentItem(cell_uri, "python" if kind == types.NotebookCellKind.Code else "markdown", 1, text)
         for (kind, text), cell_uri in zip(CELLS, cell_uris)]))
    return uri, cell_uris


async def test_notebook_cells(client, tmp_path):
    uri, cells = open_notebook(client, tmp_path / "train.ipynb")
    found = await diagnostics(client, cells[2], 1)
    # `torch` resolves through cell 1's import; the finding is placed in cell 3's own lines.
    assert [(d.code, d.range.start.line, d.range.start.character) for d in found] == [("NPU102", 1, 19)]
    assert await diagnostics(client, cells[0], 1) == []

    fix = next(a for a in await code_actions(client, cells[2], found) if a.is_preferred)
    edits = edits_by_uri(fix.edit)
    assert apply(client, CELLS[2][1], edits[cells[2]]) == "%matplotlib inline\nx = torch.zeros(2).npu()"
    assert apply(client, CELLS[0][1], edits[cells[0]]) == "import torch\nimport torch_npu"

    fix_all = await resolved(client, (await code_actions(client, cells[2], [], only=["source.fixAll"]))[0])
    edits = edits_by_uri(fix_all.edit)
    assert apply(client, CELLS[2][1], edits[cells[2]]) == "%matplotlib inline\nx = torch.zeros(2).npu()"
    assert apply(client, CELLS[0][1], edits[cells[0]]) == "import torch\nimport torch_npu"

    # Typing in cell 3 re-analyses the notebook.
    client.notebook_document_did_change(types.DidChangeNotebookDocumentParams(
        types.VersionedNotebookDocumentIdentifier(2, uri),
        types.NotebookDocumentChangeEvent(cells=types.NotebookDocumentCellChanges(text_content=[
            types.NotebookDocumentCellContentChanges(types.VersionedTextDocumentIdentifier(2, cells[2]), [
                types.TextDocumentContentChangePartial(types.Range(types.Position(1, 19), types.Position(1, 23)),
                                                       "npu")])]))))
    assert await diagnostics(client, cells[2], 2) == []
