"""Hover: what the mapping tables know of the API under the cursor (NPU support for the
configured chip and version, dtype limits, replacement), its name resolved through the
file's imports."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING
from collections.abc import Callable

from lsprotocol import types

from ..engine.config import Settings
from ..engine.analyzer import tables_for
from ..knowledge.files import TableError
from ..rules import RULES, RULE_SET
from ..rules.pages import rule_url
from ..rules.chip_features import chip_table, feature_of
from ..rules.describe import describe_api
from ..rules.docs import page
from ..rules.ms1xx_api import describe_counterpart
from .documents import too_large
from ..engine.text import line_texts
from .run_marks import def_name_at, layer_hover
from .positions import from_units, to_units

if TYPE_CHECKING:
    from .language_server import AscendLanguageServer

DOTTED = re.compile(r"[A-Za-z_]\w*(?:\s*\.\s*[A-Za-z_]\w*)*")
IMPORT_LINE = re.compile(r"\s*(?:from|import)\s")
CODE = re.compile(r"\b([A-Z]+\d{3})\b")

# Each section turns a qualified name into markdown lines.
Section = Callable[[str, Settings], list[str]]


def torch_npu_section(qualname: str, settings: Settings) -> list[str]:
    try:
        lines = describe_api(qualname, settings)
    except TableError:
        return []
    return [f"- {_linked(line, settings)}".replace("\n", "\n  ") for line in lines]


def _linked(line: str, settings: Settings) -> str:
    """`line` with each rule code in it linked to the rule's page."""
    return CODE.sub(lambda m: f"[{m.group(1)}]({rule_url(m.group(1), settings.docs_url)})"
                    if m.group(1) in RULES else m.group(0), line)


def rule_page(code: str, settings: Settings) -> str:
    """The rule's whole page, for a hover on its code (a `# noqa: NPU102`): readable offline."""
    return f"{page(RULES[code])}\n[{code} page]({rule_url(code, settings.docs_url)})"


def mindspore_section(qualname: str, settings: Settings) -> list[str]:
    try:
        entry = tables_for(settings, RULE_SET).counterparts.get(qualname)
    except TableError:
        return []
    return describe_counterpart(entry) if entry is not None else []


def chip_section(qualname: str, settings: Settings) -> list[str]:
    """For dtypes and checks whose support differs by chip (bf16, FP8, inf/nan): the chip table."""
    if settings.target != "torch_npu" or feature_of(qualname) is None:
        return []
    try:
        return ["Ascend chips (`chip` setting; mappings/platform/chips.toml):", "", *chip_table(settings)]
    except TableError:
        return []


SECTIONS: tuple[Section, ...] = (torch_npu_section, mindspore_section, chip_section)


def name_at(line: str, col: int) -> tuple[str, int, int] | None:
    """The dotted name whose word is under `col`, cut after that word, and the span of the word."""
    for match in DOTTED.finditer(line):
        if match.start() <= col <= match.end():
            text = match.group()
            for word in re.finditer(r"\w+", text):
                start, end = match.start() + word.start(), match.start() + word.end()
                if start <= col <= end:
                    return re.sub(r"\s+", "", text[:word.end()]), start, end
    return None


def qualify(dotted: str, line: str, scope) -> str:
    """`dotted` resolved through the imports; a method on a value becomes `.name`."""
    if IMPORT_LINE.match(line):
        return dotted  # module paths in import statements are already qualified
    root, _, rest = dotted.partition(".")
    binding = scope.lookup(root) if scope is not None else None
    if binding is not None:
        return f"{binding}.{rest}" if rest else binding
    return "." + dotted.rpartition(".")[2] if rest else dotted


def register(server: AscendLanguageServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def hover(params: types.HoverParams) -> types.Hover | None:
        uri, position = params.text_document.uri, params.position
        subject = server.documents.find(server.workspace, uri)
        document = server.workspace.text_documents.get(uri)
        if subject is None or document is None or subject.result is None or too_large(document.source):
            return None
        lines = line_texts(document.source)
        if position.line >= len(lines):
            return None
        line = lines[position.line]
        if (table := layer_hover(server.runs.marks.get(uri, {}), position.line)) is not None:
            return types.Hover(types.MarkupContent(types.MarkupKind.Markdown, table))
        encoding = server.workspace.position_encoding
        found = name_at(line, from_units(line, position.character, encoding))
        if found is None:
            return None
        dotted, start, end = found
        span = types.Range(types.Position(position.line, to_units(line, start, encoding)),
                           types.Position(position.line, to_units(line, end, encoding)))
        if dotted in RULES and CODE.fullmatch(dotted):
            return types.Hover(types.MarkupContent(types.MarkupKind.Markdown,
                                                   rule_page(dotted, subject.result.snapshot.settings)), span)
        mark = server.runs.marks.get(uri, {}).get(dotted)
        if mark is not None and def_name_at(line, dotted):
            return types.Hover(types.MarkupContent(types.MarkupKind.Markdown, mark.markdown))
        result = subject.result
        module = result.analysis.module
        qualname = qualify(dotted, line, module.scope if module else None)
        sections = [lines_ for section in SECTIONS if (lines_ := section(qualname, result.snapshot.settings))]
        if not sections:
            return None
        text = "\n\n".join([f"**`{qualname}`**", *("\n".join(s) for s in sections)])
        return types.Hover(types.MarkupContent(types.MarkupKind.Markdown, text), span)
