"""The "Port this file to MindSpore" code action: the port of a PyTorch file, created beside
it (`model.py` → `model_mindspore.py`) by a workspace edit. What the port left to a person
is marked in the new file, where MS301/MS302 show it as diagnostics once it is open.

The port runs in a child process (`port/child.py`) that the server waits for off the event
loop: the server never imports libcst, and a file that crashes libcst ends that process only.
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types

from ..port import (INSTALL_HINT, PORT_SUFFIX, PortError, PortUnavailable, default_port_path, libcst_installed,
                    port_source)
from ..safe_write import WriteRefused, writable_target
from .documents import subject_path

if TYPE_CHECKING:
    from .language_server import AscendLanguageServer

PORT_KIND = "refactor.rewrite.ascend-lsp.port"
TITLE = "Port this file to MindSpore"
IMPORTS_TORCH = re.compile(r"^[ \t]*(?:import|from)[ \t]+torch\b", re.MULTILINE)


def can_create_files(server: AscendLanguageServer) -> bool:
    caps = server.client_capabilities.workspace
    edit = caps and caps.workspace_edit
    return bool(edit and edit.document_changes and edit.resource_operations
                and types.ResourceOperationKind.Create in edit.resource_operations)


def port_action(server: AscendLanguageServer, uri: str) -> types.CodeAction | None:
    """The action for a PyTorch file (not a port, not a notebook), its edit left to resolve."""
    path = subject_path(uri)
    document = server.workspace.text_documents.get(uri)
    if not path or document is None or Path(path).stem.endswith(PORT_SUFFIX) \
            or not IMPORTS_TORCH.search(document.source):
        return None
    if not libcst_installed():
        return types.CodeAction(TITLE, kind=PORT_KIND, disabled=types.CodeActionDisabled(INSTALL_HINT))
    if not can_create_files(server):
        return types.CodeAction(TITLE, kind=PORT_KIND, disabled=types.CodeActionDisabled(
            "this editor cannot create files from a workspace edit: run `lsp-check port` instead"))
    return types.CodeAction(TITLE, kind=PORT_KIND, data={"port": uri})


async def resolve_port(server: AscendLanguageServer, action: types.CodeAction) -> types.CodeAction:
    """Port the document's current text and attach the edit that creates the port."""
    uri = (action.data or {})["port"]
    path = subject_path(uri)
    document = server.workspace.text_documents.get(uri)
    if document is None or path is None:
        return action
    port_path = default_port_path(path)
    try:  # the editor would write through a link a repository committed at the port's name
        writable_target(str(port_path))
    except WriteRefused as exc:
        _tell(server, types.MessageType.Error, f"cannot port {Path(path).name}: {port_path.name}: {exc}")
        return action
    loop = asyncio.get_running_loop()
    try:  # the default executor: the analysis threads are not held while the port's process works
        result = await loop.run_in_executor(None, port_source, document.source, path)
    except PortUnavailable as exc:
        _tell(server, types.MessageType.Error, str(exc))
        return action
    except PortError as exc:
        _tell(server, types.MessageType.Error, f"cannot port {Path(path).name}: {exc}")
        return action
    target = port_path.absolute().as_uri()
    action.edit = types.WorkspaceEdit(document_changes=[
        types.CreateFile(target, options=types.CreateFileOptions(overwrite=True)),
        types.TextDocumentEdit(types.OptionalVersionedTextDocumentIdentifier(target, None),
                               [types.TextEdit(types.Range(types.Position(0, 0), types.Position(0, 0)), result.text)]),
    ])
    left = result.count("manual") + result.count("unsupported")
    _tell(server, types.MessageType.Info if not left else types.MessageType.Warning,
          f"{Path(path).name} → {port_path.name}: {result.count('converted')} converted "
          f"({result.rate:.0%})"
          + (f", {left} marked for a person (MS301/MS302 in the port)" if left else ""))
    return action


def _tell(server: AscendLanguageServer, kind: types.MessageType, message: str) -> None:
    server.window_show_message(types.ShowMessageParams(kind, message))
