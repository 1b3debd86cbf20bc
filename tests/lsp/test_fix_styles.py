"""Both fix styles in the editor, against the real server: each finding with a portable form
offers "Fix for NPU" and "Fix portably", and Fix All writes the style `fix-style` names."""

from __future__ import annotations

import asyncio

import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from .helpers import (CLIENTS, TIMEOUT, apply, code_actions, diagnostics, edits_by_uri, open_document, resolved,
                      server_config, start)

CUDA = "import torch\n\nmodel = torch.nn.Linear(2, 2).cuda()\ntorch.cuda.empty_cache()\n"
BOUND = 'accelerator_device = torch.accelerator.current_accelerator() or torch.device("cpu")\n'


@pytest_lsp.fixture(params=CLIENTS, config=server_config())
async def client(lsp_client: LanguageClient, request):
    lsp_client.name = request.param
    yield
    await lsp_client.shutdown_session()


async def fix_all(client: LanguageClient, uri: str) -> str:
    await diagnostics(client, uri, 1)
    actions = await code_actions(client, uri, [], only=[types.CodeActionKind.SourceFixAll])
    assert [a.kind for a in actions] == ["source.fixAll.ascend-lsp"]
    return apply(client, CUDA, edits_by_uri((await resolved(client, actions[0])).edit)[uri])


async def test_both_styles_offered_and_fix_all_follows_the_setting(client, tmp_path):
    await start(client, client.name, tmp_path, options={"fix-style": "portable"})
    uri = open_document(client, tmp_path / "train.py", CUDA)
    found = [d for d in await diagnostics(client, uri, 1) if d.code == "NPU102"]
    actions = {a.title: a for a in await code_actions(client, uri, found) if a.kind == types.CodeActionKind.QuickFix and "noqa" not in a.title}
    assert list(actions) == ["Fix portably: Replace `.cuda()` with `.to(accelerator_device)`",
                             "Fix for NPU: Replace `.cuda()` with `.npu()`"]
    portably = actions["Fix portably: Replace `.cuda()` with `.to(accelerator_device)`"]
    assert portably.is_preferred
    assert apply(client, CUDA, edits_by_uri(portably.edit)[uri]) == (
        "import torch\n" + BOUND + "\nmodel = torch.nn.Linear(2, 2).to(accelerator_device)\ntorch.cuda.empty_cache()\n")
    npu = actions["Fix for NPU: Replace `.cuda()` with `.npu()`"]
    assert apply(client, CUDA, edits_by_uri(npu.edit)[uri]) == (
        "import torch\nimport torch_npu\n\nmodel = torch.nn.Linear(2, 2).npu()\ntorch.cuda.empty_cache()\n")

    assert await fix_all(client, uri) == (
        "import torch\n" + BOUND + "\nmodel = torch.nn.Linear(2, 2).to(accelerator_device)\n"
        "if torch.accelerator.is_available():\n    torch.accelerator.empty_cache()\n")

    # the setting changed: Fix All writes torch_npu's names; both styles are still offered
    settings = {"ascend-lsp": {"fix-style": "npu"}}
    client.set_configuration(settings)
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
        settings=settings if client.name == "neovim" else None))
    client.published.clear()
    await asyncio.sleep(0)
    assert await fix_all(client, uri) == (
        "import torch\nimport torch_npu\n\nmodel = torch.nn.Linear(2, 2).npu()\ntorch.npu.empty_cache()\n")
    found = [d for d in await diagnostics(client, uri, 1) if d.code == "NPU102"]
    titles = [a.title for a in await code_actions(client, uri, found) if a.kind == types.CodeActionKind.QuickFix and "noqa" not in a.title]
    assert titles == ["Fix for NPU: Replace `.cuda()` with `.npu()`",
                      "Fix portably: Replace `.cuda()` with `.to(accelerator_device)`"]


async def test_unknown_style_is_a_visible_settings_error(client, tmp_path):
    await start(client, client.name, tmp_path, options={"fix-style": "cuda"})
    uri = open_document(client, tmp_path / "train.py", CUDA)
    await diagnostics(client, uri, 1)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + TIMEOUT
    while not any("`fix-style` must be one of npu, portable, got 'cuda'" in m.message for m in client.messages):
        assert loop.time() < deadline, "no settings error shown"
        await asyncio.sleep(0.01)
