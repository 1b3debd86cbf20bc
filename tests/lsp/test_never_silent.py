"""What lsp-check stops on is visible in the editor too: a rule that fails (logged with its
traceback, and shown once), a table row that does not validate, an unknown rule code."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from .helpers import TIMEOUT, diagnostics, open_document, replace_all, server_config, start

CUDA = "import torch\n\nmodel = torch.nn.Linear(2, 2).cuda()\ntorch.cuda.synchronize()\n"
PLUGINS = Path(__file__).parent / "plugins"


@pytest_lsp.fixture(config=server_config(
    ASCEND_LSP_EXTRA_RULES="crashing_rule",
    PYTHONPATH=os.pathsep.join(filter(None, [str(PLUGINS), os.environ.get("PYTHONPATH")]))))
async def client(lsp_client: LanguageClient, tmp_path):
    yield
    await lsp_client.shutdown_session()


async def shown(client: LanguageClient, text: str) -> list[types.ShowMessageParams]:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + TIMEOUT
    while not any(text in m.message for m in client.messages):
        assert loop.time() < deadline, f"no message with {text!r}: {[m.message for m in client.messages]}"
        await asyncio.sleep(0.01)
    return [m for m in client.messages if text in m.message]


async def test_a_failing_rule_is_shown_once(client, tmp_path):
    await start(client, "visual-studio-code", tmp_path)
    uri = open_document(client, tmp_path / "a.py", CUDA)
    assert {d.code for d in await diagnostics(client, uri, 1)} == {"NPU102", "NPU103"}
    replace_all(client, uri, CUDA + "torch.cuda.empty_cache()\n", 2)
    assert {d.code for d in await diagnostics(client, uri, 2)} == {"NPU102", "NPU103"}
    messages = await shown(client, "rule NPU990")
    assert len(messages) == 1 and messages[0].type == types.MessageType.Warning
    assert messages[0].message == ("ascend-lsp: rule NPU990 (crashing_rule.fail) failed; its findings are missing "
                                   "(details in the log)")
    logged = [m for m in client.log_messages if "rule NPU990" in m.message]
    assert len(logged) == 1 and logged[0].type == types.MessageType.Error
    assert "failed at line 3: RuntimeError: this rule always fails\nTraceback" in logged[0].message


async def test_a_bad_table_row_is_shown(client, tmp_path):
    (tmp_path / "team.toml").write_text('[[api]]\nname = "mylib.kernels"\nrule = "NPU103"\nfix = "sometimes"\n'
                                        'replacement = "mylib.npu"\nsource = "wiki"\n', encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text('[tool.ascend-lsp]\nextra-mappings = ["team.toml"]\n')
    await start(client, "visual-studio-code", tmp_path)
    open_document(client, tmp_path / "a.py", CUDA)
    messages = await shown(client, "team.toml")
    assert messages[0].message == (f"ascend-lsp: {tmp_path / 'team.toml'}: [[api]] row 1, key `fix`: 'sometimes' is "
                                   "not one of ['safe', 'unsafe', 'display']")


async def test_an_unknown_code_is_shown(client, tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.ascend-lsp]\nselect = ["NPU999"]\n')
    await start(client, "visual-studio-code", tmp_path)
    open_document(client, tmp_path / "a.py", CUDA)
    messages = await shown(client, "NPU999")  # the plugin's NPU990 is a known code too
    assert messages[0].message == (f"{tmp_path / 'pyproject.toml'}: `select`: unknown rule code or prefix `NPU999` "
                                   "(did you mean `NPU990`?); `lsp-check rules` lists them")
