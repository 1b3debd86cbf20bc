"""A project's Python files read in a process of their own (lsp/fact_reader.py): the same facts as
a reading in the server, no process left behind, and a clear failure the server falls back from."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from ascend_lsp.lsp import fact_reader
from ascend_lsp.project import ProjectContext

FILES = {
    "pkg/__init__.py": "",
    "pkg/config.py": "from dataclasses import dataclass\n\n\n@dataclass\nclass Config:\n    compile_model: bool = False\n",
    "pkg/npu.py": "import torch_npu\nfrom torch_npu.contrib import transfer_to_npu\n",
    "pkg/model.py": "def build(device='cuda'):\n    return device\n",
    "train.py": "from pkg.model import build\n\nbuild('cuda')\n",
}


def project(root: Path) -> ProjectContext:
    for name, text in FILES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return ProjectContext(str(root))


def test_the_child_reads_what_the_server_would(tmp_path: Path) -> None:
    here = project(tmp_path)
    running: set = set()
    facts = asyncio.run(fact_reader.read_apart(here.root, here.exclude, running))
    apart = ProjectContext(here.root, provisional=True)
    apart.adopt_python(facts)
    assert apart.python_digest() == here.python_digest()
    assert apart.flags.default_off("compile_model") == (str(tmp_path / "pkg/config.py"), 5)
    assert apart.imports_transfer_to_npu
    assert running == set()  # it ended with its reading


def test_a_child_that_does_not_answer_is_a_failure_named(tmp_path: Path, monkeypatch) -> None:
    here = project(tmp_path)
    monkeypatch.setattr(sys, "executable", "/bin/false")
    with pytest.raises(fact_reader.ReadFailed, match="exit 1"):
        asyncio.run(fact_reader.read_apart(here.root, here.exclude, set()))
    monkeypatch.setattr(sys, "executable", str(tmp_path / "no-such-python"))
    with pytest.raises(fact_reader.ReadFailed, match="no process"):
        asyncio.run(fact_reader.read_apart(here.root, here.exclude, set()))
