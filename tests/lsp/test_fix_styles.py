"""Both fix styles in the editor, against the real server: each finding with a portable form
offers "Fix for NPU" and "Fix portably", and Fix All writes the style `fix-style` names."""

from __future__ import annotations

import asyncio

import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from .helpers import (CLIENTS, TIMEOUT, apply, change, code_actions, diagnostics, edits_by_uri, open_document,
                      replace_all, resolved, server_config, start)

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


TWO = "import torch\n\nx = torch.ones(1).cuda()\ny = torch.ones(1).cuda()\n"
BOTH_FIXED = "import torch\n" + BOUND + "\nx = torch.ones(1).to(accelerator_device)\ny = torch.ones(1).to(accelerator_device)\n"


def portably(actions: list[types.CodeAction]) -> types.CodeAction:
    [action] = [a for a in actions if a.title.startswith("Fix portably: ")]
    return action


def versions(edit: types.WorkspaceEdit) -> list[int | None]:
    return [change.text_document.version for change in edit.document_changes or ()]


def moved(diagnostic: types.Diagnostic, edits: list[types.TextEdit]) -> types.Diagnostic:
    """`diagnostic` as an editor holds it after `edits` (all on lines above it): its range moved
    down by the lines they added, its data as the server sent it."""
    lines = sum(e.new_text.count("\n") - (e.range.end.line - e.range.start.line) for e in edits)
    assert all(e.range.end.line < diagnostic.range.start.line for e in edits)
    start, end = diagnostic.range.start, diagnostic.range.end
    return types.Diagnostic(types.Range(types.Position(start.line + lines, start.character),
                                        types.Position(end.line + lines, end.character)),
                            diagnostic.message, diagnostic.severity, diagnostic.code, diagnostic.code_description,
                            diagnostic.source, data=diagnostic.data)


async def test_two_portable_fixes_from_one_pull_applied_in_turn(client, tmp_path):
    """Both fixes insert the device's binding: the second, asked for with its diagnostic from
    before the first was applied, is the current analysis's, so the binding is written once."""
    await start(client, client.name, tmp_path, options={"fix-style": "portable"})
    uri = open_document(client, tmp_path / "two.py", TWO)
    first, second = [d for d in await diagnostics(client, uri, 1) if d.code == "NPU102"]
    early = portably(await code_actions(client, uri, [second]))  # asked for, not applied
    action = portably(await code_actions(client, uri, [first]))
    applied = edits_by_uri(action.edit)[uri]
    text = apply(client, TWO, applied)
    replace_all(client, uri, text, 2)
    # as an editor holds it now: moved below the inserted line, with version 1's edits in its data
    now = portably(await code_actions(client, uri, [moved(second, applied)]))
    assert apply(client, text, edits_by_uri(now.edit)[uri]) == BOTH_FIXED
    assert apply(client, text, edits_by_uri(early.edit)[uri]).count(BOUND) == 2  # what version 1's edits would do
    if client.name == "visual-studio-code":  # it takes versioned edits: one made for version 1 is refused at 2
        assert (versions(action.edit), versions(early.edit), versions(now.edit)) == ([1], [1], [2])
    # where it was at version 1, the diagnostic names nothing there now: no fix is offered for it
    assert [a for a in await code_actions(client, uri, [second]) if a.kind == types.CodeActionKind.QuickFix] == []


async def test_an_edit_that_binds_the_device_elsewhere_takes_the_portable_fix_from_the_lines_it_left(client, tmp_path):
    """The edit is analysed alone, and the statement it did not touch loses its portable fix all
    the same: whether the device's name is taken is read from the whole text on each edit."""
    await start(client, client.name, tmp_path, options={"fix-style": "portable"})
    text = "import torch\n\nx = torch.ones(1).cuda()\n\ny = 1\n"
    uri = open_document(client, tmp_path / "a.py", text)

    async def titles(version: int) -> tuple[str, list[str]]:
        [found] = [d for d in await diagnostics(client, uri, version) if d.code == "NPU102"]
        return found.message, [a.title for a in await code_actions(client, uri, [found])
                               if a.kind == types.CodeActionKind.QuickFix and "noqa" not in a.title]

    message, offered = await titles(1)
    assert offered == ["Fix portably: Replace `.cuda()` with `.to(accelerator_device)`",
                       "Fix for NPU: Replace `.cuda()` with `.npu()`"]
    at = text.index("y = 1")
    taken = change(client, uri, text, [(at, at + 1, "accelerator_device")], 2)
    now, offered = await titles(2)
    assert now == message + (" No portable fix: an assignment on line 5 binds `accelerator_device`, the name the "
                             "portable fixes give the device.")
    assert not any(title.startswith("Fix portably") for title in offered)
    change(client, uri, taken, [(at, at + len("accelerator_device"), "y")], 3)
    assert await titles(3) == (message, ["Fix portably: Replace `.cuda()` with `.to(accelerator_device)`",
                                         "Fix for NPU: Replace `.cuda()` with `.npu()`"])
