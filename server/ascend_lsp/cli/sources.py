"""Reading what is checked: Python files (any encoding PEP 263 allows) and notebooks."""

from __future__ import annotations

import io
import json
import os
import re
import tokenize
from dataclasses import dataclass, field

from ..engine.text import split_lines

CELL_MARK = "# %% ascend-lsp cell {index}\n"
CELL_MARK_RE = re.compile(r"^# %% ascend-lsp cell (\d+)$")
MAGIC = re.compile(r"^\s*[%!]")
MAGIC_MARK = "# ascend-lsp magic: "  # a magic kept as a comment, restored on write


class SourceError(Exception):
    """The file cannot be checked; the message says why, for a person."""


@dataclass(slots=True)
class Source:
    path: str
    text: str  # what the engine sees (a notebook's code cells joined)
    raw: bytes  # exactly what was read, to detect changes before writing
    mtime_ns: int
    encoding: str = "utf-8"
    bom: bool = False
    newline: str = "\n"
    notebook: dict | None = None  # the parsed notebook, for writing fixes back
    cells: list[tuple[int, int]] = field(default_factory=list)  # (cell index, first line of its code)

    def location(self, line: int) -> tuple[str, int]:
        """(cell label or "", 0-based line within it) for a 0-based line of `text`."""
        if self.notebook is None:
            return "", line
        label, first = "", 0
        for cell, start in self.cells:
            if start > line:
                break
            label, first = f"cell {cell + 1}", start
        return label, line - first


def read_source(path: str) -> Source:
    try:
        with open(path, "rb") as handle:
            stat = os.fstat(handle.fileno())
            raw = handle.read()
    except OSError as exc:
        raise SourceError(f"cannot read: {exc.strerror or exc}") from None
    if b"\0" in raw[:8192]:
        raise SourceError("binary file (contains NUL bytes), not Python source")
    if path.endswith(".ipynb"):
        return _notebook(path, raw, stat.st_mtime_ns)
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(raw).readline)
    except SyntaxError as exc:
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError as bad:
            raise SourceError(f"not valid utf-8 text ({bad.reason} at byte {bad.start}); declare the encoding "
                              "with a `# -*- coding: ... -*-` line or re-save as UTF-8") from None
        raise SourceError(f"unknown source encoding: {exc}") from None
    bom = raw.startswith(b"\xef\xbb\xbf")
    try:
        text = raw.decode("utf-8-sig" if encoding == "utf-8-sig" else encoding)
    except (UnicodeDecodeError, LookupError) as exc:
        raise SourceError(f"not valid {encoding} text ({exc.reason if hasattr(exc, 'reason') else exc}); "
                          "declare the encoding with a `# -*- coding: ... -*-` line or re-save as UTF-8") from None
    newline = "\r\n" if "\r\n" in text[:10000] else "\n"
    return Source(path, text, raw, stat.st_mtime_ns, "utf-8" if encoding == "utf-8-sig" else encoding, bom, newline)


def _notebook(path: str, raw: bytes, mtime_ns: int) -> Source:
    try:
        notebook = json.loads(raw.decode("utf-8-sig"))
        cells = notebook["cells"]
    except (ValueError, KeyError, TypeError) as exc:
        raise SourceError(f"not a Jupyter notebook: {exc}") from None
    language = notebook.get("metadata", {}).get("language_info", {}).get("name", "python")
    if language != "python":
        raise SourceError(f"notebook language is {language!r}, not Python")
    parts, starts, line = [], [], 0
    for index, cell in enumerate(cells):
        if cell.get("cell_type") != "code":
            continue
        code = "".join(cell.get("source", "")) if isinstance(cell.get("source"), list) else cell.get("source", "")
        # Magics and shell escapes are not Python: comment them out, keeping line numbers.
        lines = [MAGIC_MARK + text if MAGIC.match(text) else text for text in split_lines(code)]
        if lines and not lines[-1].endswith(("\n", "\r")):
            lines[-1] += "\n"
        parts.append(CELL_MARK.format(index=index))
        line += 1
        starts.append((index, line))
        parts.extend(lines)
        line += len(lines)
    return Source(path, "".join(parts), raw, mtime_ns, notebook=notebook, cells=starts)


def encode(source: Source, text: str) -> bytes:
    """The bytes to write for new engine text, in the file's own form."""
    if source.notebook is None:
        data = text if source.newline == "\n" else text.replace("\r\n", "\n").replace("\n", "\r\n")
        return (b"\xef\xbb\xbf" if source.bom else b"") + data.encode(source.encoding)
    notebook = json.loads(json.dumps(source.notebook))
    original = {index: line for index, line in source.cells}
    current, chunks = None, {}
    for line in split_lines(text):
        mark = CELL_MARK_RE.match(line.rstrip("\r\n"))
        if mark:
            current = int(mark.group(1))
            chunks[current] = []
        elif current is not None:
            chunks[current].append(line)
    for index, lines in chunks.items():
        if index not in original:
            continue
        lines = [line[len(MAGIC_MARK):] if line.startswith(MAGIC_MARK) else line for line in lines]
        old = notebook["cells"][index]["source"]
        if lines and not ("".join(old) if isinstance(old, list) else old).endswith("\n"):
            lines[-1] = lines[-1].removesuffix("\n")
        notebook["cells"][index]["source"] = lines
    indent = 1 if b'\n "' in source.raw[:200] else 2
    return (json.dumps(notebook, indent=indent, ensure_ascii=False) + "\n").encode("utf-8")
