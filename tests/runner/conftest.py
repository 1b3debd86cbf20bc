"""Shared fixtures: one warm RunnerPool for the whole session (importing torch costs ~2 s)."""

from __future__ import annotations

import sys
import textwrap

import pytest

from ascend_lsp.runner import Job, RunnerPool


@pytest.fixture(scope="session")
def pool():
    with RunnerPool(default_interpreter=sys.executable) as shared:
        yield shared


@pytest.fixture
def snippet(tmp_path):
    """Write a snippet file and return a Job factory for it."""

    def make(text: str, function: str | None = None, **options) -> Job:
        path = tmp_path / "snippet_under_test.py"
        path.write_text(textwrap.dedent(text), encoding="utf-8")
        options.setdefault("timeout", 120)
        return Job(path=str(path), function=function, **options)

    return make

