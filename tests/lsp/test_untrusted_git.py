"""The server's workspace diagnostics in an untrusted repository: nothing its `.git/config`
names runs, git is not run in the tree, and its ignore files are respected."""

from __future__ import annotations

import asyncio
import os
import shutil
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from ..cli.hostile_git import hostile_repository, logging_git
from .helpers import server_config, start

STATE = Path(os.environ.get("TMPDIR", "/tmp")) / f"ascend-lsp-untrusted-git-{os.getpid()}"


@pytest.fixture(scope="module")
def hostile() -> Path:
    """Made before the server starts, with the logging git its PATH begins with."""
    shutil.rmtree(STATE, ignore_errors=True)
    hostile_repository(STATE / "repo", STATE / "markers")
    logging_git(STATE / "bin", STATE / "git.log")
    yield STATE
    shutil.rmtree(STATE, ignore_errors=True)


@pytest_lsp.fixture(config=server_config(PATH=f"{STATE / 'bin'}{os.pathsep}{os.environ['PATH']}"))
async def client(lsp_client: LanguageClient, hostile):
    await start(lsp_client, "neovim", STATE / "repo", options={"trusted": False})
    yield
    await lsp_client.shutdown_session()


async def test_workspace_diagnostic_runs_nothing_the_repository_names(client, hostile):
    report = await asyncio.wait_for(client.workspace_diagnostic_async(types.WorkspaceDiagnosticParams([])), 60)
    assert sorted(os.listdir(hostile / "markers")) == []
    root = hostile / "repo"
    assert sorted(item.uri for item in report.items) == [(root / "kept.py").as_uri()]
    log = hostile / "git.log"
    runs = log.read_text().splitlines() if log.exists() else []
    assert [line for line in runs if str(root) in line] == []
