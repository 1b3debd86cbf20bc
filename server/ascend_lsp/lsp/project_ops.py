"""The project's own operators (custom_ops.py, rule NPU308) and pinned versions in the language server: the
workspace folder's project (project.py) is scanned off the event loop when the client is
ready, and again when a saved or changed C++/CUDA or Python file registers operators (or
did); open documents are then analysed again, in full. The Python facts of a document's
project are read off the loop when it opens, and its documents analysed again when they are."""

from __future__ import annotations

import asyncio
import os
from typing import TYPE_CHECKING

from lsprotocol import types
from pygls.uris import to_fs_path

from .. import custom_ops
from ..project import ProjectContext, pins_versions
from ..sources import SourceError, read_regular
from . import fact_reader
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


READ = "Read the Python files of the project at"  # the log's line when a project's reading ends


def warm_python(server: AscendLanguageServer, path: str | None) -> asyncio.Future | None:
    """Read the Python facts of an opened document's project, or of the workspace folder's (the
    flags it leaves off, the calls of its functions, the modules it imports under options), if not
    read yet, in a process of its own (fact_reader.py): the reading (2-3 s over transformers) then
    takes no time from the analyses, which do not wait for it (the server's projects are
    provisional); the open documents are analysed again when it ends. Where no process answers, a
    worker thread reads them. The read, or None."""
    project = server.projects.for_path(path, server.settings.for_path(path)) if path is not None else None
    if project is None or project.python_read:
        return None
    loop = asyncio.get_running_loop()

    def in_a_thread() -> None:
        project.read_python()
        release_memory()  # the read held every Python file's text at once

    async def read() -> None:
        began = loop.time()
        try:
            project.adopt_python(await fact_reader.read_apart(project.root, project.exclude, server.fact_readers))
        except fact_reader.ReadFailed as exc:
            server.scheduler.log_once(f"The project's Python files are read in the server ({exc}).",
                                      key="fact-reader")
            await loop.run_in_executor(None, in_a_thread)
        server.window_log_message(types.LogMessageParams(
            types.MessageType.Log, f"{READ} {project.root} ({loop.time() - began:.1f} s)"))
        if project.seen_unread:
            analyse_again(server)
            server.scheduler.refresh_all()
            server.ask_to_pull()

    return asyncio.ensure_future(read())


def analyse_again(server: AscendLanguageServer) -> None:
    """Have the next analysis of every open document read it whole: what the project's files say changed."""
    for subject in server.documents.subjects.values():
        subject.base = None  # a statement the edit did not touch may read what changed (an op's kernels, a flag)


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
            analyse_again(server)
            server.settings.invalidate()
            server.settings_changed()

    asyncio.get_running_loop().run_in_executor(None, rescan).add_done_callback(done)


def register(server: AscendLanguageServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(params: types.DidSaveTextDocumentParams) -> None:
        changed(server, [to_fs_path(params.text_document.uri)])
