"""What is checked, as the engine's text: Python files in any PEP 263 encoding, notebooks
(their code cells joined, magics made `pass` with the line in a comment); and the bytes to write back for fixed text,
in the file's own encoding, line breaks and notebook form."""

from __future__ import annotations

import difflib
import io
import json
import re
import tokenize
from dataclasses import dataclass, field

from .engine.text import split_lines
from .sources import MAX_BYTES, SourceError, read_regular

CELL_MARK = "# %% ascend-lsp cell {index}\n"
CELL_MARK_RE = re.compile(r"^# %% ascend-lsp cell (\d+)$")
# A line magic or shell escape, alone (`%pip ...`, `!ls`) or assigned (`out = !ls`, `t = %time f()`), after its
# indentation; or `pip install ...` without its `%`, which IPython's automagic (on by default) runs as `%pip`.
MAGIC = re.compile(r"^([ \t\f]*)(?:(?:[A-Za-z_][\w.]*(?:\s*,\s*[A-Za-z_][\w.]*)*\s*=\s*)?[%!]"
                   r"|(?:pip|conda)[ \t]+(?:install|uninstall|list|show|freeze|download)\b)")
FIRST_LINES = re.compile(rb"[^\r\n]*(?:\r\n|\r|\n)?[^\r\n]*(?:\r\n|\r|\n)?")
MAGIC_MARK = "pass  # ascend-lsp magic: "  # a magic as a statement that does nothing, restored on write
CONTINUED_MARK = "# ascend-lsp magic: "  # a line a magic's `\` continues: a comment, which no block notices
HIDDEN_MAGIC = re.compile(r"^([ \t\f]*)(?:pass  )?" + re.escape(CONTINUED_MARK))


# the cell magics whose body IPython runs as Python (`%%time`); any other's (`%%bash`, `%%writefile`) is not Python
PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun", "debug"})
CELL_MAGIC = re.compile(r"%%(\w+)")


def hide_magics(code: str) -> list[str]:
    """A code cell's lines as Python, one for one: a magic becomes `pass` at its indentation, as
    IPython makes it a call there (`if in_colab:` whose body is `!pip install ...` keeps a body),
    the line kept in a comment, and the lines its final backslash continues become comments; so does every
    line of a cell whose cell magic's body is no Python (`%%bash`)."""
    lines = split_lines(code)
    cell = CELL_MAGIC.match(code)
    if cell is not None and cell.group(1) not in PYTHON_CELL_MAGICS:
        return [MAGIC_MARK + line for line in lines]
    out, continued = [], False
    for line in lines:
        if continued:
            out.append(CONTINUED_MARK + line)
        elif (found := MAGIC.match(line)) is not None:
            out.append(found.group(1) + MAGIC_MARK + line[found.end(1):])
        else:
            out.append(line)
            continue
        continued = line.rstrip("\r\n").endswith("\\")  # `!pip install \` goes on, as IPython reads it
    return out


def show_magic(line: str) -> str:
    """A line of hide_magics undone."""
    found = HIDDEN_MAGIC.match(line)
    return line if found is None else found.group(1) + line[found.end():]


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


def read_source(path: str, limit: int = MAX_BYTES) -> Source:
    raw, mtime_ns = read_regular(path, limit)
    nul = raw.find(b"\0")
    if nul >= 0:
        raise SourceError(f"binary file (a NUL byte at byte {nul}), not Python source")
    if path.endswith(".ipynb"):
        return _notebook(path, raw, mtime_ns)
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(_first_lines(raw)).readline)
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
    return Source(path, text, raw, mtime_ns, "utf-8" if encoding == "utf-8-sig" else encoding, bom, newline)


def _crlf(old: str, new: str) -> str:
    """`new` (fixed `old`, a file with CRLF line breaks) with CRLF breaks where the fixes
    wrote LF ones. A line the fixes did not touch keeps its own break, LF in a file that
    mixes them; an edited line keeps the break it had; an added line gets CRLF."""
    if old.count("\n") == old.count("\r\n"):  # CRLF only: every LF is one the fixes wrote
        return new.replace("\r\n", "\n").replace("\n", "\r\n")
    before, after = split_lines(old), split_lines(new)
    head = 0  # the lines before the first change and after the last are kept as they are
    while head < min(len(before), len(after)) and before[head] == after[head]:
        head += 1
    tail = 0
    while tail < min(len(before), len(after)) - head and before[-1 - tail] == after[-1 - tail]:
        tail += 1
    old_mid, new_mid = before[head:len(before) - tail], after[head:len(after) - tail]
    out = after[:head]
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old_mid, new_mid, autojunk=False).get_opcodes():
        lines = new_mid[j1:j2]
        if op == "equal":
            out += lines
            continue
        # lines edited in place pair up with the old ones; lines added get CRLF
        ends = [line[len(line.rstrip("\r\n")):] for line in old_mid[i1:i2]] if i2 - i1 == j2 - j1 else []
        for k, line in enumerate(lines):
            body = line.rstrip("\r\n")
            out.append(line if body == line else body + (ends[k] if ends and ends[k] else "\r\n"))
    return "".join(out + after[len(after) - tail:])


def _first_lines(raw: bytes) -> bytes:
    """The first two lines, with `\n` breaks: where PEP 263 looks for a coding cookie.
    `readline` would break only at `\n`, so a file with `\r` breaks would be searched
    whole, and a `coding: x` in any comment would count."""
    return b"".join(line.rstrip(b"\r\n") + b"\n" for line in FIRST_LINES.match(raw).group().splitlines(True))


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
        lines = hide_magics(code)
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
        data = text if source.newline == "\n" else _crlf(source.text, text)
        return (b"\xef\xbb\xbf" if source.bom else b"") + data.encode(source.encoding)
    notebook = json.loads(json.dumps(source.notebook))
    original = {index: line for index, line in source.cells}
    current, chunks = None, {}  # type: tuple[int | None, dict[int, list[str]]]
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
        lines = [show_magic(line) for line in lines]
        old = notebook["cells"][index]["source"]
        if lines and not ("".join(old) if isinstance(old, list) else old).endswith("\n"):
            lines[-1] = lines[-1].removesuffix("\n")
        notebook["cells"][index]["source"] = lines
    indent = 1 if b'\n "' in source.raw[:200] else 2
    return (json.dumps(notebook, indent=indent, ensure_ascii=False) + "\n").encode("utf-8")
