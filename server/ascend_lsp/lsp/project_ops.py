"""The project's own operators (custom_ops.py, rule NPU308) in the language server: the
workspace folder is scanned off the event loop when the client is ready, and again when a
saved or changed C++/CUDA or Python file registers operators (or did); open documents are
then analysed again, in full."""

from __future__ import annotations

import asyncio
import os
from typing import TYPE_CHECKING

from lsprotocol import types
from pygls.uris import to_fs_path

from .. import custom_ops
from ..sources import SourceError, read_regular

if TYPE_CHECKING:
    from .language_server import AscendLanguageServer

# The client watches these (workspace/didChangeWatchedFiles); Python files come as saves too.
WATCHED = "**/*.{cpp,cc,cxx,cu,cuh,hip}"


def _root(server: AscendLanguageServer) -> str | None:
    root = server.settings.root
    return os.path.realpath(root) if root else None


def warm(server: AscendLanguageServer) -> None:
    """Scan the workspace folder in a worker thread: the first analysis finds it done (or
    waits for it, rather than scanning a second time)."""
    root = _root(server)
    if root is None:
        return
    custom_ops.WORKSPACE_FOLDERS.add(root)
    inside = os.path.join(root, "__init__.py")  # a file of the folder, for its settings and project root
    settings = server.settings.for_path(inside)
    if settings.target == "torch_npu" and settings.enabled("NPU308"):
        asyncio.get_running_loop().run_in_executor(None, custom_ops.index_for, inside, settings)


def _concerns(path: str) -> bool:
    """Whether a changed file may add or remove registrations of its project."""
    if not path.endswith((*custom_ops.CPP_SUFFIXES, ".py")):
        return False
    if custom_ops.registered_in(path):
        return True
    try:
        data = read_regular(path, custom_ops.MAX_FILE_BYTES)[0]  # not a FIFO: it would never answer
    except SourceError:
        return False
    return custom_ops.registers_ops(data.decode("utf-8", "replace"))


def changed(server: AscendLanguageServer, paths: list[str]) -> None:
    """Files changed on disk: rescan their projects if they concern registrations."""
    settings = {os.path.realpath(p): server.settings.for_path(p) for p in paths}  # on the loop: it may report

    def rescan() -> bool:
        roots = {custom_ops.project_root(p, s) for p, s in settings.items() if _concerns(p)}
        for root in roots:
            custom_ops.forget(root)
        for path, path_settings in settings.items():
            if custom_ops.project_root(path, path_settings) in roots:
                custom_ops.index_for(path, path_settings)
        return bool(roots)

    def done(future: asyncio.Future) -> None:
        if future.exception() is None and future.result():
            for subject in server.documents.subjects.values():
                subject.base = None  # a statement the edit did not touch may call an op whose kernels changed
            server.settings.invalidate()
            server.settings_changed()

    asyncio.get_running_loop().run_in_executor(None, rescan).add_done_callback(done)


def register(server: AscendLanguageServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(params: types.DidSaveTextDocumentParams) -> None:
        changed(server, [to_fs_path(params.text_document.uri)])
