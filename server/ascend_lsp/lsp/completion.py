"""Completion of `torch.npu.`, `torch_npu.` and `torch_npu.npu.` members from the mapping
tables: the user's machine usually has neither package installed."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from lsprotocol import types

from ..engine.analyzer import tables_for
from ..knowledge.api_tables import Tables
from ..knowledge.files import TableError
from .documents import subject_path, too_large
from ..engine.text import line_texts
from ..rules import RULE_SET
from .positions import from_units

if TYPE_CHECKING:
    from .language_server import AscendLanguageServer

IDENTIFIER_PATH = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")
BEFORE_CURSOR = re.compile(r"(?<![\w.])([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)\.(\w*)$")
ROOTS = ("torch.npu", "torch_npu")
# torch_npu installs its `npu` module as `torch.npu`: the two spellings name one module.
ALIASES = (("torch_npu.npu.", "torch.npu."), ("torch.npu.", "torch_npu.npu."))


@dataclass(frozen=True, slots=True)
class Member:
    name: str
    qualname: str
    module: bool  # has members of its own
    doc: str


_catalogs: dict[int, tuple[Tables, dict]] = {}  # id → (tables kept alive, catalog)


def catalog(tables: Tables) -> dict[str, dict[str, Member]]:
    """Module qualified name → its members, from replacements and NPU names in the tables."""
    cached = _catalogs.get(id(tables))
    if cached is None:
        cached = _catalogs[id(tables)] = (tables, _build(tables))
    return cached[1]


def _build(tables: Tables) -> dict[str, dict[str, Member]]:
    docs: dict[str, str] = {}
    for entry in tables.apis.values():
        if entry.replacement and IDENTIFIER_PATH.fullmatch(entry.replacement):
            docs.setdefault(entry.replacement, f"Replaces `{entry.name}` ({entry.rule}).")
    for support in tables.support.values():
        if support.npu_name and IDENTIFIER_PATH.fullmatch(support.npu_name):
            docs.setdefault(support.npu_name, f"NPU form of `{support.name}` in the Ascend support list.")
    for name, doc in list(docs.items()):
        for old, new in ALIASES:
            if name.startswith(old):
                docs.setdefault(new + name[len(old):], doc)
    parents = {name.rpartition(".")[0] for name in docs}
    names = {prefix for name in docs for prefix in _prefixes(name)}
    out: dict[str, dict[str, Member]] = {}
    for name in sorted(names):
        parent, _, leaf = name.rpartition(".")
        if (parent.startswith(ROOTS) or parent == "torch_npu") and not leaf.startswith("_"):
            module = name in parents or name not in docs
            out.setdefault(parent, {})[leaf] = Member(leaf, name, module, docs.get(name, ""))
    return out


def _prefixes(name: str):
    parts = name.split(".")
    return (".".join(parts[:i]) for i in range(2, len(parts) + 1))


def members_for(module: str, tables: Tables) -> list[Member]:
    if not (module == "torch.npu" or module.startswith(("torch.npu.", "torch_npu"))):
        return []
    return list(catalog(tables).get(module, {}).values())


def register(server: AscendLanguageServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_COMPLETION, types.CompletionOptions(trigger_characters=["."]))
    def completion(params: types.CompletionParams) -> types.CompletionList | None:
        uri, position = params.text_document.uri, params.position
        document = server.workspace.text_documents.get(uri)
        subject = server.documents.find(server.workspace, uri)
        if document is None or subject is None or too_large(document.source):
            return None
        lines = line_texts(document.source)
        if position.line >= len(lines):
            return None
        line = lines[position.line]
        before = line[:from_units(line, position.character, server.workspace.position_encoding)]
        match = BEFORE_CURSOR.search(before)
        if match is None:
            return None
        root, _, rest = match.group(1).partition(".")
        module = subject.result.analysis.module if subject.result is not None else None
        binding = module.scope.lookup(root) if module is not None else None
        if binding is None and root in ("torch", "torch_npu"):
            binding = root  # not imported yet: the user is typing the import's use first
        if binding is None:
            return None
        settings = server.settings.for_path(subject_path(subject.uri))
        try:
            tables = tables_for(settings, RULE_SET)
        except TableError:
            return None
        members = members_for(f"{binding}.{rest}" if rest else binding, tables)
        if not members:
            return None
        items = [types.CompletionItem(
            label=m.name,
            kind=types.CompletionItemKind.Module if m.module else _kind(m.name),
            detail=m.qualname,
            documentation=types.MarkupContent(types.MarkupKind.Markdown, m.doc) if m.doc else None,
        ) for m in members]
        return types.CompletionList(is_incomplete=False, items=items)


def _kind(name: str) -> types.CompletionItemKind:
    return types.CompletionItemKind.Class if name[:1].isupper() else types.CompletionItemKind.Function
