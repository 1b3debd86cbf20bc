"""Pull diagnostics: `textDocument/diagnostic` for an open document or cell, and
`workspace/diagnostic` for the open ones plus the workspace's .py files on disk. A
report whose result id the client already holds answers "unchanged"."""

from __future__ import annotations

import asyncio
import os
import sys
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

from lsprotocol import types
from pygls.uris import from_fs_path

from ..analysis import analyze
from ..engine.config import Settings
from ..project import ProjectContext
from .diagnostics import SOURCE, Report, convert, unchecked_reports, workspace_files
from .documents import workspace_folders
from .snapshot import Snapshot, View

if TYPE_CHECKING:
    from .language_server import AscendLanguageServer


def register(server: AscendLanguageServer) -> None:
    disk = DiskReports()
    server.on_shutdown.append(lambda: disk.pool.shutdown(wait=False, cancel_futures=True))

    @server.feature(types.TEXT_DOCUMENT_DIAGNOSTIC,
                    types.DiagnosticOptions(identifier=SOURCE, inter_file_dependencies=False,
                                            workspace_diagnostics=True))
    async def document_diagnostic(params: types.DocumentDiagnosticParams) -> types.DocumentDiagnosticReport:
        uri = params.text_document.uri
        subject = server.documents.find(server.workspace, uri)
        result = await server.scheduler.current(subject) if subject is not None else None
        if result is None or uri not in result.reports:
            return types.RelatedFullDocumentDiagnosticReport(items=[])
        report = result.reports[uri]
        if params.previous_result_id == report.result_id:
            return types.RelatedUnchangedDocumentDiagnosticReport(result_id=report.result_id)
        return types.RelatedFullDocumentDiagnosticReport(items=report.items, result_id=report.result_id)

    @server.feature(types.WORKSPACE_DIAGNOSTIC)
    async def workspace_diagnostic(params: types.WorkspaceDiagnosticParams) -> types.WorkspaceDiagnosticReport:
        previous = {p.uri: p.value for p in params.previous_result_ids}
        items: list = []
        seen: set[str] = set()
        for subject in list(server.documents.subjects.values()):
            result = await server.scheduler.current(subject)
            if result is None:
                continue
            for view in result.snapshot.views:
                seen.add(view.uri)
                items.append(workspace_item(view.uri, view.version, result.reports[view.uri], previous))
        loop = asyncio.get_running_loop()
        settings_by_folder = {f: server.settings.for_path(os.path.join(f, "_"))
                              for f in workspace_folders(server.workspace)}
        paths = await loop.run_in_executor(disk.pool, workspace_files, settings_by_folder)
        encoding = server.workspace.position_encoding
        for path in paths:
            uri = from_fs_path(path)
            if uri in seen:
                continue
            settings = server.settings.for_path(path)  # on the loop: the store is not thread-safe
            report = await loop.run_in_executor(disk.pool, disk.report, path, uri, settings,
                                                server.settings.generation, encoding,
                                                server.projects.for_path(path, settings), server.related_information)
            if report is not None:
                items.append(workspace_item(uri, None, report, previous))
        return types.WorkspaceDiagnosticReport(items=items)


def workspace_item(uri: str, version: int | None, report: Report, previous: dict[str, str]):
    if previous.get(uri) == report.result_id:
        return types.WorkspaceUnchangedDocumentDiagnosticReport(uri=uri, version=version, result_id=report.result_id)
    return types.WorkspaceFullDocumentDiagnosticReport(uri=uri, version=version, items=report.items,
                                                       result_id=report.result_id)


class DiskReports:
    """Reports of files on disk, kept while the file and the settings are unchanged."""

    def __init__(self) -> None:
        # Its own single thread, so a workspace scan never queues ahead of open documents.
        self.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ascend-lsp-workspace")
        self._cache: dict[str, tuple[tuple, Report]] = {}

    def report(self, path: str, uri: str, settings: Settings, generation: int, encoding: str,
               project: ProjectContext | None, related: bool) -> Report | None:
        from ..source_codec import read_source
        from ..sources import SourceError

        try:
            stat = os.stat(path)
        except OSError:
            return None
        key = (stat.st_mtime_ns, stat.st_size, generation, encoding)
        cached = self._cache.get(path)
        if cached is not None and cached[0] == key:
            return cached[1]
        view = View(uri, 0, sys.maxsize, None)
        try:
            text = read_source(path).text
        except SourceError as exc:  # too large, a FIFO, binary: said on the file, as lsp-check says it
            snapshot = Snapshot(0, generation, "", path, settings, (view,), None, None, encoding)
            report = unchecked_reports(snapshot, str(exc))[uri]
        else:
            snapshot = Snapshot(0, generation, text, path, settings, (view,), None, None, encoding, related=related)
            report = convert(analyze(text, settings, path, project=project), snapshot)[uri]
        self._cache[path] = (key, report)
        return report
