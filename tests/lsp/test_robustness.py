"""A failing rule does not take the server down; shutdown and exit are clean."""

from __future__ import annotations

import os
from pathlib import Path

import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from .helpers import CLIENTS, diagnostics, open_document, replace_all, server_config, start

CUDA = "import torch\n\nmodel = torch.nn.Linear(2, 2).cuda()\ntorch.cuda.synchronize()\n"
PLUGINS = Path(__file__).parent / "plugins"


@pytest_lsp.fixture(params=CLIENTS, config=server_config(
    ASCEND_LSP_EXTRA_RULES="crashing_rule",
    PYTHONPATH=os.pathsep.join(filter(None, [str(PLUGINS), os.environ.get("PYTHONPATH")]))))
async def client(lsp_client: LanguageClient, request, tmp_path):
    await start(lsp_client, request.param, tmp_path)
    yield
    if lsp_client._server.returncode is None:
        await lsp_client.shutdown_session()


async def test_failing_rule_is_logged_and_others_report_then_clean_exit(client, tmp_path):
    uri = open_document(client, tmp_path / "a.py", CUDA)
    assert {d.code for d in await diagnostics(client, uri, 1)} == {"NPU102", "NPU103"}
    replace_all(client, uri, CUDA + "torch.cuda.empty_cache()\n", 2)
    assert {d.code for d in await diagnostics(client, uri, 2)} == {"NPU102", "NPU103"}
    failures = [m for m in client.log_messages if "this rule always fails" in m.message]
    assert len(failures) == 1  # logged once, not on every keystroke
    assert failures[0].type == types.MessageType.Error and "crashing_rule.fail" in failures[0].message

    await client.shutdown_session()  # shutdown, then exit: the process ends with 0
    assert client._server.returncode == 0
