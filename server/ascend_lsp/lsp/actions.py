"""Code actions: each diagnostic's fixes and its `# noqa` edit, read from the `Diagnostic.data`
of the current analysis (never from the diagnostic the client sends back, whose edits may be
for an older text), each edit naming the version it was made for; "Fix all ascend-lsp findings" (`source.fixAll.ascend-lsp`, safe fixes
only, in the `fix-style` the settings name), computed on `codeAction/resolve` when the client
can resolve edits. A finding fixed in both styles offers both: "Fix for NPU", "Fix portably"."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import TYPE_CHECKING

from lsprotocol import types

from ..analysis import fix_text
from ..engine.model import Applicability
from .diagnostics import SOURCE, diagnostic_key
from ..engine.text import line_texts
from .edits import changed_span, line_col
from .notebooks import join_cells, split_cells
from .port_action import PORT_KIND, port_action, resolve_port
from .positions import Lines, range_from_json

if TYPE_CHECKING:
    from .diagnostics import Result
    from .language_server import AscendLanguageServer
    from .snapshot import Snapshot

QUICK_FIX = types.CodeActionKind.QuickFix
FIX_ALL = "source.fixAll.ascend-lsp"
FIX_ALL_TITLE = "Fix all ascend-lsp findings"


def asked_for(only: Sequence[str] | None, kind: str) -> bool:
    """Whether the client's `only` filter lets actions of `kind` through."""
    return only is None or any(kind == o or kind.startswith(o + ".") for o in only)


def register(server: AscendLanguageServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION,
                    types.CodeActionOptions(code_action_kinds=[QUICK_FIX, FIX_ALL, PORT_KIND], resolve_provider=True))
    async def code_action(params: types.CodeActionParams) -> list[types.CodeAction] | None:
        uri = params.text_document.uri
        subject = server.documents.find(server.workspace, uri)
        if subject is None:
            return None
        result = await server.scheduler.current(subject)
        if result is None or uri not in result.reports or result.unchecked:
            return None
        only = params.context.only
        actions: list[types.CodeAction] = []
        if asked_for(only, QUICK_FIX):
            current = result.reports[uri].by_key
            for diagnostic in params.context.diagnostics:
                # A diagnostic of an older version (an editor moves its range with the edits made
                # since, and keeps its data) is answered with the current one at its place: its
                # own edits are for the text it was made from.
                now = current.get(diagnostic_key(diagnostic)) if diagnostic.source == SOURCE else None
                if now is not None and isinstance(now.data, dict):
                    actions.extend(quick_fixes(server, uri, now, result))
        if asked_for(only, FIX_ALL) and any(f.fix and f.fix.applicability is Applicability.SAFE
                                         for f in result.analysis.findings):
            action = types.CodeAction(FIX_ALL_TITLE, kind=FIX_ALL, data={"fixAll": uri})
            if not can_resolve_edits(server):
                action.edit = await fix_all_edit(server, uri)
            actions.append(action)
        if not subject.notebook and asked_for(only, PORT_KIND) and (port := port_action(server, uri)) is not None:
            if port.data and not can_resolve_edits(server):
                # no resolve: port only when refactorings are asked for, not on every cursor move
                port = await resolve_port(server, port) if only else None
            if port is not None:
                actions.append(port)
        return actions

    @server.feature(types.CODE_ACTION_RESOLVE)
    async def resolve(action: types.CodeAction) -> types.CodeAction:
        if isinstance(action.data, dict) and "fixAll" in action.data and action.edit is None:
            action.edit = await fix_all_edit(server, action.data["fixAll"])
        if isinstance(action.data, dict) and "port" in action.data and action.edit is None:
            action = await resolve_port(server, action)
        return action


def can_resolve_edits(server: AscendLanguageServer) -> bool:
    caps = server.client_capabilities.text_document
    support = caps and caps.code_action and caps.code_action.resolve_support
    return bool(support and "edit" in support.properties)


# A finding fixed in both styles (rules/portable_fixes.py) names each action's style.
STYLE_TITLES = {"npu": "Fix for NPU: ", "portable": "Fix portably: "}


def titled(fix: dict) -> str:
    prefix = STYLE_TITLES.get(fix.get("style", ""), "")
    title = fix["title"]
    return title if not prefix or title.startswith(prefix) else prefix + title


def quick_fixes(server: AscendLanguageServer, uri: str, diagnostic: types.Diagnostic,
                result: Result) -> list[types.CodeAction]:
    """The fixes and the noqa edit of `diagnostic`, an item of `result`'s report for `uri`."""
    actions = []
    preferred = True
    for fix in diagnostic.data.get("fixes", ()):
        edits: dict[str, list[types.TextEdit]] = {}
        for edit in fix["edits"]:
            edits.setdefault(edit.get("uri", uri), []).append(types.TextEdit(range_from_json(edit["range"]), edit["newText"]))
        actions.append(types.CodeAction(titled(fix), kind=QUICK_FIX, diagnostics=[diagnostic],
                                        is_preferred=fix["safe"] and preferred,
                                        edit=workspace_edit(server, edits, result.snapshot)))
        preferred = preferred and not fix["safe"]  # one preferred fix per diagnostic
    noqa = diagnostic.data.get("noqa")
    if noqa:
        edit = types.TextEdit(range_from_json(noqa["range"]), noqa["newText"])
        actions.append(types.CodeAction(f"Ignore {diagnostic.code} on this line (# noqa)", kind=QUICK_FIX,
                                        diagnostics=[diagnostic], edit=workspace_edit(server, {uri: [edit]},
                                                                                      result.snapshot)))
    return actions


def workspace_edit(server: AscendLanguageServer, edits: dict[str, list[types.TextEdit]],
                   snapshot: Snapshot) -> types.WorkspaceEdit:
    """Versioned document changes where the client takes them, each with the version of the
    text the edits were made from (the analysed snapshot's, not the document's now), so the
    client refuses one made stale by an edit since."""
    caps = server.client_capabilities.workspace
    if caps and caps.workspace_edit and caps.workspace_edit.document_changes:
        versions = {view.uri: view.version for view in snapshot.views}
        return types.WorkspaceEdit(document_changes=[
            types.TextDocumentEdit(types.OptionalVersionedTextDocumentIdentifier(uri, versions.get(uri)), list(items))
            for uri, items in edits.items()])
    return types.WorkspaceEdit(changes=edits)


async def fix_all_edit(server: AscendLanguageServer, uri: str) -> types.WorkspaceEdit | None:
    """All safe fixes of the document (or notebook) `uri` belongs to, as minimal edits."""
    subject = server.documents.find(server.workspace, uri)
    result = await server.scheduler.current(subject) if subject is not None else None
    if result is None or result.unchecked:
        return None
    snapshot = result.snapshot
    loop = asyncio.get_running_loop()
    fixed = await loop.run_in_executor(server.scheduler.pool, fix_text, snapshot.text, snapshot.settings, snapshot.path)
    if fixed.text == snapshot.text:
        return None
    if not subject.notebook:
        return workspace_edit(server, {uri: [minimal_edit(snapshot.text, fixed.text, snapshot.encoding)]}, snapshot)
    notebook = server.workspace.get_notebook_document(notebook_uri=subject.uri)
    _, cells = join_cells(notebook, server.workspace)
    edits = {}
    for cell_uri, code in split_cells(fixed.text, cells).items():
        old = server.workspace.text_documents[cell_uri].source
        if code != old:
            edits[cell_uri] = [minimal_edit(old, code, snapshot.encoding)]
    return workspace_edit(server, edits, snapshot) if edits else None


def minimal_edit(old: str, new: str, encoding: str) -> types.TextEdit:
    start, end, text = changed_span(old, new)
    lines = line_texts(old)
    placed = Lines(lines, encoding)
    return types.TextEdit(types.Range(placed.position(*line_col(lines, old, start)),
                                      placed.position(*line_col(lines, old, end))), text)
