"""Document and notebook sync: open subjects, note which lines each change touched, and
hand them to the scheduler."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types

from . import project_ops
from .documents import subject_path
from .edits import compose
from .text_store import Document

if TYPE_CHECKING:
    from .language_server import AscendLanguageServer


def register(server: AscendLanguageServer) -> None:
    documents, scheduler = server.documents, server.scheduler

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(params: types.DidOpenTextDocumentParams) -> None:
        item = params.text_document
        if server.workspace.get_notebook_document(cell_uri=item.uri) is not None:
            return
        scheduler.changed(documents.open(item.uri), item.version, None, delay=0)
        project_ops.warm_python(server, subject_path(item.uri))

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(params: types.DidChangeTextDocumentParams) -> None:
        document = server.workspace.text_documents.get(params.text_document.uri)
        steps = document.take_edits() if isinstance(document, Document) else [None]
        subject = documents.subjects.get(params.text_document.uri)
        if subject is None:
            return
        edit = None
        for index, step in enumerate(steps):
            if step is None:
                edit = None
                break
            edit = step if index == 0 else compose(edit, step)
        scheduler.changed(subject, params.text_document.version, edit)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(params: types.DidCloseTextDocumentParams) -> None:
        subject = documents.close(params.text_document.uri)
        if subject is not None:
            scheduler.closed(subject)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_OPEN)
    def notebook_open(params: types.DidOpenNotebookDocumentParams) -> None:
        notebook = params.notebook_document
        scheduler.changed(documents.open(notebook.uri, notebook=True), notebook.version, None, delay=0)
        project_ops.warm_python(server, subject_path(notebook.uri))

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_CHANGE)
    def notebook_change(params: types.DidChangeNotebookDocumentParams) -> None:
        subject = documents.subjects.get(params.notebook_document.uri)
        if subject is not None:
            scheduler.changed(subject, params.notebook_document.version, None)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_CLOSE)
    def notebook_close(params: types.DidCloseNotebookDocumentParams) -> None:
        subject = documents.close(params.notebook_document.uri)
        if subject is not None:
            scheduler.closed(subject)
