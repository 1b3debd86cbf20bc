"""A 1 MiB paste: answered, and the memory its analysis used is given back once the
paste is undone (glibc keeps freed heap memory for the process unless asked)."""

from __future__ import annotations

import re
from pathlib import Path

from fuzz.lsp_stdio import LspProcess

from .helpers import EXAMPLE

# what a paste may leave behind; it left 70 MiB before memory was given back, and leaves 39-46 MiB
# now (objects that live on past the paste hold parts of the heap: the figure moves by 5 MiB between runs)
GROWTH_MIB = 50


def rss_mib(pid: int) -> float:
    return int(re.search(r"VmRSS:\s+(\d+) kB", Path(f"/proc/{pid}/status").read_text()).group(1)) / 1024


def test_memory_of_a_1_mib_paste_is_released_after_undo(tmp_path: Path) -> None:
    example = EXAMPLE.read_text(encoding="utf-8")
    body = example[example.index("\ndef "):]
    paste = "".join(body.replace("def ", f"def v{n}_") for n in range((1 << 20) // len(body) + 1))
    server = LspProcess(str(tmp_path))
    server.initialize(tmp_path.as_uri())
    uri = (tmp_path / "a.py").as_uri()
    server.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1,
                                                            "text": example}})

    def pull() -> list:
        return server.request("textDocument/diagnostic", {"textDocument": {"uri": uri}}, timeout=120)["result"]["items"]

    small = len(pull())
    before = rss_mib(server.proc.pid)
    end = {"line": example.count("\n"), "character": 0}
    server.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2},
                                             "contentChanges": [{"range": {"start": end, "end": end}, "text": paste}]})
    assert len(pull()) > 100 * small
    server.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 3},
                                             "contentChanges": [{"text": example}]})
    assert len(pull()) == small
    growth = rss_mib(server.proc.pid) - before
    assert growth < GROWTH_MIB, growth
    assert server.close() == 0
