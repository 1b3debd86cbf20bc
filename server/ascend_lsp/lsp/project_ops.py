"""The project's own operators (custom_ops.py, rule NPU308) and pinned versions in the language server: the
workspace folder's project (project.py) is scanned off the event loop when the client is
ready, and again when a saved or changed C++/CUDA or Python file registers operators (or
did); open documents are then analysed again, in full. The Python facts of a document's
project are read off the loop when it opens."""

from __future__ import annotations

import asyncio
import os
from typing import TYPE_CHECKING

from lsprotocol import types
from pygls.uris import to_fs_path

from .. import custom_ops
from ..project import ProjectContext, pins_versions
from ..sources import SourceError, read_regular
from .scheduler import release_memory

if TYPE_CHECKING:
    from .language_server import AscendLanguageServer

# The client watches these (workspace/didChangeWatchedFiles); Python files come as saves too.
# Operator registrations, then the files that may pin versions (requirements, setup.cfg,
# environment.yml; pyproject.toml is watched with the settings' *.toml).
WATCHED = "**/*.{cpp,cc,cxx,cu,cuh,hip}"
WATCHED_PINS = "**/*.{txt,cfg,yml,yaml}"


def _root(server: AscendLanguageServer) -> str | None:
    root = server.settings.root
    return os.path.realpath(root) if root else None


def warm(server: AscendLanguageServer) -> None:
    """Scan the workspace folder in a worker thread: the first analysis finds it done (or
    waits for it, rather than scanning a second time)."""
    root = _root(server)
    if root is None:
        return
    server.projects.folders.add(root)
    inside = os.path.join(root, "__init__.py")  # a file of the folder, for its settings and project root
    settings = server.settings.for_path(inside)
    project = server.projects.for_path(inside, settings)
    if project is not None and settings.target == "torch_npu" and settings.enabled("NPU308"):
        asyncio.get_running_loop().run_in_executor(None, lambda: project.ops)
    warm_python(server, inside)  # documents opened before the folder was known found no project, or another


def warm_python(server: AscendLanguageServer, path: str | None) -> asyncio.Future | None:
    """Read the Python facts of an opened document's project, or of the workspace folder's (the
    flags it leaves off, the calls of its functions) in a worker thread, if not read yet: the first
    keystroke whose analysis needs them then finds them read rather than reading the whole project
    itself (0.5-0.8 s over transformers), and the memory the read held is given back (the server's
    RSS after typing into trainer.py: 71 MB, 185 MB without). The read, or None."""
    project = server.projects.for_path(path, server.settings.for_path(path)) if path is not None else None
    if project is None or project.python_read:
        return None

    def read() -> None:
        project.python_digest()  # reads the flags and the calls
        release_memory()  # the read held every Python file's text at once

    return asyncio.get_running_loop().run_in_executor(None, read)


def _concerns(project: ProjectContext, path: str) -> bool:
    """Whether a changed file may add or remove registrations of its project."""
    if not path.endswith((*custom_ops.CPP_SUFFIXES, ".py")):
        return False
    if project.registers_in(path):
        return True
    try:
        data = read_regular(path, custom_ops.MAX_FILE_BYTES)[0]  # not a FIFO: it would never answer
    except SourceError:
        return False
    return custom_ops.registers_ops(data.decode("utf-8", "replace"))


def changed(server: AscendLanguageServer, paths: list[str]) -> None:
    """Files changed on disk: read their projects' pins again if they may pin versions (some
    findings' severity follows the pins), rescan their operators if they concern registrations, and
    read the flags the project leaves off and the calls of its functions again after a Python file changed."""
    # on the loop: finding the settings may report
    real = {os.path.realpath(p): server.settings.for_path(p) for p in paths}
    projects = {(path, server.projects.for_path(path, settings)) for path, settings in real.items()}
    repinned = {project for path, project in projects if project is not None and pins_versions(path)}
    for project in repinned:
        project.forget_pins()

    def rescan() -> bool:
        stale = {project for path, project in projects if project is not None and _concerns(project, path)}
        for project in stale:
            project.rescan_ops()
        # a flag the project leaves off lowers what it guards (flag_defaults.py), calls a default (call_sites.py)
        reflagged = [project.reread_python() for project in {p for path, p in projects if p is not None
                                                             and path.endswith(".py")}]
        return bool(stale or repinned or any(reflagged))

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
