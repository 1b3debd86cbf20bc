"""The "Port this file to MindSpore" code action in a real server process: a workspace edit
that creates the port beside the file, and MS301 on what the port left to a person once the
new file is open. Editors that cannot create files get the action disabled, with a reason."""

from __future__ import annotations


import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from ascend_lsp.port import port_source

from ..lsp.helpers import CLIENTS, code_actions, diagnostics, open_document, resolved, server_config, start
from .models import MODELS, model_source

NANOGPT = next(m for m in MODELS if m.name == "nanogpt")
LINTED = "import torch\nimport torch.nn as nn\n\n\nclass Net(nn.Module):\n    def forward(self, x):\n        return torch.relu(x)\n"


@pytest_lsp.fixture(params=CLIENTS, config=server_config())
async def client(lsp_client: LanguageClient, request, tmp_path):
    lsp_client.name = request.param
    await start(lsp_client, request.param, tmp_path, options={"target": "mindspore"})
    yield
    await lsp_client.shutdown_session()


async def port_action(client, uri: str) -> types.CodeAction:
    await diagnostics(client, uri, 1)
    actions = await code_actions(client, uri, [], only=[types.CodeActionKind.Refactor])
    [action] = [a for a in actions if a.title == "Port this file to MindSpore"]
    return action


async def test_port_action_creates_the_port_and_marks_what_needs_a_person(client, tmp_path):
    text = model_source(NANOGPT)
    source = tmp_path / "lm.py"
    source.write_text(text, encoding="utf-8")
    uri = open_document(client, source, text)
    action = await port_action(client, uri)
    if client.name == "neovim":  # its recorded capabilities take no documentChanges: no file creation
        assert action.disabled is not None and "lsp-check port" in action.disabled.reason
        return
    action = await resolved(client, action)
    create, edit = action.edit.document_changes
    target = (tmp_path / "lm_mindspore.py").resolve()
    assert isinstance(create, types.CreateFile) and create.uri == target.as_uri()
    [text_edit] = edit.edits
    expected = port_source(text, str(source)).text
    assert edit.text_document.uri == target.as_uri() and text_edit.new_text == expected

    target.write_text(expected, encoding="utf-8")  # what the editor does with the edit
    port_uri = open_document(client, target, expected)
    found = [d for d in await diagnostics(client, port_uri, 1) if str(d.code).startswith("MS30")]
    markers = [(line.lstrip()[2:7], i) for i, line in enumerate(expected.split("\n"))
               if line.lstrip().startswith(("# MS301 port:", "# MS302 port:"))]
    assert [code for code, _ in markers] == ["MS301", "MS301", "MS302", "MS302"]
    assert [(d.code, d.range.start.line) for d in found] == markers
    assert "`torch.optim.AdamW` has no MindSpore counterpart" in found[-1].message


async def test_no_port_action_for_a_port_or_a_file_without_torch(client, tmp_path):
    port = tmp_path / "lm_mindspore.py"
    uri = open_document(client, port, port_source(LINTED).text)
    await diagnostics(client, uri, 1)
    assert not [a for a in await code_actions(client, uri, [], only=[types.CodeActionKind.Refactor])
                if a.title == "Port this file to MindSpore"]
    plain = open_document(client, tmp_path / "plain.py", "import numpy\n")
    await diagnostics(client, plain, 1)
    assert not [a for a in await code_actions(client, plain, [], only=[types.CodeActionKind.Refactor])
                if a.title == "Port this file to MindSpore"]


def test_the_server_never_imports_libcst_to_lint():
    import subprocess
    import sys

    probe = ("import sys\nfrom ascend_lsp.lsp import server\nfrom ascend_lsp.engine.config import Settings\nfrom ascend_lsp.analysis import analyze\n"
             f"analyze({LINTED!r}, Settings(target='mindspore'), 'lm.py')\n"
             "print('libcst' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


