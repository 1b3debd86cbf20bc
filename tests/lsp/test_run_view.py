"""A per-layer run's page (`ascend-lsp.runView`) from the real server process: a MindSpore port with
a wrong default, run through "find the layer", and the page its answer names."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from pytest_lsp import LanguageClient

from .helpers import CLIENTS, diagnostics, open_document, server_config, start

pytest.importorskip("torch", reason="the torch extra is not installed")
pytest.importorskip("mindspore", reason="the mindspore extra is not installed")


@pytest_lsp.fixture(params=CLIENTS[:1], config=server_config())
async def client(lsp_client: LanguageClient, request):
    lsp_client.name = request.param
    yield
    await lsp_client.shutdown_session()

# a model and its MindSpore port with a planted wrong default (the LeakyReLU's slope), shared with the
# end-to-end test (client-vscode/e2e/driver.ts)
SOURCE = (Path(__file__).parent / "run_view_head.py").read_text(encoding="utf-8")


async def test_a_layers_run_names_its_page_and_the_page_marks_the_divergence(client, tmp_path):
    await start(client, client.name, tmp_path, options={"runner": {"target": "mindspore", "timeout": 120}})
    path = tmp_path / "head.py"
    path.write_text(SOURCE)
    (tmp_path / "pyproject.toml").write_text("")
    uri = open_document(client, path, SOURCE)
    await diagnostics(client, uri, 1)

    async def execute(command: str, argument: dict):
        return await asyncio.wait_for(client.workspace_execute_command_async(types.ExecuteCommandParams(
            command=command, arguments=[argument])), 120)

    plain = await execute("ascend-lsp.run", {"uri": uri, "function": "head"})
    assert "view" not in plain  # a run without layers has no page
    answer = await execute("ascend-lsp.runLayers", {"uri": uri, "function": "head", "layers": "module"})
    assert answer["status"] == "error" and answer["view"] == {"uri": uri, "entry": "head"}
    page = await execute("ascend-lsp.runView", answer["view"])
    assert page["title"] == "Layers: head"
    html = page["html"]
    nonce = re.search(r"script-src 'nonce-([\w-]+)'", html).group(1)
    assert len(nonce) >= 24
    assert f"<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'nonce-{nonce}'; " \
           f"script-src 'nonce-{nonce}'\">" in html
    assert html.count(f'<script nonce="{nonce}">') == 1 and html.count("<script") == 1
    assert "http://" not in html and "https://" not in html
    # The first divergence is the LeakyReLU, built on line 29 of the port; its mark opens that line.
    assert re.search(rf'<g class="mark divergence" id="mark-divergence" data-path="{re.escape(str(path))}" '
                     rf'data-line="29" tabindex="0" role="link"><title>first divergence: #2 act \(LeakyReLU\) '
                     rf'· line 29</title>', html)
    assert 'id="mark-overflow"' not in html
    row = re.search(r'<tr id="layer-2" class="divergence">(.*?)</tr>', html).group(1)
    assert '<td class="error">ERROR ← first divergence</td>' in row
    assert f'<span data-path="{path}" data-line="29" tabindex="0" role="link">line 29</span>' in row
    assert f'<span data-path="{path}" data-line="14" tabindex="0" role="link">line 14</span>' in row  # called in forward
    with pytest.raises(JsonRpcInvalidParams, match="no per-layer run of 'forward'"):
        await execute("ascend-lsp.runView", {"uri": uri, "entry": "forward"})
