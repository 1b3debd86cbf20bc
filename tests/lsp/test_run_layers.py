"""Run on NPU: find the layer, against the real server process: the second lens, RUN002 on
the line that constructs the first divergent module, the per-layer table in its hover."""

from __future__ import annotations

import asyncio

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from .helpers import CLIENTS, TIMEOUT, diagnostics, open_document, pulls, server_config, start

pytest.importorskip("torch", reason="the torch extra is not installed")


@pytest_lsp.fixture(params=CLIENTS[:1], config=server_config())
async def client(lsp_client: LanguageClient, request):
    lsp_client.name = request.param
    yield
    await lsp_client.shutdown_session()

SOURCE = '''import torch
from torch import nn


class Net(nn.Module):  # 中文 🚀
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 1, (1, 2), bias=False)
        self.act = nn.ReLU()

    def forward(self, x):
        return self.act(self.conv(x))


def cancels():
    # HF32 keeps 11 mantissa bits: 10000 + 2.44 rounds to 10000 or 10004, and the sum cancels
    net = Net()
    with torch.no_grad():
        net.conv.weight.fill_(1.0)
    x = torch.tensor([[10002.44, -10000.0]] * 4).reshape(1, 1, 4, 2)
    return net(x.cuda())
'''


async def test_find_the_layer_marks_the_construction_line(client, tmp_path):
    await start(client, client.name, tmp_path, options={"runner": {"target": "emulate", "timeout": 120}})
    path = tmp_path / "layers.py"
    path.write_text(SOURCE)
    (tmp_path / "pyproject.toml").write_text("")
    uri = open_document(client, path, SOURCE)
    await diagnostics(client, uri, 1)
    found = await asyncio.wait_for(client.text_document_code_lens_async(
        types.CodeLensParams(types.TextDocumentIdentifier(uri))), TIMEOUT)
    resolved = [await asyncio.wait_for(client.code_lens_resolve_async(lens), TIMEOUT) for lens in found]
    lens = next(lens for lens in resolved if lens.command.title == "Run on NPU: find the layer")
    assert lens.command.command == "ascend-lsp.runLayers" and lens.range.start.line == 14
    assert lens.command.arguments[0] == {"uri": uri, "function": "cancels", "layers": "module"}
    result = await asyncio.wait_for(client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="ascend-lsp.runLayers", arguments=[lens.command.arguments[0]])), 120)
    assert result["status"] in ("passed", "warning", "error"), result
    loop = asyncio.get_running_loop()
    deadline = loop.time() + TIMEOUT
    marks = []
    while loop.time() < deadline and not marks:
        if not pulls(client):
            await asyncio.sleep(0.05)
        marks = [d for d in await diagnostics(client, uri) if d.code == "RUN002"]
    layer = next(d for d in marks if d.code == "RUN002")
    assert layer.range.start == types.Position(7, 8) and layer.range.end.line == 7  # self.conv = nn.Conv2d(...)
    assert layer.severity == types.DiagnosticSeverity.Error
    assert layer.message.startswith("Run on emulate (emulated): first divergence: conv (Conv2d) ERROR")
    assert layer.data["layer"] == {"module": "conv", "class": "Conv2d", "verdict": "ERROR",
                                   "decided_by": "rel err share",
                                   "call_line": 12, "call_path": str(path)}
    hover = await asyncio.wait_for(client.text_document_hover_async(types.HoverParams(
        types.TextDocumentIdentifier(uri), types.Position(7, 12))), TIMEOUT)
    table = hover.contents.value
    assert "**Layers** (execution order)" in table
    rows = {row.split("|")[2].strip(): row for row in table.split("\n") if row.startswith("| ") and "Conv2d" in row
            or "ReLU" in row}
    assert "ERROR ← first divergence" in rows["conv"] and "| ERROR | ERROR |" in rows["act"]
